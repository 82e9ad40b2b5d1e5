"""The CLI at scale: a missing extra named in one line, -q / -v after the command, no library progress bars in piped
logs, and wandb runs that record where their predictions came from."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from rich.console import Console
from wandb_records import records

from omniaudit.cli import common, main, progress
from omniaudit.cli.progress import log

ROOT = Path(__file__).resolve().parents[1]
BARS = ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")


@pytest.fixture(autouse=True)
def _restore_log_level():
    yield
    log.setLevel(logging.INFO)


# --- a missing extra -------------------------------------------------------------------------------------------------

def test_the_extras_table_follows_pyproject():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {extra: {dep.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                     for dep in deps} for extra, deps in extras.items()}
    for module, extra in common.EXTRAS.items():
        assert module in names[extra], (module, extra)  # import name = distribution name for every one listed
    for module in ("torch", "transformers", "accelerate", "bitsandbytes"):
        assert common.EXTRAS[module] == "infer"  # hf: models and tiny-models (tests/test_extras.py: the rest)
    for module in ("peft", "trl", "deepspeed"):
        assert common.EXTRAS[module] == "train"


def test_a_missing_extra_names_itself_in_one_line(tmp_path, capsys, monkeypatch):
    import omniaudit.tiny_models

    def no_torch(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(omniaudit.tiny_models, "build_tiny_suite", no_torch)
    assert main(["tiny-models", "--out", str(tmp_path / "tiny")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("error: No module named 'torch': this needs omniaudit's [infer] extra: pip install "
                           "'omniaudit[infer]' -c requirements/constraints.txt")


def test_an_hf_judge_without_torch_names_the_extra(protocol_dataset, tiny_models, tmp_path, capsys, monkeypatch):
    from omniaudit.runners.factory import release_models

    release_models()  # no model kept from another test
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ModuleNotFoundError(name="torch")
    rc = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge",
               f"hf:{tiny_models['text']}", "--out", str(tmp_path / "p.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "pip install 'omniaudit[infer]'" in err, err
    assert not (tmp_path / "p.jsonl").exists()


@pytest.mark.parametrize("name", ["torch.nn", "not_an_extra", None])
def test_other_missing_modules_are_left_as_they_are(tmp_path, monkeypatch, name):
    import omniaudit.tiny_models

    def missing(*args, **kwargs):  # a module inside an installed package is a version mismatch, not an extra
        raise ModuleNotFoundError(f"No module named '{name}'", name=name)

    monkeypatch.setattr(omniaudit.tiny_models, "build_tiny_suite", missing)
    with pytest.raises(ModuleNotFoundError):
        main(["tiny-models", "--out", str(tmp_path / "tiny")])


# --- -q / -v after the command ---------------------------------------------------------------------------------------

def test_quiet_and_verbose_after_the_command(protocol_dataset, tmp_path, capsys):
    judge = ["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge", "scripted:oracle"]
    assert main([*judge, "--out", str(tmp_path / "a.jsonl"), "-q"]) == 0
    assert not log.isEnabledFor(logging.INFO) and "predictions:" in capsys.readouterr().out
    assert main([*judge, "--out", str(tmp_path / "b.jsonl"), "--verbose"]) == 0
    assert log.isEnabledFor(logging.DEBUG)
    assert main(["-q", *judge, "--out", str(tmp_path / "c.jsonl")]) == 0 and not log.isEnabledFor(logging.INFO)
    assert main(["-q", *judge, "--out", str(tmp_path / "d.jsonl"), "-q"]) == 0  # said twice: the same
    assert main([*judge, "--out", str(tmp_path / "e.jsonl")]) == 0 and log.isEnabledFor(logging.INFO)
    assert not log.isEnabledFor(logging.DEBUG)
    capsys.readouterr()
    # a nested command (audit AUDIT) takes them too
    rc = main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions",
               f"oracle={tmp_path / 'a.jsonl'}", "--n-resamples", "200", "--out", str(tmp_path / "audit"), "-q"])
    assert rc == 0 and capsys.readouterr().err == "" and not log.isEnabledFor(logging.INFO)


@pytest.mark.parametrize("before, after", [(["-q"], ["-v"]), (["-v"], ["--quiet"]), ([], ["-q", "-v"])])
def test_contradicting_loudness_is_a_usage_error(before, after, capsys, tmp_path):
    judge = ["judge", "--dataset", "d", "--config", "c", "--judge", "scripted:oracle", "--out", str(tmp_path / "p")]
    with pytest.raises(SystemExit) as exc:
        main([*before, *judge, *after])
    assert exc.value.code == 2 and "usage: omniaudit" in capsys.readouterr().err


# --- no library progress bars in piped logs --------------------------------------------------------------------------

@pytest.fixture
def bars_on(monkeypatch):
    """The libraries' bars on, as in a fresh process without their variables (the values they read when imported
    included); everything put back after the test. Returns: are datasets', the Hub's, transformers' bars off?"""
    import importlib

    # the modules (their packages export a class of the same name: `import a.b.tqdm as m` would give the class)
    datasets_tqdm = importlib.import_module("datasets.utils.tqdm")
    hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    transformers_logging = importlib.import_module("transformers.utils.logging")
    for var in (*BARS, "TRANSFORMERS_NO_ADVISORY_WARNINGS"):
        monkeypatch.setenv(var, "")  # recorded, so the teardown removes what the test sets
        monkeypatch.delenv(var)
    monkeypatch.setattr(datasets_tqdm, "HF_DATASETS_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(datasets_tqdm, "_hf_datasets_progress_bars_disabled", False)
    monkeypatch.setattr(hub_tqdm, "HF_HUB_DISABLE_PROGRESS_BARS", None)
    monkeypatch.setattr(hub_tqdm, "progress_bar_states", {})
    monkeypatch.setattr(transformers_logging, "_tqdm_active", True)
    return lambda: (datasets_tqdm.are_progress_bars_disabled(), hub_tqdm.are_progress_bars_disabled(),
                    not transformers_logging.is_progress_bar_enabled())


def test_library_bars_are_off_in_a_piped_log_and_with_quiet(bars_on, monkeypatch):
    progress.setup_logging(0)  # stderr is pytest's capture here: not a terminal
    assert bars_on() == (True, True, True)
    assert all(os.environ[var] == "1" for var in BARS)


def test_library_bars_stay_on_a_terminal_unless_quiet(bars_on, monkeypatch):
    monkeypatch.setattr(progress, "console", Console(stderr=True, force_terminal=True))
    progress.setup_logging(0)
    assert bars_on() == (False, False, False) and not any(var in os.environ for var in BARS)
    progress.setup_logging(1)
    assert bars_on() == (False, False, False)
    progress.setup_logging(-1)
    assert bars_on() == (True, True, True)


def test_a_user_s_own_setting_wins(bars_on, monkeypatch, recwarn):
    import importlib

    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")
    hub_tqdm = importlib.import_module("huggingface_hub.utils.tqdm")
    monkeypatch.setattr(hub_tqdm, "HF_HUB_DISABLE_PROGRESS_BARS", False)  # as the Hub read it when imported
    progress.setup_logging(0)
    assert bars_on() == (True, False, False) and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "0"
    assert not [w for w in recwarn if "Cannot disable progress bars" in str(w.message)]


def test_a_piped_judge_run_logs_no_bars(tmp_path):
    """End to end: `omniaudit judge` reading a fresh dataset build with stderr piped draws no "Generating train split"
    bar; the same run with HF_DATASETS_DISABLE_PROGRESS_BARS=0 (the user's own choice) does."""
    assert main(["build", "preference", "--out", str(tmp_path / "ds")]) == 0
    errs = []
    for n, bars in enumerate((None, "0")):
        env = {k: v for k, v in os.environ.items() if k not in BARS}
        env["HF_HOME"] = str(tmp_path / f"hf{n}")  # a fresh datasets cache: the split is generated
        env["HF_DATASETS_CACHE"] = str(tmp_path / f"hf{n}" / "datasets")
        if bars is not None:
            env["HF_DATASETS_DISABLE_PROGRESS_BARS"] = bars
        proc = subprocess.run([sys.executable, "-m", "omniaudit", "judge", "--dataset", str(tmp_path / "ds"),
                               "--config", "judge", "--judge", "scripted:oracle", "--out",
                               str(tmp_path / f"p{n}.jsonl")], capture_output=True, text=True, env=env, timeout=300,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        errs.append(proc.stderr)
    assert "Generating train split" not in errs[0] and "\r" not in errs[0]
    assert "Generating train split" in errs[1]


# --- wandb: what the predictions carry -------------------------------------------------------------------------------

def run_configs(wandb_dir: Path) -> dict[str, dict]:
    """display name -> the run's config as a later `wandb sync` uploads it (the run record's, then its updates)."""
    from wandb.proto import wandb_internal_pb2 as pb

    runs = {}
    for path in sorted(wandb_dir.glob("wandb/offline-run-*/run-*.wandb")):
        name, config = None, {}
        for raw in records(path):
            record = pb.Record()
            record.ParseFromString(raw)
            kind = record.WhichOneof("record_type")
            updates = record.run.config.update if kind == "run" else record.config.update if kind == "config" else ()
            name = record.run.display_name if kind == "run" else name
            for item in updates:
                target = config
                keys = list(item.nested_key) or [item.key]
                for key in keys[:-1]:
                    target = target.setdefault(key, {})
                target[keys[-1]] = json.loads(item.value_json)
        runs[name] = config
    return runs


def test_wandb_runs_record_the_predictions_provenance(offline, protocol_dataset, tmp_path):
    from omniaudit.data_builders.fingerprint import fingerprint_of

    preds = {}
    for config in ("blueprint", "pairwise"):
        preds[config] = tmp_path / f"oracle-{config}.jsonl"
        rc = main(["judge", "--dataset", str(protocol_dataset), "--config", config, "--judge", "scripted:oracle",
                   "--out", str(preds[config]), "--report-to", "wandb", "--run-name", f"judge-{config}"])
        assert rc == 0
    rc = main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions",
               *(f"oracle={p}" for p in preds.values()), "--n-resamples", "200", "--out", str(tmp_path / "audit"),
               "--report-to", "wandb", "--run-name", "audit"])
    assert rc == 0
    configs = run_configs(offline)
    fingerprint = {c: fingerprint_of(protocol_dataset, c) for c in preds}
    judge = configs["judge-blueprint"]
    assert judge["judge"] == "scripted:oracle" and judge["config"] == "blueprint"  # the command line, as before
    assert judge["dataset_fingerprints"] == [fingerprint["blueprint"]]
    assert judge["model_identities"] == [{"kind": "scripted", "model": "oracle"}]
    assert judge["provenance"] == {"oracle-blueprint": {
        "judge": "scripted:oracle", "model": {"kind": "scripted", "model": "oracle"},
        "datasets": [{"name": protocol_dataset.name, "config": "blueprint", "fingerprint": fingerprint["blueprint"]}]}}
    audit = configs["audit"]
    assert audit["dataset_fingerprints"] == sorted(fingerprint.values())
    assert audit["model_identities"] == [{"kind": "scripted", "model": "oracle"}]
    assert sorted(audit["provenance"]) == ["oracle-blueprint", "oracle-pairwise"]
    assert audit["provenance"]["oracle-pairwise"]["datasets"][0]["fingerprint"] == fingerprint["pairwise"]


