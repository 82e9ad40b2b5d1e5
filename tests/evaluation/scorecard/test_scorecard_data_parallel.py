"""`accelerate launch -m omniaudit scorecard` (scale issue: the engines users already run): every judge run of the
scorecard is split across the launched processes (rank r answers shard r/N, the main process merges), only the main
process audits and writes the card, and the folder is byte for byte the single-process scorecard's: the same card
files, predictions, audit folders and statuses; every item of every model, config and run answered exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
MODELS = ["pos=scripted:position-locked"]  # and scripted:oracle, which always runs


def free_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def logging_script(tmp_path: Path) -> Path:
    """``omniaudit`` with every scripted answer logged (rank, judge, item id) into ``tmp_path/answers.RANK``."""
    script = tmp_path / "logged.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, sys
        from omniaudit.cli import main
        from omniaudit.runners.scripted import ScriptedJudge

        original = ScriptedJudge.answer

        def answer(self, items, progress=None):
            rank = os.environ.get("RANK", "single")
            with open({str(tmp_path)!r} + f"/answers.{{rank}}", "a", encoding="utf-8") as fh:
                for item in items:
                    fh.write(json.dumps([self.name, item.id]) + "\\n")
            return original(self, items, progress)

        ScriptedJudge.answer = answer
        sys.exit(main())
    """))
    return script


def environment() -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):  # the launcher sets them for its processes
        env.pop(name, None)
    return env


def scorecard(script: Path, out: Path, *extra: str, launched: bool) -> subprocess.CompletedProcess:
    """The scorecard of the small embedded defaults, in one process or launched on two CPU processes (gloo)."""
    args = ["scorecard", "--model", *MODELS, "--size", "small", "--n-resamples", "200", "--out", str(out), *extra]
    if launched:
        cmd = [str(BIN / "accelerate"), "launch", "--config_file", str(REPO / "accelerate_configs/cpu_2proc.yaml"),
               "--main_process_port", free_port(), str(script), *args]
    else:
        cmd = [sys.executable, str(script), *args]
    return subprocess.run(cmd, cwd=out.parent, env=environment(), capture_output=True, text=True, timeout=600)


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def answers(tmp_path: Path, ranks: list[str]) -> Counter:
    logged = Counter()
    for rank in ranks:
        lines = (tmp_path / f"answers.{rank}").read_text(encoding="utf-8").splitlines()
        assert lines, f"rank {rank} answered nothing"
        logged.update(tuple(json.loads(line)) for line in lines)
    return logged


def rows(folder: Path) -> Counter:
    """(scripted judge, item id) of every predictions row of the folder: one answer each."""
    specs = {name: entry["spec"].partition(":")[2]
             for name, entry in json.loads((folder / "scorecard.json").read_text())["models"].items()}
    counted = Counter()
    for path in folder.glob("models/*/*.jsonl"):
        counted.update((specs[path.parent.name], json.loads(line)["id"]) for line in path.read_text().splitlines())
    return counted


def single_and_launched(tmp_path: Path, *extra: str) -> tuple[dict, dict, subprocess.CompletedProcess, Counter]:
    """The same scorecard into the same --out (audit reports name their folder), first in one process (then moved
    aside), then launched; (single files, launched files, the launch, the launch's answers)."""
    script = logging_script(tmp_path)
    out = tmp_path / "card"
    single = scorecard(script, out, *extra, launched=False)
    assert single.returncode == 0, single.stderr[-4000:]
    once = answers(tmp_path, ["single"])
    assert once == rows(out)  # the log sees every answer
    out.rename(tmp_path / "single")
    launched = scorecard(script, out, *extra, launched=True)
    assert launched.returncode == 0, launched.stderr[-4000:]
    return files(tmp_path / "single"), files(out), launched, answers(tmp_path, ["0", "1"])


@pytest.mark.slow  # a single-process smoke scorecard of every audit and a two-process launch of it: about 30 s
def test_a_launched_scorecard_writes_the_single_process_folder(tmp_path):
    """Every audit under a launch, on a --limit sample (one launch covers both: the sample is drawn before the ranks
    split it, so the merged files are the single process's limited files, and the smoke card the same)."""
    single, launched, result, answered = single_and_launched(tmp_path, "--limit", "12")
    # the judge runs of all four audits (preference, protocols, interventions, composition) and their statuses
    assert {"scorecard.json", "scorecard.md", "scorecard.html", "models/pos/pairwise.jsonl",
            "models/pos/samples.jsonl", "models/oracle/status.json", "models/pos/judge.jsonl",
            "models/pos/diagnostic.jsonl"} <= set(single)
    assert sorted(launched) == sorted(single)  # nothing more (no part, journal or lock left), nothing less
    for name, data in single.items():
        assert launched[name] == data, f"{name} differs from the single-process scorecard's"
    # every item of every model, config and run answered once, by one of the two ranks
    assert answered == rows(tmp_path / "card")
    assert json.loads(launched["scorecard.json"])["smoke"]["limit"] == 12
    assert "verdicts are not valid" in result.stdout
    # the card was written and summarised once, by the main process; the other rank said nothing on stdout
    assert result.stdout.count("scorecard: ") == 1 and result.stdout.count("pos: ") == 1, result.stdout
    assert "Gloo" not in result.stdout


@pytest.mark.slow  # one launch that stops before the processes meet: about 10 s
def test_a_launch_with_shard_is_refused_once(tmp_path):
    script = logging_script(tmp_path)
    out = tmp_path / "card"
    result = scorecard(script, out, "--shard", "0/2", launched=True)
    assert result.returncode != 0
    assert result.stderr.count("cannot be combined with a multi-process launch") == 1, result.stderr[-3000:]
    assert not out.exists()
