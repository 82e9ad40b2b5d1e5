"""No absolute local path in an audit's ``audit.json`` or ``report.md``: inputs are named relative to the output
folder when inside it, else by their name (as the reports and the scorecard name them), never where they live on
the machine that ran the audit."""

import json
import os
from pathlib import Path

import pytest

from omniaudit.cli import main
from omniaudit.evaluation.audit_outputs import shown_input
from omniaudit.predictions import FileProvenance
from omniaudit.runners import run_judge

PROTOCOL_CONFIGS = ("blueprint", "reference", "pairwise", "cue_conflict")


def machine_roots(tmp_path_factory) -> list[str]:
    """Where this machine keeps things an audit read: pytest's folders (every input of these tests), the current
    folder, the caches and the home folder."""
    roots = [str(tmp_path_factory.getbasetemp()), str(Path.cwd()), os.environ.get("HF_HOME"),
             os.environ.get("OMNIAUDIT_CACHE")]
    if Path.home() != Path("/"):
        roots.append(str(Path.home()))
    return [r for r in roots if r]


def assert_no_local_paths(out: Path, tmp_path_factory) -> dict:
    text = {name: (out / name).read_text(encoding="utf-8") for name in ("audit.json", "report.md")}
    for name, body in text.items():
        for root in machine_roots(tmp_path_factory):
            assert root not in body, f"{name} names {root}: ...{body[max(0, body.find(root) - 80):][:200]}..."
    return json.loads(text["audit.json"])


def test_interventions_audit_names_no_local_path(intervention_dataset, tmp_path, tmp_path_factory, monkeypatch):
    preds = tmp_path / "in" / "oracle.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", preds)
    out = tmp_path / "r"
    argv = ["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(preds),
            "--n-resamples", "20", "--out", str(out)]
    monkeypatch.setattr("sys.argv", ["omniaudit", *argv])  # the arguments audit.json records
    assert main(argv) == 0
    audit = assert_no_local_paths(out, tmp_path_factory)
    assert audit["dataset"] == audit["schema"]["inputs"]["dataset"] == intervention_dataset.name
    assert audit["schema"]["inputs"]["predictions"] == "oracle.jsonl"
    assert audit["provenance"][0]["file"] == "oracle.jsonl"
    args = audit["schema"]["arguments"]
    assert args[args.index("--dataset") + 1] == intervention_dataset.name and args[args.index("--out") + 1] == "."


def test_protocols_audit_names_no_local_path(protocol_dataset, tmp_path, tmp_path_factory):
    specs = []
    for config in PROTOCOL_CONFIGS:
        path = tmp_path / "in" / f"oracle.{config}.jsonl"
        run_judge(protocol_dataset, config, "scripted:oracle", path)
        specs.append(f"oracle={path}")
    out = tmp_path / "r"
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", *specs,
                 "--n-resamples", "20", "--out", str(out)]) == 0
    audit = assert_no_local_paths(out, tmp_path_factory)
    assert audit["dataset"] == protocol_dataset.name
    assert audit["schema"]["inputs"]["predictions"] == [f"oracle=oracle.{c}.jsonl" for c in PROTOCOL_CONFIGS]
    assert [p["file"] for p in audit["provenance"]["oracle"]] == [f"oracle.{c}.jsonl" for c in PROTOCOL_CONFIGS]


@pytest.fixture(scope="module")
def composition_dataset(tmp_path_factory):
    from omniaudit.data_builders.composition import build_composition_dataset

    return build_composition_dataset(tmp_path_factory.mktemp("comp") / "ds", n_synthetic=12)


def test_composition_audit_names_no_local_path(composition_dataset, tmp_path, tmp_path_factory):
    files = []
    for config in ("samples", "ablations"):
        path = tmp_path / "in" / f"{config}.jsonl"
        run_judge(composition_dataset, config, "scripted:oracle", path)
        files.append(path)
    out = tmp_path / "r"
    assert main(["audit", "composition", "--dataset", str(composition_dataset), "--predictions",
                 *(f"m={f}" for f in files), "--out", str(out)]) == 0
    audit = assert_no_local_paths(out, tmp_path_factory)
    assert audit["dataset"] == composition_dataset.name
    assert audit["run_files"] == {"m": ["samples.jsonl", "ablations.jsonl"]}
    assert [p["file"] for p in audit["provenance"]["m"]] == ["samples.jsonl", "ablations.jsonl"]


