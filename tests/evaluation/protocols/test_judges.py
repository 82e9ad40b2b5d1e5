"""Judge runners and the protocol audit: parsing, scripted judges' analytic values, the paper's chance
normalisation and tiny local models (the `openai:` runner: test_openai_runner.py and test_serve.py)."""

import json

import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.protocols.audit import (
    ProtocolAuditConfig,
    audit_protocols,
    load_items_meta,
    read_judge_predictions,
    rf_normalized,
)
from omniaudit.runners import parse_answer, run_judge
from omniaudit.runners.run import UnusableRun

FAST = ProtocolAuditConfig(n_resamples=200)


@pytest.mark.parametrize(("raw", "options", "label"), [
    ("angry", ["angry", "sad"], "angry"),
    ("  Sad. ", ["angry", "sad"], "sad"),
    ("The speaker sounds angry to me.", ["angry", "sad"], "angry"),
    ("Either angry or sad.", ["angry", "sad"], None),
    ("I cannot tell.", ["angry", "sad"], None),
    ("", ["angry", "sad"], None),
    ("B", ["A", "B"], "B"),
    ("A.", ["A", "B"], "A"),
    ("Answer: B", ["A", "B"], "B"),
    ("Clip A is cleaner.", ["A", "B"], None),  # comparatives describe, name no choice (test_answer_parser.py)
    ("A clip with less noise is better.", ["A", "B"], None),
    ("The answer is a bit unclear.", ["A", "B"], None),
    ("It depends on which clip a listener prefers.", ["A", "B"], None),
    ("Clip A and clip B sound identical.", ["A", "B"], None),
    ("Clip A is cleaner than clip B.", ["A", "B"], None),
    ("**A**", ["A", "B"], "A"),
    ("Answer: **B**", ["A", "B"], "B"),
    ("I choose B.", ["A", "B"], "B"),
    ("Candidate B sounds more like the reference.", ["A", "B"], None),
    ("audio_described", ["audio_described", "muted", "visual_only"], "audio_described"),
    ("_A_", ["A", "B"], "A"),
])
def test_parse_answer(raw, options, label):
    assert parse_answer(raw, options) == label


# Table III pairs printed in the paper: (raw RF, K, printed chance-normalised RF)
PAPER_PAIRS = [(0.68, 8, 0.63), (0.63, 8, 0.57), (0.85, 8, 0.82), (0.58, 8, 0.51), (0.95, 8, 0.94), (0.45, 8, 0.36),
               (0.30, 8, 0.18), (0.18, 8, 0.04), (0.05, 8, 0.00), (0.60, 4, 0.39), (0.89, 4, 0.83), (0.34, 4, 0.01),
               (0.27, 4, 0.00), (0.12, 4, 0.00)]


@pytest.mark.parametrize(("rf", "k", "printed"), PAPER_PAIRS)
def test_chance_normalisation_reproduces_the_paper(rf, k, printed):
    assert rf_normalized(rf, k) == pytest.approx(printed, abs=0.011)  # the paper rounds RF before printing


def judge_all(dataset, spec, folder):
    paths = []
    for config in ("blueprint", "reference", "pairwise", "cue_conflict"):
        path = folder / f"{spec.split(':')[1]}.{config}.jsonl"
        run_judge(dataset, config, spec, path)
        paths.append(f"{spec.split(':')[1]}={path}")
    return paths


def test_scripted_judges_give_the_analytic_values(protocol_dataset, tmp_path):
    items = load_items_meta(protocol_dataset)
    specs = [p for name in ("always-a", "copy-reference", "oracle", "random")
             for p in judge_all(protocol_dataset, f"scripted:{name}", tmp_path)]
    res = audit_protocols(items, read_judge_predictions(specs, items), FAST)
    for fmt in ("concat", "native"):
        assert res["p_a"]["always-a"][fmt]["value"] == 1.0
        for task, entry in res["lock"]["always-a"][fmt].items():
            assert entry["value"] == 1.0, task
            assert res["gold_aligned"]["always-a"][fmt][task]["value"] == 0.5
        assert all(e["value"] == 1.0 for e in res["gold_aligned"]["oracle"][fmt].values())
    for attribute in ("emotion", "language"):
        for placement in ("before", "after", "system", "rubric"):
            assert res["rf"]["copy-reference"][attribute][placement]["value"] == 1.0
            assert res["rf_normalized"]["copy-reference"][attribute][placement]["value"] == 1.0
            assert res["rf"]["oracle"][attribute][placement]["value"] == 0.0
        assert res["follow_cue"]["copy-reference"][attribute]["conf_ref"]["value"] == 1.0
        assert res["follow_cue"]["copy-reference"][attribute]["conf_spec"]["value"] == 0.0
        bp = res["accuracy"]["oracle"]["blueprint"][attribute]
        assert all(v["value"] == 1.0 for v in bp.values())
        # copy-reference has no reference on the blueprint: it refuses, which is unparseable, not a label
        assert res["parse_rate"]["copy-reference"]["blueprint"][attribute]["audio"]["value"] == 0.0
    # random is seeded per item: the same file twice
    again = tmp_path / "again.jsonl"
    run_judge(protocol_dataset, "reference", "scripted:random", again)
    assert again.read_text() == (tmp_path / "random.reference.jsonl").read_text()


@pytest.mark.parametrize("spec", ["nonsense", "openai:model-without-url", "scripted:always-c", "hf:/no/such/model"])
def test_bad_judge_specs(protocol_dataset, tmp_path, spec):
    with pytest.raises(InputError):
        run_judge(protocol_dataset, "reference", spec, tmp_path / "p.jsonl")