def test_wandb_scorecard_records_every_model_s_provenance(offline, tmp_path, small_defaults):
    out = tmp_path / "card"
    rc = main(["scorecard", "--model", "pos=scripted:position-locked", "--audits", "preference", "--n-resamples",
               "200", "--size", "small", "--out", str(out), "--report-to", "wandb", "--run-name", "card"])
    assert rc == 0
    config = run_configs(offline)["card"]
    assert config["model"] == ["pos=scripted:position-locked"]  # the command line's --model, untouched
    assert {key.split("/")[0] for key in config["provenance"]} == {"pos", "oracle"}
    assert {"kind": "scripted", "model": "position-locked"} in config["model_identities"]
    rows = [json.loads(line) for line in next(out.glob("models/pos/*.jsonl")).read_text().splitlines()]
    assert rows[0]["provenance"]["dataset"]["fingerprint"] in config["dataset_fingerprints"]


def test_files_without_provenance_add_nothing(tmp_path):
    from omniaudit.evaluation.tracking import provenance_config

    (tmp_path / "answers.csv").write_text("id,label\n1,a\n")
    (tmp_path / "plain.jsonl").write_text('{"id": "1", "response": "yes"}\n')
    (tmp_path / "torn.jsonl").write_text('{"id": "1", "provenance": {"judge": "x"}}\n{not json\n')
    assert provenance_config([tmp_path / n for n in ("answers.csv", "plain.jsonl", "torn.jsonl", "gone.jsonl")]) == {}
