"""The interventions diagnostic as model items, end to end: build -> `omniaudit judge` -> `audit interventions`."""

import json

import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.data_builders.interventions import answers
from omniaudit.data_builders.interventions.diagnostic_answers import read_predictions
from omniaudit.errors import InputError
from omniaudit.evaluation.interventions.audit import InterventionAuditConfig, audit_interventions, load_diagnostic

N_ITEMS, N_CLIPS = 42, 6  # the session dataset: 6 clips x (original x3, shift x2, mute, swap)


@pytest.fixture(scope="module")
def oracle_run(intervention_dataset, tmp_path_factory):
    """`omniaudit judge --config diagnostic --judge scripted:oracle`, exactly as a user runs it."""
    out = tmp_path_factory.mktemp("judge") / "oracle.jsonl"
    rc = main(["judge", "--dataset", str(intervention_dataset), "--config", "diagnostic", "--judge",
               "scripted:oracle", "--out", str(out)])
    assert rc == 0
    return out


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_judge_answers_every_diagnostic_item_free_form(oracle_run, intervention_dataset):
    rows = lines(oracle_run)
    targets = pd.read_parquet(next((intervention_dataset / "diagnostic").glob("*.parquet")), columns=["id", "target"])
    assert [r["id"] for r in rows] == targets["id"].tolist() and len(rows) == N_ITEMS
    assert [r["raw"] for r in rows] == targets["target"].tolist()  # the oracle answers with the reference text
    # free-form: generated text, never scored against an option list
    assert all(r["label"] is None and not r["parsed"] and r["order"] is None for r in rows)
    assert all(r.get("option_probs") is None and r.get("run", 0) == 0 for r in rows)


def test_audit_reads_the_judge_file_with_no_glue(oracle_run, intervention_dataset, tmp_path, capsys):
    """The rule-based extractor reads every reference answer as its target (the labelled-set and builder tests
    check it phrase by phrase), so the oracle is right on every row: 100% everywhere, no gap, no failure."""
    rc = main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(oracle_run),
               "--out", str(tmp_path / "rep"), "--n-resamples", "200"])
    assert rc == 0, capsys.readouterr().err
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert result["model"] == "oracle" and result["n_rows"] == N_ITEMS and result["n_source_clips"] == N_CLIPS
    assert all(result["dimensions"][d][c] == 100.0 for d in answers.DIMENSIONS for c in ("orig", "interv"))
    assert result["avg_gap"] == 0.0 and result["offset_mae"]["value"] == 0.0
    assert all(v == 0.0 for v in result["failure_modes"].values())
    assert all(c[k]["value"] == 1.0 for c in result["coverage"].values() for k in ("answered", "parsed"))
    assert result["dimensions"]["sync"]["n"] == {"orig": 6, "interv": 12}
    assert result.get("runs", {"n": 1})["n"] == 1  # the runner may write run 0 on every row
    assert "## Runs" not in (tmp_path / "rep" / "report.md").read_text()


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sampled_runs_are_averaged_per_item_before_the_clip_bootstrap(oracle_run, intervention_dataset, tmp_path):
    """Three runs at T=0.7: run 1 calls every shifted clip synchronized, run 2 lost its mute answers. Each item
    scores its mean over the runs: Shift (1 + 0 + 1) / 3, Mute (1 + 1 + 0) / 3; Swap and Originals 100%."""
    oracle = lines(oracle_run)
    rows = []
    for run in range(3):
        for r in oracle:
            if run == 2 and "/mute/" in r["id"]:
                continue
            raw = "The audio is synchronized with the video." if run == 1 and "/shift" in r["id"] else r["raw"]
            # rows of another harness (no provenance): a greedy run's provenance would contradict these settings
            kept = {k: v for k, v in r.items() if k != "provenance"}
            rows.append({**kept, "raw": raw, "run": run, "temperature": 0.7, "top_p": 0.95, "seed": 100 + run})
    path = write(tmp_path / "sampled.jsonl", rows[::-1])  # file order does not matter
    rc = main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(path),
               "--out", str(tmp_path / "rep"), "--n-resamples", "200"])
    assert rc == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    dims = result["dimensions"]
    assert dims["sync"]["orig"] == 100.0 and dims["sync"]["interv"] == pytest.approx(200 / 3)
    assert dims["existence"]["interv"] == pytest.approx(200 / 3) and dims["consistency"]["interv"] == 100.0
    assert result["avg_gap"] == pytest.approx((100 / 3 + 100 / 3 + 0) / 3)
    assert dims["sync"]["n"] == {"orig": 18, "interv": 36}  # answers: items x runs
    assert result["n_rows"] == N_ITEMS and result["n_source_clips"] == N_CLIPS  # clusters are clips, not runs
    assert result["failure_modes"]["offset_blindness"] == pytest.approx(1 / 3)  # 12 of 36 parsed shift answers
    assert result["coverage"]["existence"]["answered"]["value"] == pytest.approx(30 / 36)  # 12 rows x 3 runs, 6 lost
    runs = result["runs"]
    assert runs["n"] == 3 and list(runs["per_run"]) == ["0", "1", "2"]
    assert runs["per_run"]["1"]["sync"] == {"orig": 100.0, "interv": 0.0, "gap": 100.0}
    assert runs["per_run"]["2"]["existence"]["interv"] == 0.0 and runs["per_run"]["0"]["avg_gap"] == 0.0
    assert runs["avg_gap_over_runs"]["mean"] == pytest.approx(result["avg_gap"])
    assert runs["avg_gap_over_runs"]["sd"] == pytest.approx(pd.Series([0, 100 / 3, 100 / 3]).std())
    assert result["sampling"] == {"temperature": 0.7, "top_p": 0.95, "seed": [100, 101, 102]}
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "## Runs (3)" in report and "temperature = 0.7, top_p = 0.95" in report
    # CIs resample the 6 clips (all runs of a clip together); every clip has the same per-item means here
    lo, hi = dims["sync"]["ci"]["interv"]
    assert lo == hi == pytest.approx(200 / 3)


