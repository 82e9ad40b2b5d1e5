"""``--report-to wandb`` on judge and audit commands, checked in the offline run files wandb writes (no network).

wandb 0.31 writes an offline run as ``WANDB_DIR/wandb/offline-run-*/run-*.wandb`` (a LevelDB-style log of protobuf
records: run, summary, history, artifact, exit) plus ``files/media`` (tables as ``*.table.json``, images as PNG).
:func:`offline_runs` reads those records back, so the tests see what a later ``wandb sync`` would upload.
"""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from wandb_records import logged_table, offline_runs

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation import tracking
from omniaudit.evaluation.interventions.entry import TEMPORAL

pytest.importorskip("wandb")


# --- end to end through the CLI --------------------------------------------------------------------------------------

def test_preference_audit_logs_metrics_tables_figures_and_artifacts(offline, tmp_path):
    from omniaudit.data_builders.preference import SyntheticSpec, synthesize

    raw = synthesize(SyntheticSpec(n_pairs=240))  # what `audit preference --pairs 240` builds
    longer = (raw["a1"].str.len() >= raw["a2"].str.len()).map({True: "a1", False: "a2"})
    pd.concat([pd.DataFrame({"name": raw["name"], "order": "ab", "label": longer}),  # ba: always the second shown
               pd.DataFrame({"name": raw["name"], "order": "ba", "label": "a1"})]).to_csv(tmp_path / "longer.csv")
    out = tmp_path / "audit"
    rc = main(["audit", "preference", "--pairs", "240", "--n-resamples", "200", "--judges",
               f"longer={tmp_path / 'longer.csv'}", "--out", str(out), "--report-to", "wandb",
               "--project", "shortcuts", "--run-name", "pref-demo"])
    assert rc == 0
    audit = json.loads((out / "audit.json").read_text())
    run = offline_runs(offline)["pref-demo"]
    assert run["project"] == "shortcuts" and run["job_type"] == "audit" and run["tags"] == ["audit", "preference"]
    assert run["exit_code"] == 0
    assert run["config"]["n_resamples"] == 200 and run["config"]["pairs"] == 240
    summary = run["summary"]
    # headline metrics, flattened from audit.json
    for name in ("length_lr", "winrate_rule", "longer"):
        for slice_name in ("full", "length_matched", "counter_stereotypical"):
            assert summary[f"waf/{name}/{slice_name}"] == pytest.approx(audit["predictors"][name][slice_name]["waf"])
    assert summary["prior_following/winrate_rule/counter_stereotypical"] == 1.0
    assert summary["source_classifier/accuracy_mean"] == pytest.approx(audit["source_classifier"]["accuracy_mean"])
    assert summary["controls/identity_permutation/waf_mean"] == pytest.approx(
        audit["controls"]["identity_permutation"]["mean"])
    assert summary["judges/longer/order_agreement"] == pytest.approx(audit["judges"]["longer"]["order_agreement"])
    assert 0 < summary["judges/longer/order_agreement"] < 1 and summary["dataset/n_pairs"] == 240
    # tables, with the CIs split into columns
    waf = logged_table(run, "tables/waf").set_index(["predictor", "slice"])
    entry = audit["predictors"]["generator_lr"]["counter_stereotypical"]
    assert waf.loc[("generator_lr", "counter_stereotypical"), "waf"] == pytest.approx(entry["waf"])
    assert waf.loc[("generator_lr", "counter_stereotypical"), "ci_low"] == pytest.approx(entry["ci"][0])
    assert waf.loc[("longer", "full"), "kind"] == "judge" and waf.loc[("length_lr", "full"), "kind"] == "probe"
    assert len(waf) == 5 * 3
    predictions = logged_table(run, "tables/predictions")
    assert len(predictions) == audit["dataset"]["n_binary"] and "p_a1__longer" in predictions
    assert set(logged_table(run, "tables/win_rates")["generator"]) == set(audit["dataset"]["generators"])
    assert len(logged_table(run, "tables/source_pairs")) == len(audit["source_pairs"])
    # figures as images
    for figure in ("waf_full_vs_counter", "generator_win_rates"):
        image = summary[f"figures/{figure}"]
        assert image["_type"] == "image-file" and image["width"] > 100
        assert (run["folder"] / "files" / image["path"]).stat().st_size > 1000
    # artifacts: the audit folder, and the judge file it read
    artifacts = {a["type"]: a for a in run["artifacts"] if a["type"] in ("audit", "predictions")}
    assert artifacts["audit"]["name"] == "audit-preference-audit"
    assert artifacts["audit"]["files"] == sorted(["audit.json", "report.md", "predictions.csv",
                                                  "waf_full_vs_counter.png", "generator_win_rates.png"])
    assert artifacts["audit"]["metadata"]["metrics"]["waf/longer/full"] == summary["waf/longer/full"]
    assert artifacts["predictions"]["name"] == "predictions-longer"
    assert artifacts["predictions"]["files"] == ["longer.csv"]


