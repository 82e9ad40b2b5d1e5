"""Bookkeeping: one `[NAME=]FILE` rule everywhere (omniaudit.specs) and `NAME@RUN=FILE` for composition.

The input that showed it: `audit protocols` refused `sweep/lr=1e-4/omni.reference.jsonl` ("1e-4/omni.reference.jsonl:
file not found") while the other audits accepted it, and `MODEL/RUN=FILE` made `Qwen/Qwen2.5-Omni-7B` and
`Qwen/Qwen2.5-Omni-3B` one model "Qwen"."""

import json
from pathlib import Path

import pandas as pd
import pytest

from omniaudit.errors import InputError
from omniaudit.specs import model_or_named_file, parse_named_file, parse_named_files, split_model_run


@pytest.fixture
def sweep(tmp_path, monkeypatch):
    """A sweep folder whose name holds '=' (lr=1e-4), a predictions file in it, and a plain file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sweep" / "lr=1e-4").mkdir(parents=True)
    (tmp_path / "sweep" / "lr=1e-4" / "omni.reference.jsonl").write_text("")
    (tmp_path / "plain.jsonl").write_text("")
    return tmp_path


def test_one_rule_an_existing_file_wins_then_the_first_cut_before_an_existing_file(sweep):
    spec = "sweep/lr=1e-4/omni.reference.jsonl"
    assert parse_named_file(spec) == ("omni.reference", Path(spec), False)  # the whole text is a file: stem
    assert parse_named_file(f"judge={spec}") == ("judge", Path(spec), True)
    assert parse_named_file("a=b=plain.jsonl") == ("a=b", Path("plain.jsonl"), True)  # first cut before a file
    assert parse_named_file("Qwen/Qwen2.5-Omni-7B@r1=plain.jsonl").name == "Qwen/Qwen2.5-Omni-7B@r1"  # "/" is name
    assert parse_named_file(Path("plain.jsonl")) == ("plain", Path("plain.jsonl"), False)
    assert parse_named_file("sweep/lr=1e-4", folders=True) == ("lr=1e-4", Path("sweep/lr=1e-4"), False)
    assert parse_named_files(None) == [] and len(parse_named_files("plain.jsonl")) == 1
    with pytest.raises(InputError, match=r"file not found: 'sweep/lr=1e-4/missing.jsonl' is no existing file, nor "
                                         r"is any part after an '=' \('1e-4/missing.jsonl'\)"):
        parse_named_file("sweep/lr=1e-4/missing.jsonl")
    with pytest.raises(InputError, match="non-empty NAME"):
        parse_named_file("=plain.jsonl")
    with pytest.raises(InputError, match="judge file not found"):
        parse_named_file("missing.jsonl", noun="judge file")


def test_model_at_run_cuts_at_the_last_at():
    assert split_model_run("Qwen/Qwen2.5-Omni-7B@r1") == ("Qwen/Qwen2.5-Omni-7B", "r1")
    assert split_model_run("team@lab/model@r2") == ("team@lab/model", "r2")
    assert split_model_run("Qwen/Qwen2.5-Omni-7B") == ("Qwen/Qwen2.5-Omni-7B", None)
    for bad in ("@r1", "model@"):
        with pytest.raises(InputError, match="MODEL@RUN"):
            split_model_run(bad)


def test_every_reader_takes_the_sweep_path(sweep):
    """The same spec through every place that reads named files: each gets the file, named by its stem."""
    from omniaudit.evaluation.composition.audit import attention_runs, run_specs
    from omniaudit.evaluation.interventions.alignment_tax import parse_runs as lmms_runs
    from omniaudit.evaluation.preference.judge_files import parse_judge_specs
    from omniaudit.evaluation.tracking import named_files

    spec = "sweep/lr=1e-4/omni.reference.jsonl"
    assert [(j.name, j.files) for j in parse_judge_specs([spec])] == [("omni.reference", [Path(spec)])]
    assert named_files([spec, f"j={spec}"]) == [Path(spec), Path(spec)]
    assert run_specs([spec]) == {"omni.reference": [Path(spec)]}
    assert lmms_runs(["sweep/lr=1e-4"]) == {"lr=1e-4": Path("sweep/lr=1e-4")}  # a folder holding '=' too
    assert attention_runs([f"Qwen/Qwen2.5-Omni-7B={spec}"], []) == {"Qwen/Qwen2.5-Omni-7B": [Path(spec)]}
    assert model_or_named_file("Qwen/Qwen2.5-Omni-7B") == ("Qwen/Qwen2.5-Omni-7B", None)
    assert model_or_named_file("sweep/lr=1e-4") == ("sweep/lr=1e-4", None)  # a model folder holding '='
    with pytest.raises(InputError, match="MODEL=PREDICTIONS"):
        model_or_named_file("m=missing.jsonl")


def test_odin_report_reads_the_same_rule(sweep):
    from omniaudit.evaluation.preference.odin_report import parse_runs

    run = sweep / "sweep" / "lr=1e-4"
    (run / "odin_metrics.json").write_text(json.dumps({"lambda_dec": 1.0, "folds": {}}))
    assert parse_runs(["sweep/lr=1e-4"]) == {"lambda=1": Path("sweep/lr=1e-4/odin_metrics.json")}
    assert parse_runs(["odin=sweep/lr=1e-4"]) == {"odin": Path("sweep/lr=1e-4/odin_metrics.json")}


def test_audit_protocols_accepts_a_path_holding_an_equals_sign(sweep):
    """Before: `1e-4/omni.reference.jsonl: file not found` (the spec was cut at its first '=')."""
    from omniaudit.evaluation.protocols.audit import read_judge_predictions

    items = pd.DataFrame({"id": ["cc/0/none", "cc/0/conf_spec"], "config": "cue_conflict", "attribute": "emotion",
                          "task": None, "condition": ["none", "conf_spec"], "placement": None, "clip_id": "clip0",
                          "trial": None, "order": None, "format": None, "options": [["angry", "sad"]] * 2, "k": 2,
                          "gold": "angry", "cue": "sad"})
    spec = "sweep/lr=1e-4/omni.reference.jsonl"
    Path(spec).write_text("".join(json.dumps({"id": i, "label": "angry", "parsed": True}) + "\n" for i in items["id"]))
    got = read_judge_predictions([spec], items)
    assert list(got) == ["omni.reference"] and got["omni.reference"]["label"].tolist() == ["angry", "angry"]
    assert list(read_judge_predictions([f"lr={spec}"], items)) == ["lr"]
