"""`omniaudit scorecard --limit N` (scale issue: smoke runs): every judge run answers `judge --limit N`'s seeded,
stratified sample of every item config, the audits read those runs as partial runs, the card is marked a smoke run
whose verdicts are not valid (shown, never gated by the calibration: exit 0), and a limited run's answers are never
reused by a full run, nor a full run's by a limited one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard import ScorecardOptions, run_scorecard
from omniaudit.evaluation.scorecard.card import calibration
from omniaudit.runners import run as run_module
from omniaudit.runners import run_judge

BANNER = "smoke run: at most 10 items per config \u2014 verdicts are not valid"
REFERENCES = ["--references"]  # the planted models beside the oracle: the calibration a full run would gate on


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, small_defaults) -> Path:
    """The reference models' smoke run of the small defaults (datasets built once for the module)."""
    out = tmp_path_factory.mktemp("smoke") / "card"
    assert main(["scorecard", "--model", "x=scripted:random", *REFERENCES, "--size", "small", "--limit", "10",
                 "--n-resamples", "200", "--out", str(out)]) == 0
    return out


def _card(out: Path) -> dict:
    return json.loads((out / "scorecard.json").read_text(encoding="utf-8"))


def _data(smoke: Path, *audits: str) -> list[str]:
    return ["--data", *(f"{a}={smoke / 'datasets' / a}" for a in audits)]


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_smoke_card_is_marked_and_every_verdict_shown(smoke):
    card = _card(smoke)
    assert card["smoke"]["limit"] == 10 and card["smoke"]["valid"] is False and card["smoke"]["text"] == BANNER
    md = (smoke / "scorecard.md").read_text(encoding="utf-8")
    page = (smoke / "scorecard.html").read_text(encoding="utf-8")
    assert md.startswith(f"# Shortcut scorecard ({BANNER})")
    assert f"<title>Shortcut scorecard ({BANNER})</title>" in page
    for name, entry in card["models"].items():
        assert entry["summary"].startswith(BANNER + ": "), name
        assert set(entry["shortcuts"]) == set(card["shortcuts"])  # every verdict is there, as computed
    assert re.search(r"\| judge (\d+) of (\d+) \|", md)  # the items asked beside the config's


def test_the_calibration_is_not_applied_to_a_smoke_run(smoke):
    """The planted models measured on 10 items are not all flagged: a full run would mark the card CALIBRATION
    FAILED and exit 3; the smoke run says the check does not apply, keeps the verdicts as they are and exits 0."""
    card = _card(smoke)
    verdicts = {m: e["shortcuts"] for m, e in card["models"].items()}
    would = calibration({m: e["spec"] for m, e in card["models"].items()}, verdicts)
    assert not all(c["ok"] for c in would.values())  # the gate a full run would apply fails here
    assert card["calibrated"] is None
    assert all(c["ok"] is None and "not applicable" in c["why"][0] for c in card["calibration"].values())
    assert "CALIBRATION FAILED" not in (smoke / "scorecard.md").read_text(encoding="utf-8")
    assert not any(v.get("calibration") for e in verdicts.values() for v in e.values())


def test_every_judge_run_is_the_judges_limit_sample(smoke, tmp_path):
    """Each predictions file is what `judge --limit 10` writes (seeded, stratified, whole groups): byte for byte."""
    card = _card(smoke)
    for path in sorted(smoke.glob("models/*/*.jsonl")):
        rows = _rows(path)
        selection = rows[0]["provenance"]["selection"]
        assert selection["limit"] == 10 and selection["limit_seed"] == 0, path
        assert len({(r["id"], r["order"]) for r in rows}) <= 10 < selection["items"], path
    for name, audit, config in (("pos", "preference", "judge"), ("label", "protocols", "blueprint"),
                                ("dominant", "composition", "ablations")):
        runs = card["audits"][audit]["runs"][config]
        alone = tmp_path / f"{name}-{config}.jsonl"
        run_judge(smoke / "datasets" / audit, config, card["models"][name]["spec"], alone, limit=10, runs=runs)
        assert alone.read_bytes() == (smoke / "models" / name / f"{config}.jsonl").read_bytes()