def test_judge_run_then_protocols_audit_share_one_predictions_artifact(offline, tmp_path, protocol_dataset,
                                                                       monkeypatch):
    import wandb

    predictions = tmp_path / "oracle.jsonl"
    with monkeypatch.context() as patch:
        patch.setattr(wandb.Table, "MAX_ROWS", 5)  # the per-item table goes to the artifact past this
        rc = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge", "scripted:oracle",
                   "--out", str(predictions), "--report-to", "wandb"])
    assert rc == 0
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    rc = main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", f"oracle={predictions}",
               "--n-resamples", "200", "--out", str(tmp_path / "audit"), "--report-to", "wandb"])
    assert rc == 0
    runs = offline_runs(offline)
    judge, audit_run = runs["judge-oracle"], runs["protocols-audit"]
    assert judge["job_type"] == "judge" and judge["config"]["judge"] == "scripted:oracle"
    summary = judge["summary"]
    assert summary["predictions/rows"] == summary["predictions/items"] == summary["predictions/closed"] == len(rows)
    assert summary["predictions/parse_rate"] == 1.0 and summary["predictions/runs"] == 1
    assert summary["predictions/free_form"] == 0
    assert "tables/predictions" not in judge["summary"]  # longer than MAX_ROWS (5 here): in an artifact
    [overflow] = [a for a in judge["artifacts"] if a["type"] == "tables"]
    assert overflow["name"] == "tables-judge-oracle" and overflow["files"] == ["tables/predictions.table.json"]
    [logged] = [a for a in judge["artifacts"] if a["type"] == "predictions"]
    assert logged["name"] == "predictions-oracle" and logged["files"] == ["oracle.jsonl"]
    assert logged["metadata"]["config"] == "blueprint" and logged["metadata"]["predictions/parsed"] == len(rows)
    # the audit logs the same file under the same name and digest: one artifact version for both runs
    [used] = [a for a in audit_run["artifacts"] if a["type"] == "predictions"]
    assert (used["name"], used["files"], used["digest"]) == (logged["name"], logged["files"], logged["digest"])
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    summary = audit_run["summary"]
    assert summary["accuracy/oracle/blueprint/emotion/audio"] == audit["accuracy"]["oracle"]["blueprint"]["emotion"][
        "audio"]["value"] == 1.0
    assert summary["n_answered/oracle"] == len(rows)
    estimates = logged_table(audit_run, "tables/estimates")
    assert list(estimates.columns[:7]) == ["metric", "judge", "cell", "value", "ci_low", "ci_high", "n"]
    assert set(estimates["metric"]) == {"accuracy", "parse_rate"}  # blueprint only: no rf, lock, ...
    assert (estimates["value"] == 1.0).all() and len(estimates) == sum(
        1 for k in summary if k.startswith(("accuracy/", "parse_rate/")))
    assert not [k for k in summary if k.startswith("figures/")]  # the protocols audit draws no figure