def test_judge_runs_feed_the_audit_with_their_sampling_settings(intervention_dataset, tmp_path):
    """`omniaudit judge --runs 3 --temperature 0.7 --seed 8` -> `audit interventions`, no file editing: three runs
    recorded with their settings (the oracle answers the same every run, so every run is perfect)."""
    pred = tmp_path / "oracle-t07.jsonl"
    assert main(["judge", "--dataset", str(intervention_dataset), "--config", "diagnostic", "--judge",
                 "scripted:oracle", "--out", str(pred), "--runs", "3", "--temperature", "0.7", "--top-p", "0.9",
                 "--seed", "8"]) == 0
    assert main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(pred),
                 "--out", str(tmp_path / "rep"), "--n-resamples", "100"]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert result["runs"]["n"] == 3 and list(result["runs"]["per_run"]) == ["0", "1", "2"]
    assert result["sampling"] == {"temperature": 0.7, "top_p": 0.9, "seed": [8, 9, 10]}  # numeric order
    assert result["avg_gap"] == 0.0 and result["dimensions"]["sync"]["n"] == {"orig": 18, "interv": 36}
    assert "temperature = 0.7" in (tmp_path / "rep" / "report.md").read_text()


def test_one_run_column_value_is_the_same_as_no_run_column(oracle_run, intervention_dataset, tmp_path):
    diag = load_diagnostic(intervention_dataset)
    config = InterventionAuditConfig(n_resamples=100)
    rows = [{k: v for k, v in r.items() if k != "run"} for r in lines(oracle_run)]
    plain = audit_interventions(diag, read_predictions(write(tmp_path / "plain.jsonl", rows), diag), config)
    one = audit_interventions(diag, read_predictions(
        write(tmp_path / "one.jsonl", [{**r, "run": 0} for r in rows]), diag), config)
    assert "runs" not in plain
    assert one["runs"]["n"] == 1 and one["runs"]["avg_gap_over_runs"]["sd"] is None
    assert {k: v for k, v in one.items() if k != "runs"} == plain


def test_a_run_without_answers_for_a_dimension_has_no_numbers_for_it(oracle_run, intervention_dataset, tmp_path):
    """As in the pooled table (a dimension nobody answered is n/a, not 0%): run 1 answered only the sync question."""
    bare = [{k: v for k, v in r.items() if k != "provenance"} for r in lines(oracle_run)]  # another harness's rows
    rows = [{**r, "run": 0} for r in bare]
    rows += [{**r, "run": 1} for r in bare if r["id"].endswith("/sync")]
    diag = load_diagnostic(intervention_dataset)
    res = audit_interventions(diag, read_predictions(write(tmp_path / "p.jsonl", rows), diag),
                              InterventionAuditConfig(n_resamples=100))
    second = res["runs"]["per_run"]["1"]
    assert second["sync"]["gap"] == 0.0 and second["existence"] == {"orig": None, "interv": None, "gap": None}
    assert second["avg_gap"] is None and res["runs"]["avg_gap_over_runs"] == {"mean": 0.0, "sd": None}
    assert res["dimensions"]["existence"]["interv"] == 50.0  # pooled: run 1's missing answers are wrong


def test_null_answers_from_a_server_are_unparsed_and_wrong(oracle_run, intervention_dataset, tmp_path):
    """A reply with no content (`raw` null or empty) is answered-but-unparsed: wrong, and visible in coverage."""
    rows = [{**r, "raw": None if "/mute/" in r["id"] else ("" if "/swap/" in r["id"] else r["raw"])}
            for r in lines(oracle_run)]
    diag = load_diagnostic(intervention_dataset)
    res = audit_interventions(diag, read_predictions(write(tmp_path / "p.jsonl", rows), diag),
                              InterventionAuditConfig(n_resamples=100))
    assert res["dimensions"]["existence"]["interv"] == 0.0 and res["dimensions"]["consistency"]["interv"] == 0.0
    assert res["coverage"]["existence"]["answered"]["value"] == 1.0
    assert res["coverage"]["existence"]["parsed"]["value"] == pytest.approx(6 / 12)


