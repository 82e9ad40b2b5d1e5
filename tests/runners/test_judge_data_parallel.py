"""`accelerate launch -m omniaudit judge` (scale issue: data parallel on the launcher users already run): rank r of N
judges shard r/N into its own part beside --out, the main process merges the parts into the single-process file,
byte for byte, and says the summary once; a killed rank resumes its own part. Also `judge --limit N` (smoke runs,
refused by the audits as incomplete) and journals created only with the first answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.predictions import check_predictions
from omniaudit.runners import rows as rows_module
from omniaudit.runners import run as run_module
from omniaudit.runners import run_judge
from omniaudit.runners.data_parallel import _finish, launch_world, part_path
from omniaudit.runners.items import load_items
from omniaudit.runners.run import CHUNK
from omniaudit.runners.scripted import ScriptedJudge
from omniaudit.runners.shards import limit_positions, merge_predictions

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLING = ["--temperature", "1.0", "--seed", "5", "--runs", "2"]
ARGS = {"temperature": 1.0, "seed": 5, "runs": 2}


def free_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return str(sock.getsockname()[1])


def launch(dataset: Path, out: Path, *extra: str, script: Path | None = None, env: dict | None = None,
           timeout: int = 300) -> subprocess.CompletedProcess:
    """`accelerate launch --config_file accelerate_configs/cpu_2proc.yaml -m omniaudit judge ...` (or a script that
    runs the same command), offline, on a free port."""
    target = [str(script)] if script else ["-m", "omniaudit"]
    cmd = [str(BIN / "accelerate"), "launch", "--config_file", str(REPO / "accelerate_configs/cpu_2proc.yaml"),
           "--main_process_port", free_port(), *target, "judge", "--dataset", str(dataset), "--config", "blueprint",
           "--judge", "scripted:random", *SAMPLING, "--out", str(out), *extra]
    full_env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "OMP_NUM_THREADS": "1",
                **(env or {})}
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):  # the launcher sets them for its processes
        full_env.pop(name, None)
    return subprocess.run(cmd, cwd=out.parent, env=full_env, capture_output=True, text=True, timeout=timeout)


def leftovers(out: Path) -> list[str]:
    """Everything beside ``out`` that a run may leave (parts, journals, locks, temporaries)."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith((f".{out.name}", f"{out.name}.")))


def keys(path: Path) -> list[tuple]:
    return [(r["id"], r["order"], r["run"]) for r in map(json.loads, path.read_text().splitlines())]


def test_a_two_process_launch_writes_the_single_process_file(protocol_dataset, tmp_path):
    """Two CPU processes (gloo): each judges its half, the main one merges; the file is byte for byte the
    single-process run's, every item of every run answered once, the summary said once, nothing left beside it."""
    clean = tmp_path / "clean.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", clean, **ARGS)
    out = tmp_path / "x.jsonl"
    result = launch(protocol_dataset, out)
    assert result.returncode == 0, result.stderr[-4000:]
    assert out.read_bytes() == clean.read_bytes()
    answered = keys(out)
    assert len(answered) == len(set(answered)) == len(keys(clean))
    assert result.stdout.count(" judged") == 1, result.stdout
    assert "judged by 2 processes" in result.stdout and result.stdout.count("predictions:") == 1
    assert "Gloo" not in result.stdout and "error" not in result.stderr.lower(), result.stderr[-2000:]
    assert leftovers(out) == []