def test_interventions_and_composition_audits_are_logged(offline, tmp_path, intervention_dataset):
    targets = pd.read_parquet(next((intervention_dataset / "diagnostic").glob("*.parquet")), columns=["id", "target"])
    answers = [{"id": i, "response": t if n % 4 else "yes"} for n, (i, t) in enumerate(targets.itertuples(False))]
    (tmp_path / "model.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    rc = main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions",
               str(tmp_path / "model.jsonl"), "--n-resamples", "200", "--out", str(tmp_path / "iv"),
               "--report-to", "wandb", "--run-name", "iv"])
    assert rc == 0
    comp = tmp_path / "comp-ds"
    assert main(["build", "composition", "--synthetic", "8", "--out", str(comp)]) == 0
    samples = pd.read_parquet(next((comp / "samples").glob("*.parquet")),
                              columns=["id", "answer", "answer_vocabulary"])

    def wrong(answer, vocabulary):  # a wrong answer the grader reads ("no idea" is ungraded, neither right nor wrong)
        return str(int(answer) + 1) if answer.isdigit() else next(v for v in vocabulary if v.lower() != answer.lower())

    for run in range(2):
        (tmp_path / f"run{run}.jsonl").write_text("".join(
            json.dumps({"id": i, "prediction": a if (n + run) % 3 else wrong(a, v)}) + "\n"
            for n, (i, a, v) in enumerate(samples.itertuples(False))))
    rc = main(["audit", "composition", "--dataset", str(comp), "--predictions", str(tmp_path / "run0.jsonl"),
               str(tmp_path / "run1.jsonl"), "--out", str(tmp_path / "comp"), "--report-to", "wandb",
               "--run-name", "comp"])
    assert rc == 0
    runs = offline_runs(offline)

    iv, result = runs["iv"], json.loads((tmp_path / "iv" / "audit.json").read_text())
    for dimension in ("sync", "existence", "consistency"):
        for field in ("orig", "interv", "gap"):
            assert iv["summary"][f"dimensions/{dimension}/{field}"] == pytest.approx(
                result["dimensions"][dimension][field])
    assert iv["summary"]["avg_gap"] == pytest.approx(result["avg_gap"])
    assert iv["summary"]["failure_modes/offset_blindness"] == pytest.approx(
        result["failure_modes"]["offset_blindness"])
    assert iv["summary"]["offset_within_tolerance"] == pytest.approx(result["offset_within_tolerance"]["value"])
    assert iv["summary"]["coverage/existence/parsed"] == pytest.approx(
        result["coverage"]["existence"]["parsed"]["value"])
    dims = logged_table(iv, "tables/dimensions").set_index("dimension")
    assert dims.loc["sync", "gap_ci_high"] == pytest.approx(result["dimensions"]["sync"]["ci"]["gap"][1])
    modes = logged_table(iv, "tables/failure_modes").set_index("mode")
    assert len(modes) == 8 and modes.loc["offset_blindness", "group"] == "Temporal"
    assert set(logged_table(iv, "tables/temporal")["metric"]) == set(TEMPORAL)
    assert iv["summary"]["figures/failure_modes"]["_type"] == "image-file"
    assert [a["name"] for a in iv["artifacts"] if a["type"] == "predictions"] == ["predictions-model"]

    comp_run, result = runs["comp"], json.loads((tmp_path / "comp" / "audit.json").read_text())
    assert comp_run["summary"]["accuracy/overall"] == pytest.approx(result["accuracy"]["overall"]["mean"])
    assert comp_run["summary"]["accuracy/overall_sd"] == pytest.approx(result["accuracy"]["overall"]["sd"])
    assert comp_run["summary"]["accuracy/overall_sd"] > 0  # two runs that differ
    assert comp_run["summary"]["n_runs"] == 2
    for category, entry in result["accuracy"]["by_category"].items():
        assert comp_run["summary"][f"accuracy/by_category/{category}"] == pytest.approx(entry["mean"])
    graded = logged_table(comp_run, "tables/graded")
    assert len(graded) == len(pd.read_csv(tmp_path / "comp" / "graded.csv")) and set(graded["run"]) == {"run0",
                                                                                                         "run1"}
    accuracy = logged_table(comp_run, "tables/accuracy")
    assert accuracy.iloc[0][["scope", "name"]].tolist() == ["overall", "all"]
    assert comp_run["summary"]["figures/template_accuracy"]["_type"] == "image-file"
    assert sorted(a["name"] for a in comp_run["artifacts"] if a["type"] == "predictions") == ["predictions-run0",
                                                                                              "predictions-run1"]


# --- failures --------------------------------------------------------------------------------------------------------

def test_without_wandb_installed_report_to_fails_before_any_work(offline, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wandb", None)  # `import wandb` raises ImportError
    rc = main(["audit", "preference", "--pairs", "200", "--out", str(tmp_path / "audit"), "--report-to", "wandb"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "needs the wandb package" in err and "omniaudit[track]" in err
    assert not (tmp_path / "audit").exists() and not list(offline.iterdir())


def test_online_without_a_login_fails_before_any_work(offline, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("WANDB_MODE")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc, no saved login
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    rc = main(["audit", "preference", "--pairs", "200", "--out", str(tmp_path / "audit"), "--report-to", "wandb"])
    assert rc == 2
    err = capsys.readouterr().err
    assert "wandb could not start a run" in err and "WANDB_MODE=offline" in err
    assert not (tmp_path / "audit").exists()


def test_a_failing_command_leaves_a_failed_run_and_no_logged_output(offline, tmp_path, protocol_dataset, capsys):
    rc = main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions",
               str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "audit"), "--report-to", "wandb"])
    assert rc == 2 and "missing.jsonl" in capsys.readouterr().err
    [run] = offline_runs(offline).values()
    assert run["exit_code"] == 1 and not run["artifacts"]
    assert not [k for k in run["summary"] if not k.startswith("_")]


def test_report_to_none_starts_no_run(offline, tmp_path, protocol_dataset):
    rc = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge", "scripted:always-a",
               "--out", str(tmp_path / "p.jsonl")])
    assert rc == 0 and not list(offline.iterdir())


# --- the pure parts --------------------------------------------------------------------------------------------------