def test_response_column_wins_over_raw(intervention_dataset, tmp_path):
    diag = load_diagnostic(intervention_dataset)
    sync_id = diag.loc[diag["intervention"] == "original", "id"].iloc[0]
    path = write(tmp_path / "p.jsonl", [{"id": sync_id, "raw": "The audio is delayed by 2 s.",
                                         "response": "The audio is synchronized with the video."}])
    assert read_predictions(path, diag).set_index("id").loc[sync_id, "synced"] is True


@pytest.mark.parametrize(("rows", "match", "row"), [
    ([{"id": "ID", "raw": "x", "run": 0}, {"id": "ID", "raw": "y", "run": None}], "expected a run", 2),
    ([{"id": "ID", "raw": "x", "run": 0}, {"id": "ID", "raw": "y", "run": 0}], "duplicate id in the same run", 2),
    ([{"id": "ID", "raw": "x"}, {"id": "ID", "raw": "y"}], "duplicate id", 2),
    ([{"id": "ID", "raw": "x", "run": 0}, {"id": "nope", "raw": "y", "run": 1}], "id not in the dataset", 2),
    ([{"id": "ID", "label": None, "parsed": False}], "expected a 'response' column \\(or 'raw'", None),
])
def test_bad_prediction_files_name_the_row(intervention_dataset, tmp_path, rows, match, row):
    diag = load_diagnostic(intervention_dataset)
    first = diag["id"].iloc[0]
    path = write(tmp_path / "p.jsonl", [{**r, "id": first if r["id"] == "ID" else r["id"]} for r in rows])
    with pytest.raises(InputError, match=match) as err:
        read_predictions(path, diag)
    assert err.value.row == row


def test_the_same_id_in_two_runs_is_fine_and_the_llm_extractor_sees_every_run(intervention_dataset, tmp_path):
    diag = load_diagnostic(intervention_dataset)
    first = diag["id"].iloc[0]  # an Original's sync row
    path = write(tmp_path / "p.jsonl", [{"id": first, "raw": "free text", "run": run} for run in (1, 0)])
    # scripted:always-a picks the first option of the extractor's question: synchronized
    pred = read_predictions(path, diag, "scripted:always-a")
    got = pred[pred["id"] == first].set_index("run")
    assert list(got.index) == ["0", "1"] and got["synced"].tolist() == [True, True]
    assert len(pred) == 2 * N_ITEMS and pred["answered"].sum() == 2


def test_training_configs_are_refused_by_the_judge(intervention_dataset, tmp_path, capsys):
    rc = main(["judge", "--dataset", str(intervention_dataset), "--config", "dpo", "--judge", "scripted:oracle",
               "--out", str(tmp_path / "p.jsonl")])
    assert rc == 2 and "config 'dpo' is not a set of model items" in capsys.readouterr().err
    assert not (tmp_path / "p.jsonl").exists()


def _corrected(row) -> str:
    """A right answer in self-correcting prose: a first impression taken back, then the final claim."""
    if row["dimension"] == "sync":
        if row["target_synced"]:
            return "I thought the audio lagged, but no: it is perfectly synchronized with the video."
        way = "late" if row["target_direction"] == "delay" else "early"
        offset = abs(row["target_offset_s"])
        return f"At first it seemed synchronized, but the sound is actually {offset:.1f} seconds {way}."
    if row["dimension"] == "existence":
        if row["target_sound_present"]:
            return "At first I thought the clip was silent, but actually I hear a thud when the ball lands."
        return "I thought I heard a thud, but actually the video is completely silent."
    if row["target_match"]:
        return "At first the sound seemed out of place, but on closer listening it matches what I see."
    return "It seemed to match at first, but actually the sound comes from a different scene."


def test_a_right_model_answering_in_self_correcting_prose_has_no_gap(oracle_run, intervention_dataset, tmp_path):
    """Every answer right, each written as a first impression taken back: read as its final claim, Avg Gap 0."""
    targets = load_diagnostic(intervention_dataset).set_index("id")
    rows = [{**r, "raw": _corrected(targets.loc[r["id"]])} for r in lines(oracle_run)]
    res = audit_interventions(targets.reset_index(), read_predictions(write(tmp_path / "p.jsonl", rows),
                                                                      targets.reset_index()),
                              InterventionAuditConfig(n_resamples=100))
    assert res["avg_gap"] == 0.0
    assert all(res["dimensions"][d][c] == 100.0 for d in answers.DIMENSIONS for c in ("orig", "interv"))
