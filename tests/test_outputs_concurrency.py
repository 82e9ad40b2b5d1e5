"""Outputs under concurrency and failure: one writer per output (a lock), temporaries unique per process and removed
on failure, leftovers of killed runs cleaned by the next run, and OS errors reported in one line."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from omniaudit.errors import InputError
from omniaudit.io import MARKER, atomic_dir, atomic_file, read_marker
from omniaudit.locks import clean_stale_temporaries, lock_path, output_lock


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def dead_pid() -> int:
    """The PID of a process that has exited (what a killed run leaves in its temporaries' names)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# ---------------------------------------------------------------------------------------------------------- locks
def test_two_threads_writing_one_out_one_wins_the_other_is_refused(tmp_path):
    target = tmp_path / "out"
    start, refused = threading.Barrier(2), threading.Event()
    results: dict[str, object] = {}

    def writer(name: str) -> None:
        start.wait()
        try:
            with atomic_dir(target) as tmp:
                refused.wait(10)  # hold the output until the other writer has been turned away
                (tmp / "report.md").write_text(name, encoding="utf-8")
            results[name] = "written"
        except InputError as exc:
            results[name] = exc
            refused.set()

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    winner = [n for n, r in results.items() if r == "written"]
    loser = [r for r in results.values() if isinstance(r, InputError)]
    assert len(winner) == 1 and len(loser) == 1
    assert "another omniaudit run" in str(loser[0]) and "is writing this output" in str(loser[0])
    assert str(target.resolve()) in str(loser[0])
    assert (target / "report.md").read_text(encoding="utf-8") == winner[0]
    assert listing(tmp_path) == ["out"] and listing(target) == [MARKER, "report.md"]  # no temporary, no lock


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from omniaudit.io import atomic_dir
    target, ready = Path(sys.argv[1]), Path(sys.argv[2])
    with atomic_dir(target) as tmp:
        (tmp / "report.md").write_text("first", encoding="utf-8")
        ready.write_text("ready")
        time.sleep(float(sys.argv[3]))
""")


def hold(target: Path, ready: Path, seconds: float) -> subprocess.Popen:
    """Another omniaudit process writing ``target`` (it holds the output for ``seconds``)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(target), str(ready), str(seconds)])
    deadline = time.time() + 60
    while not ready.exists():
        assert proc.poll() is None and time.time() < deadline, "the holder process did not start writing"
        time.sleep(0.05)
    return proc


def test_a_second_process_on_the_same_out_is_refused_cleanly(capsys, tmp_path):
    from omniaudit.cli import main

    target, ready = tmp_path / "runs" / "ds", tmp_path / "ready"
    proc = hold(target, ready, 3)
    try:
        assert main(["build", "preference", "--pairs", "60", "--out", str(target)]) == 2
    finally:
        assert proc.wait(60) == 0
    err = capsys.readouterr().err.replace("\n", "")
    assert f"error: {target.resolve()}: another omniaudit run (process {proc.pid}) is writing this output" in err
    assert "Traceback" not in err
    assert (target / "report.md").read_text(encoding="utf-8") == "first"  # the first writer finished its output
    assert listing(target.parent) == ["ds"]  # neither writer left a temporary or a lock
    assert main(["build", "preference", "--pairs", "60", "--out", str(target), "--overwrite"]) == 0  # free again


def test_a_killed_writer_leaves_nothing_that_blocks_or_stays(tmp_path):
    target, ready = tmp_path / "out", tmp_path / "ready"
    with atomic_dir(target) as tmp:
        (tmp / "report.md").write_text("earlier", encoding="utf-8")
    proc = hold(target, ready, 60)
    proc.send_signal(signal.SIGKILL)  # killed mid-write: its temporary folder (named with its PID) stays behind
    proc.wait(30)
    assert any(n.startswith(f".out.tmp-{proc.pid}-") for n in listing(tmp_path))
    assert (target / "report.md").read_text(encoding="utf-8") == "earlier"  # the earlier output is intact
    with atomic_dir(target) as tmp:  # the lock died with the process; the next run cleans up after it
        (tmp / "report.md").write_text("next", encoding="utf-8")
    assert listing(tmp_path) == ["out", "ready"] and (target / "report.md").read_text(encoding="utf-8") == "next"


def test_output_lock_is_reentrant_in_one_thread_and_leaves_no_trace(tmp_path):
    target = tmp_path / "new" / "deep" / "out.jsonl"
    with output_lock(target) as lock:
        assert lock == lock_path(target) and lock.read_text().strip() == str(os.getpid())
        with output_lock(target):  # nested in the same thread: fine
            pass
        errors = []
        t = threading.Thread(target=lambda: errors.append(pytest.raises(InputError, output_lock(target).__enter__)))
        t.start()
        t.join()
        assert "another omniaudit run" in str(errors[0].value)
    assert not (tmp_path / "new").exists()  # the folders made for the lock were empty again, and went


