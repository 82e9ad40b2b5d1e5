"""The one Audit contract (omniaudit/audits.py): a fifth audit registered from outside omniaudit runs through build,
judge, audit, scorecard and wandb like the built-ins, and the registry refuses what breaks the contract."""

from __future__ import annotations

import json
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from toy_audit import SLOT_A, ToyAudit
from wandb_records import offline_runs

from omniaudit import audits
from omniaudit.audits import AUDITS, Audit, get, register_audit, unregister_audit
from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.results import AuditOptions, AuditResult, AuditRun


@pytest.fixture
def toy():
    audit = register_audit(ToyAudit)
    yield audit
    unregister_audit("toy")


def test_a_registered_audit_runs_build_judge_audit_scorecard_and_wandb(toy, tmp_path, offline, capsys):
    """The toy fifth audit touches no file of omniaudit: the registry, the CLI, the scorecard and tracking read it
    through the contract alone."""
    from omniaudit.evaluation.tracking import TrackingOptions, tracking_run

    assert main(["audits", "--json"]) == 0
    listed = {a["name"]: a for a in json.loads(capsys.readouterr().out)}
    assert listed["toy"]["item_configs"] == {"items": ["text"]} and listed["toy"]["shortcuts"] == ["position"]

    dataset = toy.build(tmp_path / "toy-data", "small")
    answers = tmp_path / "pos.jsonl"
    assert main(["judge", "--dataset", str(dataset), "--config", "items", "--judge", "scripted:position-locked",
                 "--out", str(answers), "-q"]) == 0
    result = get("toy").audit(tmp_path / "audit", dataset, {"pos": {"items": answers}}, AuditOptions())
    assert isinstance(result, AuditResult) and result.get("models.pos.slot_a.value") == 1.0
    assert {e.path: e.value for e in result.estimates()}[("models", "pos", "accuracy")] == 0.5

    card = tmp_path / "card"
    assert main(["scorecard", "--model", "pos=scripted:position-locked", "--audits", "toy", "--n-resamples", "200",
                 "--out", str(card), "--report-to", "wandb", "--run-name", "toy-card", "-q"]) == 0
    verdicts = json.loads((card / "scorecard.json").read_text())["models"]
    position = {m: verdicts[m]["shortcuts"]["position"] for m in ("pos", "oracle")}
    assert position["pos"]["status"] == "flagged" and position["pos"]["audit"] == "toy"
    assert position["oracle"]["status"] == "clear" and position["pos"]["audits"] == {"preference": "not run",
                                                                                       "protocols": "not run",
                                                                                       "toy": "ran"}
    assert [e["key"] for e in position["pos"]["evidence"]] == [SLOT_A.key]
    assert verdicts["pos"]["shortcuts"]["style"]["status"] == "not measured"
    assert position["pos"]["evidence"][0]["source"] == "toy/answers.csv"
    assert "models/pos/toy/report.md" in (card / "scorecard.md").read_text()

    with tracking_run(TrackingOptions("wandb", run_name="toy-audit"), job="audit", kind="toy") as run:
        run.log_audit("toy", card / "models" / "pos" / "toy")
    runs = offline_runs(offline)
    assert runs["toy-card"]["summary"]["scorecard/pos/position/flagged"] == 1.0
    assert runs["toy-audit"]["summary"]["slot_a/pos"] == 1.0
    assert {"audit"} <= {a["type"] for a in runs["toy-audit"]["artifacts"]}


def test_an_installed_entry_point_adds_an_audit(tmp_path, monkeypatch):
    import importlib.metadata

    (tmp_path / "lab_audit.py").write_text("from toy_audit import ToyAudit\n\n\nclass LabAudit(ToyAudit):\n"
                                           "    name = 'lab'\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    point = EntryPoint(name="lab", value="lab_audit:LabAudit", group=audits.ENTRY_POINT_GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **_: [point] if group == audits.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(AUDITS, "_plugins", None)
    try:
        assert list(AUDITS)[-1] == "lab" and get("lab").title == ToyAudit.title
        with pytest.raises(InputError, match="unknown audit; expected one of preference, .*lab"):
            get("nope")
    finally:
        AUDITS._loaded.pop("lab", None)
        AUDITS._plugins = None
        sys.modules.pop("lab_audit", None)


def test_the_registry_refuses_what_breaks_the_contract(monkeypatch):
    class Preference(ToyAudit):
        name = "preference"

    with pytest.raises(InputError, match="a built-in audit has this name"):
        register_audit(Preference)
    with pytest.raises(InputError, match="not an omniaudit Audit"):
        register_audit(object())  # type: ignore[arg-type]

    class Nameless(Audit):
        pass

    with pytest.raises(InputError, match="declares no name"):
        register_audit(Nameless)


def test_measures_of_a_shortcut_missing_from_the_table_are_refused(toy, tmp_path):
    from omniaudit.evaluation.scorecard.rules import measures

    class Stray(ToyAudit):
        name = "stray"

        def measures(self, run):
            return {"sycophancy": []}, {}

    register_audit(Stray)
    try:
        with pytest.raises(InputError, match="measures a shortcut the table does not have.*sycophancy"):
            measures({"stray": AuditRun("ran", tmp_path, name="x")})
    finally:
        unregister_audit("stray")


def test_every_built_in_audit_is_listed_without_importing_a_heavy_library():
    import subprocess

    code = ("import sys; from omniaudit.audits import AUDITS; names = [a.name for a in AUDITS.values()]; "
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'numpy', 'torch', 'datasets'}); "
            "print(names, heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).parent)
    assert done.stdout.strip() == "['preference', 'interventions', 'protocols', 'composition'] []"