def test_the_audits_read_the_sample_as_a_partial_run(smoke):
    """preference and interventions audit the answered items (their reports say so); protocols and composition,
    which read whole groups and every sample, cannot read a sample: skipped with the reason, not failed."""
    card = _card(smoke)
    for name, entry in card["models"].items():
        audits = entry["audits"]
        assert audits["preference"]["status"] == "ran", (name, audits["preference"])
        assert audits["interventions"]["status"] in ("ran", "not answering"), (name, audits["interventions"])
        for audit in ("protocols", "composition"):
            assert audits[audit]["status"] in ("ran", "skipped"), (name, audit, audits[audit])
            if audits[audit]["status"] == "skipped":
                assert audits[audit]["reason"].startswith("not audited in this smoke run"), audits[audit]
        assert not [a for a, e in audits.items() if e["status"] == "failed"], name
    audit = json.loads((smoke / "models/pos/preference/audit.json").read_text(encoding="utf-8"))
    assert audit.get("judged_only")


@pytest.mark.slow  # five scorecards of two models: about 20 s
def test_limited_and_full_answers_are_never_reused_for_each_other(smoke, tmp_path, monkeypatch):
    """limited, limited again (all reused), full (all asked afresh, not the limited files), full again (all reused),
    limited (all asked afresh): the limit is part of every reuse key, of the predictions and of the audits."""
    asked: list[tuple[str, str, int | None]] = []
    real = run_module.run_judge

    def counting(*args, **kwargs):
        asked.append((args[1], args[2], kwargs.get("limit")))
        return real(*args, **kwargs)

    monkeypatch.setattr(run_module, "run_judge", counting)
    out = tmp_path / "card"
    argv = ["scorecard", "--model", "x=scripted:random", "--audits", "preference,interventions",
            *_data(smoke, "preference", "interventions"), "--n-resamples", "200", "--out", str(out)]
    every = {("judge", "scripted:random"), ("judge", "scripted:oracle"), ("diagnostic", "scripted:random"),
             ("diagnostic", "scripted:oracle")}
    for limit, fresh in ((10, True), (10, False), (None, True), (None, False), (10, True)):
        asked.clear()
        assert main([*argv, *(["--limit", str(limit)] if limit else [])]) == 0
        assert {(c, s) for c, s, _ in asked} == (every if fresh else set()), (limit, asked)
        assert {lim for *_, lim in asked} <= {limit}
        card = _card(out)
        assert (card.get("smoke") or {}).get("limit") == limit
        for name in ("x", "oracle"):
            selection = _rows(out / "models" / name / "judge.jsonl")[0]["provenance"]["selection"]
            assert selection.get("limit") == limit
            status = json.loads((out / "models" / name / "status.json").read_text(encoding="utf-8"))
            assert status["preference"]["status"] == "ran"
        assert ("smoke run" in (out / "scorecard.md").read_text(encoding="utf-8")) == (limit is not None)


def test_a_limit_below_a_whole_group_is_refused_before_any_model_call(smoke, tmp_path, monkeypatch, capsys):
    asked = []
    monkeypatch.setattr(run_module, "run_judge", lambda *a, **k: asked.append(a))
    out = tmp_path / "card"
    argv = ["scorecard", "--model", "x=scripted:random", "--audits", "preference", *_data(smoke, "preference"),
            "--limit", "1", "--out", str(out)]
    assert main(argv) == 2
    assert "holds no whole item group of preference judge" in " ".join(capsys.readouterr().err.split())
    assert asked == [] and not list(out.glob("models/*/*.jsonl"))


def test_a_limit_must_be_a_positive_integer(tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["scorecard", "--model", "x=scripted:random", "--limit", "0", "--out", str(tmp_path / "card")])
    assert exc.value.code == 2
    with pytest.raises(InputError, match="limit must be an integer >= 1"):
        run_scorecard(tmp_path / "card", ["x=scripted:random"], ScorecardOptions(limit=0))


def test_python_dash_m_omniaudit_runs_a_smoke_scorecard(smoke, tmp_path):
    """`python -m omniaudit scorecard` (what `accelerate launch -m omniaudit scorecard` runs in each process)."""
    out = tmp_path / "card"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-m", "omniaudit", "scorecard", "--model", "x=scripted:random",
                             "--audits", "preference", *_data(smoke, "preference"), "--limit", "10",
                             "--n-resamples", "200", "--out", str(out)], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.rstrip().endswith(f"{BANNER} (run without --limit for the card)"), result.stdout
    assert _card(out)["smoke"]["limit"] == 10