def test_out_dot_under_a_parent_that_is_not_writable_locks_inside(tmp_path, monkeypatch):
    """``--out .`` in e.g. a home folder whose parent only root may write: the lock goes inside the folder."""
    import omniaudit.locks as locks

    here = tmp_path / "home"
    here.mkdir()
    monkeypatch.chdir(here)
    real = locks._acquire

    def acquire(lock, target):
        if lock.parent == tmp_path:
            raise PermissionError(errno.EACCES, "Permission denied", str(lock))
        return real(lock, target)

    monkeypatch.setattr(locks, "_acquire", acquire)
    with atomic_dir(".") as tmp:
        assert (here / ".omniaudit-lock").is_file()
        (tmp / "report.md").write_text("x", encoding="utf-8")
    assert listing(here) == [MARKER, "report.md"] and listing(tmp_path) == ["home"]


# -------------------------------------------------------------------------------------------------- temporaries
def test_stale_temporaries_of_dead_runs_are_removed_and_live_ones_kept(tmp_path):
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        (tmp / "report.md").write_text("x", encoding="utf-8")
    dead = dead_pid()
    (tmp_path / f".out.tmp-{dead}-abc").mkdir()
    (tmp_path / f".out.tmp-{dead}-abc" / "half.parquet").write_bytes(b"PAR")
    (tmp_path / f".out.old-{dead}-def").mkdir()
    (tmp_path / f".out.tmp-{os.getppid()}-live").mkdir()  # a live process's: not ours to remove
    (tmp_path / ".other.tmp-1-x").mkdir()  # another target's
    with atomic_dir(target) as tmp:
        (tmp / "report.md").write_text("y", encoding="utf-8")
    assert listing(tmp_path) == [".other.tmp-1-x", f".out.tmp-{os.getppid()}-live", "out"]


def test_a_run_killed_between_the_two_renames_gets_its_earlier_output_back(tmp_path):
    target = tmp_path / "out"
    dead = dead_pid()
    old = tmp_path / f".out.old-{dead}-abcd1234"
    old.mkdir()
    (old / "report.md").write_text("earlier", encoding="utf-8")
    assert clean_stale_temporaries(target) == [old]
    assert (target / "report.md").read_text(encoding="utf-8") == "earlier"


def test_atomic_file_renames_on_success_and_removes_on_failure(tmp_path):
    path = tmp_path / "sub" / "predictions.jsonl"
    with atomic_file(path) as tmp:
        assert tmp.parent == path.parent and tmp.name.startswith(f".predictions.jsonl.tmp-{os.getpid()}-")
        assert tmp.suffix == ".jsonl"  # writers that pick a format from the suffix still work
        tmp.write_text("one\n", encoding="utf-8")
    assert path.read_text(encoding="utf-8") == "one\n" and listing(path.parent) == ["predictions.jsonl"]
    assert oct(path.stat().st_mode & 0o777) != oct(0o600)  # not mkstemp's private mode
    with pytest.raises(RuntimeError), atomic_file(path, lock=True) as tmp:
        tmp.write_text("half", encoding="utf-8")
        raise RuntimeError("interrupted")
    assert path.read_text(encoding="utf-8") == "one\n" and listing(path.parent) == ["predictions.jsonl"]
    stale = path.parent / f".predictions.jsonl.tmp-{dead_pid()}-zz.jsonl"
    stale.write_text("left by a killed run", encoding="utf-8")
    with atomic_file(path) as tmp:
        tmp.write_text("two\n", encoding="utf-8")
    assert listing(path.parent) == ["predictions.jsonl"]


def test_marker_unchanged_in_shape(tmp_path):
    """``write_marker(folder, command=None)`` keeps its signature and keys (other fields may be added later)."""
    from omniaudit.io import write_marker

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "b.txt").write_text("x", encoding="utf-8")
    write_marker(tmp_path, "omniaudit build x")
    assert read_marker(tmp_path) == {"written_by": "omniaudit", "version": read_marker(tmp_path)["version"],
                                     "command": "omniaudit build x", "files": ["a/b.txt"]}


# ------------------------------------------------------------------------------------------------------ OS errors
@pytest.mark.parametrize("failure", ["disk_full", "permission"])
def test_os_errors_end_in_one_line_and_exit_2(capsys, tmp_path, monkeypatch, failure):
    """Disk full / permission denied (simulated: tests may run as root, where chmod does not stop writes)."""
    from omniaudit.cli import main

    out = tmp_path / "ds"
    assert main(["build", "preference", "--pairs", "60", "--out", str(out)]) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    if failure == "disk_full":  # while writing the data
        import pyarrow.parquet as pq

        def fail(table, where, *args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))

        monkeypatch.setattr(pq, "write_table", fail)
        expected = f"error: the disk is full ({out}/pairs/train-00000-of-00001.parquet): No space left on device"
    else:  # while swapping the new output in
        def fail(src, dst, *args, **kwargs):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(src))

        monkeypatch.setattr(os, "rename", fail)
        expected = f"error: permission denied ({out}): Permission denied"
    rc = main(["build", "preference", "--pairs", "60", "--out", str(out)])
    captured = capsys.readouterr()
    err = captured.err.replace("\n", "")
    assert rc == 2 and err.startswith(expected), err
    assert "Traceback" not in captured.err + captured.out and len(captured.err.strip().splitlines()) <= 2
    monkeypatch.undo()
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # untouched
    assert listing(tmp_path) == ["ds"]  # the temporary folder and the lock are gone