@pytest.mark.slow
def test_tiny_local_models_end_to_end(protocol_dataset, tiny_models, tmp_path):
    text_conditions = ["skeleton", "descriptors", "true", "wrong", "no_frame"]
    counts = run_judge(protocol_dataset, "blueprint", f"hf:{tiny_models['text']}", tmp_path / "text.jsonl",
                       text_conditions, batch_size=16)
    rows = [json.loads(x) for x in (tmp_path / "text.jsonl").read_text().splitlines()]
    assert counts["parsed"] == counts["items"] == len(rows) > 0  # option logits always name an option
    counts = run_judge(protocol_dataset, "pairwise", f"hf:{tiny_models['audio']}", tmp_path / "audio.jsonl",
                       ["identical", "cleanness"], batch_size=8)
    rows = [json.loads(x) for x in (tmp_path / "audio.jsonl").read_text().splitlines()]
    assert {r["label"] for r in rows} <= {"A", "B"} and all(r["order"] in ("AB", "BA") for r in rows)
    # a random tiny model's generated text names no option: the run is unusable and writes nothing ...
    with pytest.raises(UnusableRun, match="0 usable answers"):
        run_judge(protocol_dataset, "reference", f"hf:{tiny_models['audio']}", tmp_path / "gen.jsonl", ["match"],
                  mode="generate")
    assert not (tmp_path / "gen.jsonl").exists() and not list(tmp_path.glob(".gen.jsonl*"))
    # ... unless asked to (--min-usable 0)
    gen = run_judge(protocol_dataset, "reference", f"hf:{tiny_models['audio']}", tmp_path / "gen.jsonl",
                    ["match"], mode="generate", min_usable=0)
    assert gen["items"] > 0 and gen["usable"] == 0
    with pytest.raises(InputError, match="takes no audio"):
        run_judge(protocol_dataset, "blueprint", f"hf:{tiny_models['text']}", tmp_path / "x.jsonl", ["audio"])
    # batching does not change answers
    run_judge(protocol_dataset, "pairwise", f"hf:{tiny_models['audio']}", tmp_path / "audio1.jsonl",
              ["identical", "cleanness"], batch_size=1)
    one = [json.loads(x)["label"] for x in (tmp_path / "audio1.jsonl").read_text().splitlines()]
    assert one == [r["label"] for r in rows]


def test_audit_protocols_cli_end_to_end(protocol_dataset, tmp_path, capsys):
    preds = []
    for name in ("always-a", "copy-specialist"):
        for config in ("blueprint", "pairwise"):
            path = tmp_path / f"{name}.{config}.jsonl"
            assert main(["judge", "--dataset", str(protocol_dataset), "--config", config, "--judge",
                         f"scripted:{name}", "--out", str(path)]) == 0
            preds.append(f"{name}={path}")
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", *preds, "--out",
                 str(tmp_path / "rep"), "--n-resamples", "200"]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert set(result) >= {"accuracy", "parse_rate", "rf", "rf_normalized", "lock", "gold_aligned", "p_a",
                           "follow_cue"}
    assert result["judges"] == ["always-a", "copy-specialist"]
    assert result["accuracy"]["copy-specialist"]["blueprint"]["emotion"]["wrong"]["value"] == 0.0
    assert result["accuracy"]["copy-specialist"]["blueprint"]["emotion"]["true"]["value"] > 0.5
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "Table II layout" in report and "Table IV layout" in report
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "reference/nope", "label": "x"}) + "\n")
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", str(bad), "--out",
                 str(tmp_path / "rep2")]) == 2
    assert "id not in the dataset" in capsys.readouterr().err


def test_predictions_must_cover_whole_groups_and_name_their_judges(protocol_dataset, tmp_path):
    items = load_items_meta(protocol_dataset)
    full = tmp_path / "a" / "preds.jsonl"
    full.parent.mkdir()
    run_judge(protocol_dataset, "pairwise", "scripted:always-a", full)
    rows = [json.loads(x) for x in full.read_text().splitlines()]
    ab_only = tmp_path / "ab.jsonl"
    ab_only.write_text("".join(json.dumps(r) + "\n" for r in rows if r["order"] == "AB"))
    with pytest.raises(InputError, match="the run is incomplete: config .pairwise. asked 132 items"):
        read_judge_predictions([str(ab_only)], items)  # half of a run's answers
    with pytest.raises(InputError, match="answers only part of a group"):
        read_judge_predictions([str(ab_only)], items, partial=True)  # lock needs both orders of every trial
    other = tmp_path / "b" / "preds.jsonl"
    other.parent.mkdir()
    run_judge(protocol_dataset, "reference", "scripted:oracle", other)
    with pytest.raises(InputError, match="two files would both be judge 'preds'"):
        read_judge_predictions([str(full), str(other)], items)
    assert set(read_judge_predictions([f"x={full}", f"y={other}"], items)) == {"x", "y"}
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("".join(json.dumps({**r, **({"label": "C", "parsed": True} if i == 3 else {})}) + "\n"
                             for i, r in enumerate(rows)))
    with pytest.raises(InputError, match="not one of the item's options") as err:
        read_judge_predictions([str(wrong)], items)
    assert "row 4" in str(err.value)
    unparsed = tmp_path / "unparsed.jsonl"
    unparsed.write_text("".join(json.dumps({**r, "parsed": False, "label": None}) + "\n" for r in rows))
    res = audit_protocols(items, read_judge_predictions([str(unparsed)], items), FAST)
    assert res["parse_rate"]["unparsed"]["pairwise"]["cleanness"]["concat"]["value"] == 0.0