@pytest.mark.slow  # two launches: 10-16 s on 2 busy cores
def test_a_killed_rank_resumes_its_own_part(protocol_dataset, tmp_path):
    """Rank 1 is killed (SIGKILL) after its first chunk, once rank 0 has written its part: the launch fails and
    leaves the parts' journals. The rerun asks rank 0 nothing and rank 1 only what it had not answered, and writes
    the single-process file."""
    clean = tmp_path / "clean.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", clean, **ARGS)
    out = tmp_path / "x.jsonl"
    script = tmp_path / "faulty.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys, time
        from pathlib import Path
        from omniaudit.cli import main
        from omniaudit.runners.scripted import ScriptedJudge

        rank, original, calls = os.environ["RANK"], ScriptedJudge.answer, []

        def answer(self, items, progress=None):
            calls.append(len(items))
            if os.environ.get("KILL") and rank == "1" and len(calls) == 2:
                while not Path({str(part_path(out, 0, 2))!r}).exists():  # rank 0 has finished its part
                    time.sleep(0.05)
                os.kill(os.getpid(), signal.SIGKILL)
            with open({str(tmp_path)!r} + f"/asked-{{rank}}.txt", "a") as fh:
                fh.write(f"{{len(items)}}\\n")
            return original(self, items, progress)

        ScriptedJudge.answer = answer
        sys.exit(main())
    """))
    killed = launch(protocol_dataset, out, script=script, env={"KILL": "1"})
    assert killed.returncode != 0 and not out.exists()
    asked = {r: sum(map(int, (tmp_path / f"asked-{r}.txt").read_text().split())) for r in (0, 1)}
    per_rank = len(keys(clean)) // 2
    assert asked == {0: per_rank, 1: CHUNK}
    journals = {p.name for p in tmp_path.glob(".x.jsonl.rank-*-of-2.journal-*.jsonl")}
    assert len(journals) == 2  # rank 0's whole part, rank 1's first chunk
    for r in (0, 1):
        (tmp_path / f"asked-{r}.txt").unlink()
    again = launch(protocol_dataset, out, script=script)
    assert again.returncode == 0, again.stderr[-4000:]
    assert not (tmp_path / "asked-0.txt").exists()  # rank 0 resumed every answer
    assert sum(map(int, (tmp_path / "asked-1.txt").read_text().split())) == per_rank - CHUNK
    assert out.read_bytes() == clean.read_bytes()
    assert again.stdout.count(" judged") == 1
    assert leftovers(out) == []


def test_shard_with_a_launch_is_refused_in_one_line(protocol_dataset, tmp_path):
    out = tmp_path / "x.jsonl"
    result = launch(protocol_dataset, out, "--shard", "0/2")
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "--shard 0/2 cannot be combined with a multi-process launch" in lines[0], result.stderr
    assert not out.exists() and leftovers(out) == []


def test_launch_world_reads_the_launchers_environment(monkeypatch):
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert launch_world() is None
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert launch_world() is None
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("LOCAL_RANK", "2")
    assert launch_world() == (2, 4)
    monkeypatch.setenv("RANK", "3")
    assert launch_world() == (3, 4)
    monkeypatch.setenv("RANK", "4")
    with pytest.raises(InputError, match="RANK 4 is not one of"):
        launch_world()


def test_shard_with_a_launch_is_refused_before_any_work(protocol_dataset, tmp_path, monkeypatch, capsys):
    """In-process, as rank 0 of 2 sees it: the one line, exit 2, nothing written and no process group joined."""
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    out = tmp_path / "x.jsonl"
    code = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge", "scripted:random",
                 "--shard", "1/2", "--out", str(out)])
    assert code == 2
    assert "cannot be combined with a multi-process launch (WORLD_SIZE=2)" in capsys.readouterr().err
    assert not out.exists() and leftovers(out) == []
    monkeypatch.setenv("RANK", "1")  # another rank: quietly, the main process says it
    with pytest.raises(SystemExit) as info:
        main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge", "scripted:random",
              "--shard", "1/2", "--out", str(out)])
    assert info.value.code == 0 and capsys.readouterr().err == ""


def _parts(dataset: Path, out: Path, world: int = 2) -> list[dict]:
    """What the ranks of a data-parallel run leave for the main process: their parts, journals and counts."""
    return [{"counts": run_judge(dataset, "blueprint", "scripted:random", part_path(out, r, world), shard=(r, world),
                                 keep_journal=True, **ARGS), "warnings": []} for r in range(world)]


def test_the_main_process_merges_the_parts_and_removes_them(protocol_dataset, tmp_path):
    clean = tmp_path / "clean.jsonl"
    single = run_judge(protocol_dataset, "blueprint", "scripted:random", clean, **ARGS)
    out = tmp_path / "x.jsonl"
    outcomes = _parts(protocol_dataset, out)
    assert all(Path(o["counts"]["journal"]).is_file() for o in outcomes)  # kept: a rerun resumes every answer
    counts = _finish(out, "scripted:random", 2, outcomes, None, 0.2, None, judged=True)
    assert out.read_bytes() == clean.read_bytes() and leftovers(out) == []
    assert counts["processes"] == 2 and counts["shard"] is None and "journal" not in counts
    assert {k: counts[k] for k in ("items", "rows", "closed", "parsed", "usable")} == \
        {k: single[k] for k in ("items", "rows", "closed", "parsed", "usable")}


def test_a_failed_rank_is_reported_once_and_the_parts_are_kept(protocol_dataset, tmp_path):
    out = tmp_path / "x.jsonl"
    outcomes = _parts(protocol_dataset, out)
    outcomes[1] = {"error": "the server went away.", "warnings": [("AnswerFormatWarning", "ignored on 3 of 9")]}
    with pytest.warns(run_module.AnswerFormatWarning, match="rank 1 of 2: ignored on 3 of 9"), \
            pytest.raises(InputError, match=r"^rank 1 of 2: the server went away\. The finished parts .* resumes"):
        _finish(out, "scripted:random", 2, outcomes, None, 0.2, None, judged=True)
    assert not out.exists() and part_path(out, 0, 2).exists()


def test_an_unusable_run_is_checked_over_all_parts_and_writes_nothing(protocol_dataset, tmp_path, monkeypatch):
    """The main process checks --min-usable over the whole run, as one process does; an unusable run writes nothing
    and leaves no part or journal (a rerun asks again)."""
    out = tmp_path / "x.jsonl"
    outcomes = _parts(protocol_dataset, out)
    monkeypatch.setattr(rows_module, "usable", lambda row: False)
    with pytest.raises(rows_module.UnusableRun, match="0 usable answers"):
        _finish(out, "openai:m@http://127.0.0.1:1/v1", 2, outcomes, None, 0.2, None, judged=True)
    assert not out.exists() and leftovers(out) == []


# ---------------------------------------------------------------------------------------------------- judge --limit
def judge(dataset: Path, out: Path, *extra: str) -> int:
    return main(["judge", "--dataset", str(dataset), "--config", "blueprint", "--judge", "scripted:random",
                 *SAMPLING, "--out", str(out), *extra])


def test_limit_judges_a_seeded_sample_and_the_audits_refuse_it(protocol_dataset, tmp_path, capsys):
    full = tmp_path / "full.jsonl"
    assert judge(protocol_dataset, full) == 0
    out = tmp_path / "smoke.jsonl"
    assert judge(protocol_dataset, out, "--limit", "5") == 0
    said = capsys.readouterr().out
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    first = [json.loads(x) for x in full.read_text().splitlines()]
    n_items = len(first) // 2
    assert "5 items x 2 runs judged (--limit 5:" in said
    sample = limit_positions(load_items(protocol_dataset, "blueprint"), 5, 5)  # seeded by --seed 5
    assert sample != list(range(5))  # a sample, not the first items
    assert [(r["id"], r["run"]) for r in rows] == [(r["id"], r["run"]) for i, r in enumerate(first)
                                                   if i % n_items in sample]
    selection = rows[0]["provenance"]["selection"]
    assert selection["limit"] == 5 and selection["limit_seed"] == 5 and selection["items"] == n_items
    with pytest.raises(InputError, match=r"omniaudit judge --limit 5.*--partial"):
        check_predictions(pd.read_json(out, lines=True), out, protocol_dataset, ("blueprint",))
    prov = check_predictions(pd.read_json(out, lines=True), out, protocol_dataset, ("blueprint",), partial=True)
    assert prov.missing == (n_items - 5) * 2 and prov.complete is False
    # a limit at or above the selection changes nothing: the file is the unlimited run's
    again = tmp_path / "again.jsonl"
    assert judge(protocol_dataset, again, "--limit", str(n_items)) == 0
    assert again.read_bytes() == full.read_bytes()


def test_limited_shards_merge_into_the_limited_run(protocol_dataset, tmp_path):
    single = tmp_path / "smoke.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", single, limit=9, **ARGS)
    shards = [tmp_path / f"s{i}.jsonl" for i in range(3)]
    for i, shard in enumerate(shards):
        run_judge(protocol_dataset, "blueprint", "scripted:random", shard, shard=(i, 3), limit=9, **ARGS)
    merge_predictions(tmp_path / "merged.jsonl", shards)
    assert (tmp_path / "merged.jsonl").read_bytes() == single.read_bytes()


@pytest.mark.parametrize("value", ["0", "-1", "2.5", "nan", "x"])
def test_limit_must_be_a_positive_integer(protocol_dataset, tmp_path, capsys, value):
    with pytest.raises(SystemExit) as info:
        judge(protocol_dataset, tmp_path / "p.jsonl", "--limit", value)
    assert info.value.code == 2
    assert "argument --limit: expected an integer >= 1" in capsys.readouterr().err
    with pytest.raises(InputError, match="limit must be an integer >= 1"):
        run_judge(protocol_dataset, "blueprint", "scripted:random", tmp_path / "p.jsonl", limit=0)
    assert not list(tmp_path.iterdir())


# ------------------------------------------------------------------------------------------------------- journals
def test_the_journal_is_created_with_the_first_answer(protocol_dataset, tmp_path, monkeypatch):
    """Until the first chunk is answered there is no journal, so a run killed (even by SIGKILL, which runs no
    cleanup) or stopped before its first answer leaves none; after it, the journal holds that chunk."""
    out = tmp_path / "p.jsonl"
    original, seen = ScriptedJudge.answer, []

    def answer(self, items, progress=None):
        seen.append(sorted(p.name for p in tmp_path.glob(".p.jsonl.journal-*")))
        if len(seen) == 2:
            raise KeyboardInterrupt
        return original(self, items, progress)

    monkeypatch.setattr(ScriptedJudge, "answer", answer)
    with pytest.raises(KeyboardInterrupt):
        run_judge(protocol_dataset, "blueprint", "scripted:random", out, **ARGS)
    assert seen[0] == [] and len(seen[1]) == 1
    journal = tmp_path / seen[1][0]
    assert len(journal.read_text().splitlines()) == CHUNK and not out.exists()