def test_preference_audit_names_no_local_path(emoprefer_csv, small_raw, tmp_path, tmp_path_factory):
    import numpy as np

    binary = small_raw[small_raw["preference"].isin(["a1", "a2"])]
    judge = tmp_path / "in" / "judge.csv"
    judge.parent.mkdir()
    binary.assign(order="ab", label=binary["preference"])[["name", "order", "label"]].to_csv(judge, index=False)
    annotations = tmp_path / "in" / "annotations.csv"
    binary.assign(annotator="r1", label=binary["preference"])[["name", "annotator", "label"]].to_csv(
        annotations, index=False)
    odin = tmp_path / "in" / "odin0"
    odin.mkdir()
    folds = {f"fold{k}": {"rho_content_length": float(v)} for k, v in enumerate(np.linspace(0.1, 0.3, 3))}
    (odin / "odin_metrics.json").write_text(json.dumps({"rho_content_length": 0.2, "folds": folds,
                                                        "lambda_dec": 0.0, "lambda_orth": 1.0}))
    out = tmp_path / "r"
    assert main(["audit", "preference", "--source", str(emoprefer_csv), "--predictions", f"J={judge}",
                 "--annotations", str(annotations), "--odin", f"l0={odin}", "--n-resamples", "20",
                 "--no-source-classifier", "--no-controls", "--out", str(out)]) == 0
    audit = assert_no_local_paths(out, tmp_path_factory)
    assert audit["source"] == audit["schema"]["inputs"]["dataset"] == emoprefer_csv.name
    assert audit["schema"]["inputs"]["predictions"] == ["J=judge.csv"]
    assert audit["judges"]["J"]["file"] == "judge.csv" and audit["consensus"]["file"] == "annotations.csv"
    assert audit["odin"]["runs"]["l0"]["file"] == "odin_metrics.json"


def test_shown_input_names_local_files_only_by_where_they_are_in_the_output(tmp_path):
    out = tmp_path / "out"
    (out / "predictions").mkdir(parents=True)
    inside = out / "predictions" / "j.jsonl"
    inside.touch()
    assert shown_input(inside, out) == "predictions/j.jsonl"
    assert shown_input(tmp_path / "elsewhere" / "ds", out) == "ds"  # need not exist: an absolute path is local
    assert shown_input(f"j={tmp_path / 'a' / 'j.jsonl'}", out) == "j=j.jsonl"
    assert shown_input("me/dataset", out) == "me/dataset"  # a Hub repo id
    assert shown_input(f"hf:{tmp_path / 'models' / 'tiny'}", out) == "hf:tiny"
    assert shown_input("openai:qwen@http://127.0.0.1:8000/v1", out) == "openai:qwen@http://127.0.0.1:8000/v1"
    assert shown_input(None, out) is None


def test_provenance_summary_names_the_file_without_where_it_lives(tmp_path):
    record = {"judge": "scripted:oracle", "model": {"kind": "scripted", "model": "oracle"},
              "dataset": {"name": "ds"}, "sampling": {}, "omniaudit": "0"}
    p = FileProvenance(file=str(tmp_path / "runs" / "p.jsonl"), known=True, record=record,
                       notes=[f"read from {tmp_path / 'runs' / 'p.jsonl'}"])
    summary = p.summary()
    assert summary["file"] == "p.jsonl" and summary["notes"] == ["read from p.jsonl"]
    assert summary["judge"] == "scripted:oracle"  # the record's fields as the file states them
    assert p.summary(tmp_path)["file"] == "runs/p.jsonl"
    assert str(tmp_path) not in json.dumps(summary)
    assert p.file == str(tmp_path / "runs" / "p.jsonl")  # the record itself keeps the path (checks read the file)