def test_helpers_name_files_and_artifacts_and_refuse_unknown_audits(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the files exist: named_files reads specs by the one rule (omniaudit.specs)
    for name in ("a=b.jsonl", "x/p.jsonl", "plain.csv", "one.jsonl"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    assert tracking.named_files(["judge=x/p.jsonl", str(tmp_path / "a=b.jsonl"), "plain.csv"]) == [
        Path("x/p.jsonl"), tmp_path / "a=b.jsonl", Path("plain.csv")]
    assert tracking.named_files("one.jsonl") == [Path("one.jsonl")] and tracking.named_files(None) == []
    assert tracking.artifact_name("predictions", "runs/Qwen 2.5 omni@T=0.7.jsonl") == "predictions-Qwen-2.5-omni-T-0.7"
    with pytest.raises(InputError, match="expected one of preference"):
        tracking.audit_metrics("attention", {})
    with pytest.raises(InputError, match="no audit.json"):
        tracking.audit_tables("protocols", tmp_path)
    with pytest.raises(InputError, match="unknown tracker"):
        tracking.require_tracker("tensorboard")
    frame = tracking._loggable(pd.DataFrame({"raw": ["x", None, float("nan")], "probs": [{"A": 0.7}, None, [1]],
                                             "answer": ["five", 3, None], "n": [1, 2, 3]}))
    assert frame["raw"].tolist() == ["x", None, None] and frame["probs"].tolist() == ['{"A": 0.7}', None, "[1]"]
    assert frame["answer"].tolist() == ["five", "3", None] and frame["n"].tolist() == [1, 2, 3]
    wandb = pytest.importorskip("wandb")
    assert wandb.Table(dataframe=frame).data[1] == [None, None, "3", 2]  # wandb accepts the column types


def test_predictions_counts_follow_the_judge_rows(tmp_path):
    rows = [  # two runs of a closed item in two orders, and a free-form item, as `omniaudit judge` writes them
        {"id": "p1", "order": "ab", "run": 0, "raw": "A", "label": "A", "parsed": True, "option_probs": {"A": 0.9}},
        {"id": "p1", "order": "ba", "run": 0, "raw": "??", "label": None, "parsed": False, "option_probs": None},
        {"id": "p1", "order": "ab", "run": 1, "raw": "B", "label": "B", "parsed": True, "option_probs": None},
        {"id": "p1", "order": "ba", "run": 1, "raw": "A", "label": "A", "parsed": True, "option_probs": None},
        {"id": "q7", "order": None, "run": 0, "raw": "three red squares", "label": None, "parsed": None,
         "option_probs": None},
        {"id": "q7", "order": None, "run": 1, "raw": " ", "label": None, "parsed": None, "option_probs": None},
    ]
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    metrics = tracking.predictions_metrics(tracking.read_predictions(path))
    assert metrics == {"predictions/rows": 6, "predictions/items": 3, "predictions/runs": 2, "predictions/closed": 4,
                       "predictions/parsed": 3, "predictions/parse_rate": 0.75, "predictions/with_probs": 1,
                       "predictions/free_form": 2, "predictions/generated": 1, "predictions/generated_rate": 0.5}
    path.write_text(json.dumps(rows[0]) + "\n{not json\n")
    with pytest.raises(InputError, match=r"pred.jsonl:row 2: not a JSON line"):
        tracking.read_predictions(path)


def test_scorecard_logs_verdicts_figures_card_and_predictions(offline, tmp_path):
    """``scorecard --report-to wandb``: each verdict as a summary value and flag, the verdict table, the card's
    figures, the card as an artifact and each model's predictions."""
    out = tmp_path / "card"
    rc = main(["scorecard", "--model", "pos=scripted:position-locked", "--audits", "preference", "--n-resamples",
               "200", "--out", str(out), "--report-to", "wandb", "--run-name", "card-demo"])
    assert rc == 0
    card = json.loads((out / "scorecard.json").read_text())
    run = offline_runs(offline)["card-demo"]
    assert run["job_type"] == "scorecard" and run["exit_code"] == 0
    summary = run["summary"]
    assert summary["scorecard/pos/position/flagged"] == 1.0 and summary["scorecard/oracle/position/flagged"] == 0.0
    assert summary["scorecard/pos/position"] == pytest.approx(card["models"]["pos"]["shortcuts"]["position"]["value"])
    verdicts = logged_table(run, "tables/verdicts").set_index(["model", "shortcut"])
    assert verdicts.loc[("pos", "position"), "status"] == "flagged"
    assert verdicts.loc[("oracle", "visual_inference"), "status"] == "not measured"
    assert len(verdicts) == 2 * 5
    assert summary["figures/verdicts"]["_type"] == summary["figures/preference"]["_type"] == "image-file"
    assert {"scorecard", "predictions"} <= {a["type"] for a in run["artifacts"]}
