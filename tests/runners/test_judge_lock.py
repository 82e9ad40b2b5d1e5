"""One `omniaudit judge` run per output file (issue 26): the lock covers the whole run, journal included; a second
run on the same --out is refused at once and writes nothing; a killed run's lock does not block the rerun, which
resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.locks import lock_path
from omniaudit.runners import run_judge
from omniaudit.runners.run import CHUNK
from omniaudit.runners.scripted import ScriptedJudge

ARGS = {"temperature": 1.0, "seed": 5, "runs": 2}


def leftovers(out: Path) -> list[str]:
    """Everything a run left beside ``out`` (journals, locks, temporaries), ``out`` itself aside."""
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def test_a_second_run_on_the_same_out_is_refused_at_once(protocol_dataset, tmp_path, monkeypatch):
    """While a (slow) run is answering, a second run on its file stops at once with an InputError naming the file;
    the first completes with all its answers and leaves no journal."""
    clean = tmp_path / "clean.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", clean, **ARGS)
    answering, refused = threading.Event(), threading.Event()
    original = ScriptedJudge.answer

    def slow(self, items, progress=None):
        answering.set()
        refused.wait(30)  # hold the run (and its lock) until the second run has been turned away
        return original(self, items, progress)

    monkeypatch.setattr(ScriptedJudge, "answer", slow)
    out = tmp_path / "p.jsonl"
    results: dict[str, object] = {}

    def first() -> None:
        try:
            results["first"] = run_judge(protocol_dataset, "blueprint", "scripted:random", out, **ARGS)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertions below
            results["first"] = exc

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert answering.wait(30), "the first run did not start answering"
        started = time.monotonic()
        with pytest.raises(InputError) as caught:
            run_judge(protocol_dataset, "blueprint", "scripted:random", out, **ARGS)
        assert time.monotonic() - started < 5  # at once, not after the first run
        assert not out.exists()
    finally:
        refused.set()
        thread.join(60)
    message = str(caught.value)
    assert "another omniaudit run" in message and str(out.resolve()) in message and "\n" not in message
    counts = results["first"]
    assert isinstance(counts, dict), counts
    assert counts["rows"] == len(clean.read_text().splitlines()) and counts["resumed"] == 0
    assert out.read_bytes() == clean.read_bytes()  # every answer of the first run, none of the second
    assert leftovers(out) == []  # journal and lock gone


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from omniaudit.runners import run_judge
    from omniaudit.runners.scripted import ScriptedJudge

    dataset, out, ready = sys.argv[1:4]
    original, calls = ScriptedJudge.answer, []

    def stalls_after_one_chunk(self, items, progress=None):
        calls.append(len(items))
        if len(calls) == 2:  # one chunk is in the journal: signal, then hang until killed
            Path(ready).touch()
            time.sleep(120)
        return original(self, items, progress)

    ScriptedJudge.answer = stalls_after_one_chunk
    run_judge(dataset, "blueprint", "scripted:random", out, temperature=1.0, seed=5, runs=2)
""")


def test_another_process_is_refused_and_its_killed_lock_does_not_block_the_rerun(protocol_dataset, tmp_path,
                                                                                  capsys):
    """A run in another process holds the file: `omniaudit judge` on it exits 2 with one line and writes nothing.
    Killed mid-run, that process leaves its lock file and a journal; the rerun takes the lock and resumes."""
    clean = tmp_path / "clean.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", clean, **ARGS)
    out, ready = tmp_path / "p.jsonl", tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(protocol_dataset), str(out), str(ready)])
    try:
        deadline = time.time() + 120
        while not ready.exists():
            assert proc.poll() is None and time.time() < deadline, "the holder process did not start answering"
            time.sleep(0.05)
        before = leftovers(out)
        code = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge",
                     "scripted:random", "--temperature", "1.0", "--seed", "5", "--runs", "2", "--out", str(out)])
        assert code == 2
        err = capsys.readouterr().err
        assert "another omniaudit run" in err and f"process {proc.pid}" in err and out.name in err
        assert not out.exists() and leftovers(out) == before  # nothing written, the holder's journal untouched
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    lock = lock_path(out)
    assert lock.exists() and lock.read_text().strip() == str(proc.pid)  # what the killed run left
    journals = list(tmp_path.glob(".p.jsonl.journal-*"))
    assert len(journals) == 1 and len(journals[0].read_text().splitlines()) == CHUNK
    counts = run_judge(protocol_dataset, "blueprint", "scripted:random", out, **ARGS)
    assert counts["resumed"] == CHUNK
    assert out.read_bytes() == clean.read_bytes()
    assert leftovers(out) == []


def test_a_run_that_writes_nothing_leaves_no_empty_journal(protocol_dataset, tmp_path, monkeypatch):
    """A run that fails before its first answer is journalled leaves neither a journal nor a lock; neither does a
    run refused because the file is not ours."""

    def fails(self, items, progress=None):
        raise InputError("the judge broke")

    monkeypatch.setattr(ScriptedJudge, "answer", fails)
    out = tmp_path / "p.jsonl"
    with pytest.raises(InputError, match="the judge broke"):
        run_judge(protocol_dataset, "blueprint", "scripted:random", out, **ARGS)
    assert not out.exists() and leftovers(out) == []
    foreign = tmp_path / "notes.jsonl"
    foreign.write_text(json.dumps({"mine": 1}) + "\n")
    with pytest.raises(InputError, match="not written by omniaudit"):
        run_judge(protocol_dataset, "blueprint", "scripted:random", foreign, **ARGS)
    assert leftovers(foreign) == [] and json.loads(foreign.read_text()) == {"mine": 1}
