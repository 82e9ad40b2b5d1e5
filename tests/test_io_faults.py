"""Outputs under faults: a run killed (or interrupted) halfway through an in-place swap leaves one whole output (the
earlier or the new, never a mix) that the next run accepts; a full disk leaves no lock behind; and a failed write
says in one line which output it was writing and what to do."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import warnings
from pathlib import Path

import pytest

from omniaudit.errors import InputError
from omniaudit.io import MARKER, atomic_dir, atomic_file, check_out_dir, read_marker, write_marker
from omniaudit.locks import lock_path, output_lock

EARLIER = {"a.txt": "a1", "b.txt": "b1", "stale.txt": "only in the earlier output", "sub/c.txt": "c1"}
NEW = {"a.txt": "a2", "b.txt": "b2", "new.txt": "only in the new output", "sub/c.txt": "c2"}
MINE = {"notes.txt": "the user's own file"}


def write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")


def contents(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` but the marker, as {relative path: text}."""
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
            for p in folder.rglob("*") if p.is_file() and p.name != MARKER}


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".omniaudit-") or p.name.endswith("-lock"))


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """The current folder holding the user's file and an earlier omniaudit output written into it (``--out .``)."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    with atomic_dir(".") as tmp:
        write(tmp, EARLIER)
    write(folder, MINE)  # added beside the earlier output afterwards
    assert contents(folder) == {**EARLIER, **MINE} and leftovers(folder) == []
    return folder


def rewrite(folder: Path, files: dict[str, str]) -> None:
    """Another run writing ``files`` into the current folder ``folder`` (what `omniaudit ... --out .` does)."""
    assert Path.cwd() == folder
    with atomic_dir(".") as tmp:
        write(tmp, files)


# The in-place swap of NEW over EARLIER renames 10 entries: the marker, stale.txt, a.txt, b.txt and sub/ of the earlier
# output out of the way, then a.txt, b.txt, new.txt, sub/ and the marker (last) of the new output in.
RENAMES = 10

KILLED = textwrap.dedent("""
    import json, os, signal, sys
    from pathlib import Path
    import omniaudit.in_place as in_place
    import omniaudit.io as io

    step, files = int(sys.argv[1]), json.loads(sys.argv[2])
    count = [0]
    rename, write_text, remove_path = Path.rename, Path.write_text, io.remove_path

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    def killing_rename(self, target):
        count[0] += 1
        if count[0] == step:
            die()
        return rename(self, target)

    def killing_write_text(self, *args, **kwargs):
        if step == 0 and self.name == io.SWAP_JOURNAL:
            write_text(self, "{\\"tmp\\": ", encoding="utf-8")  # half the journal
            die()
        return write_text(self, *args, **kwargs)

    def killing_remove(path):
        if step == %(after)d and path.name.startswith(".omniaudit-old-"):
            die()
        return remove_path(path)

    Path.rename, Path.write_text, in_place.remove_path = killing_rename, killing_write_text, killing_remove
    with io.atomic_dir(".") as tmp:
        for rel, text in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            write_text(tmp / rel, text, encoding="utf-8")
    sys.exit(3)  # not killed: the step was not reached
""") % {"after": RENAMES + 1}


@pytest.mark.parametrize("step", range(RENAMES + 2))
def test_a_run_killed_at_any_step_of_an_in_place_swap_leaves_one_whole_output_and_the_next_run_works(here, step):
    """step 0: killed while writing the swap's journal; 1..10: before the step-th rename; 11: after the last one,
    while removing the earlier output's copy."""
    proc = subprocess.run([sys.executable, "-c", KILLED, str(step), json.dumps(NEW)], cwd=here)
    assert proc.returncode == -signal.SIGKILL
    assert any(n.startswith(".omniaudit-old-") for n in leftovers(here))  # what the killed run left
    finished = step > RENAMES  # the new marker was moved in: the new output is whole
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert check_out_dir(".") == here  # what every command does first with its --out
    said = [str(w.message) for w in caught if "killed" in str(w.message)]
    if finished or step <= 1:  # the new output whole, or nothing moved yet: the folder is whole, nothing to say
        assert said == []
    else:
        assert said == [f"{here}: an omniaudit run was killed while replacing its output here; its output was "
                        f"incomplete: the earlier output was put back"]
    assert contents(here) == {**(NEW if finished else EARLIER), **MINE}  # never a mix
    assert read_marker(here)["files"] == sorted(NEW if finished else EARLIER)
    assert leftovers(here) == []
    rewrite(here, {"a.txt": "a3"})  # the next run is not refused, and replaces the output whole
    assert contents(here) == {"a.txt": "a3", **MINE} and leftovers(here) == []


@pytest.mark.parametrize("step", range(1, RENAMES + 1))
def test_ctrl_c_during_an_in_place_swap_puts_the_earlier_output_back_at_once(here, monkeypatch, step):
    count = [0]
    rename = Path.rename

    def interrupted(self, target):
        count[0] += 1
        if count[0] == step:
            raise KeyboardInterrupt
        return rename(self, target)

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):
        patched.setattr(Path, "rename", interrupted)
        rewrite(here, NEW)
    assert contents(here) == {**EARLIER, **MINE} and read_marker(here)["files"] == sorted(EARLIER)
    assert leftovers(here) == []  # no temporary, no copy of the earlier output, no lock
    rewrite(here, NEW)
    assert contents(here) == {**NEW, **MINE} and leftovers(here) == []


def legacy_leftovers(folder: Path, moved_in: list[str]) -> None:
    """What an omniaudit before the swap journal left when killed in place: the whole earlier output moved aside into
    ``.omniaudit-old-PID-*``, the new marker (moved first) and ``moved_in`` in the folder, the rest of the new output
    still in ``.omniaudit-tmp-PID-*``."""
    pid = dead_pid()
    trash, tmp = folder / f".omniaudit-old-{pid}-abc", folder / f".omniaudit-tmp-{pid}-def"
    trash.mkdir()
    tmp.mkdir()
    for name in (MARKER, "a.txt", "b.txt", "stale.txt", "sub"):
        (folder / name).rename(trash / name)
    write(tmp, NEW)
    write_marker(tmp)
    for name in [MARKER, *moved_in]:
        (tmp / name).rename(folder / name)


def test_the_earlier_output_left_by_an_older_omniaudit_killed_in_place_is_put_back(here):
    """The reported case: the earlier output sat in ``.omniaudit-old-*`` and every later run refused the folder."""
    legacy_leftovers(here, ["a.txt"])
    with pytest.warns(UserWarning, match="earlier output was put back"):
        check_out_dir(".")
    assert contents(here) == {**EARLIER, **MINE} and leftovers(here) == []
    rewrite(here, NEW)
    assert contents(here) == {**NEW, **MINE}


def test_a_new_output_an_older_omniaudit_had_moved_in_whole_is_kept(here):
    legacy_leftovers(here, ["a.txt", "b.txt", "new.txt", "sub"])
    check_out_dir(".")
    assert contents(here) == {**NEW, **MINE} and leftovers(here) == []


def test_an_earlier_entry_that_cannot_go_back_is_kept_aside_and_never_removed(here):
    """An entry of the earlier output's name appeared after the kill: nothing is put over it, nothing deleted."""
    legacy_leftovers(here, ["a.txt"])
    (here / "stale.txt").write_text("made after the kill", encoding="utf-8")
    with pytest.warns(UserWarning, match=r"stale.txt of the earlier output could not be put back .* in "
                                         r"\.omniaudit-kept-"):
        check_out_dir(".")
    kept = [p for p in here.iterdir() if p.name.startswith(".omniaudit-kept-")]
    assert len(kept) == 1 and contents(kept[0]) == {"stale.txt": EARLIER["stale.txt"]}
    assert (here / "stale.txt").read_text(encoding="utf-8") == "made after the kill"
    assert {k: v for k, v in contents(here).items() if not k.startswith(".")} == {
        **EARLIER, **MINE, "stale.txt": "made after the kill"}
    rewrite(here, NEW)  # later runs work, and leave the kept entries alone
    assert contents(kept[0]) == {"stale.txt": EARLIER["stale.txt"]}


CLI_KILLED = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from omniaudit.cli import main

    count, rename = [0], Path.rename

    def killing_rename(self, target):
        count[0] += self.parent.name.startswith(".omniaudit-tmp-")  # an entry of the new output moved in
        if count[0] == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return rename(self, target)

    Path.rename = killing_rename
    sys.exit(main(sys.argv[1:]))
""")


def test_the_command_after_a_killed_in_place_build_puts_the_earlier_output_back_and_builds(tmp_path, monkeypatch,
                                                                                          capsys):
    from omniaudit.cli import main

    monkeypatch.chdir(tmp_path)
    build = ["build", "preference", "--pairs", "60", "--out", "."]
    assert main(build) == 0
    earlier = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    killed = subprocess.run([sys.executable, "-c", CLI_KILLED, *build[:-2], "--synthetic-seed", "1", "--out", "."],
                            cwd=tmp_path, capture_output=True)
    assert killed.returncode == -signal.SIGKILL and read_marker(tmp_path) is None  # a mix, without a marker
    with pytest.warns(UserWarning, match=f"{tmp_path}: .*earlier output was put back"):
        assert check_out_dir(".") == tmp_path
    assert {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == earlier
    capsys.readouterr()
    assert main([*build[:-2], "--synthetic-seed", "1", "--out", "."]) == 0  # and the next build is not refused
    assert leftovers(tmp_path) == [] and read_marker(tmp_path)["files"] == sorted(
        p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file() and p.name != MARKER)


def test_a_killed_run_between_the_two_renames_of_a_swap_gets_its_output_back_with_a_warning(tmp_path):
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        write(tmp, EARLIER)
    old = tmp_path / f".out.old-{dead_pid()}-abcd1234"
    out.rename(old)
    with pytest.warns(UserWarning, match=f"{out}: an omniaudit run was killed .* earlier output was put back"):
        check_out_dir(out)
    assert contents(out) == EARLIER and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -------------------------------------------------------------------------------------------- locks and full disks
def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_while_taking_the_lock_leaves_no_lock_file_and_no_held_lock(tmp_path, monkeypatch):
    import omniaudit.locks as locks

    target = tmp_path / "out"
    fds = open_fds()
    monkeypatch.setattr(locks.os, "ftruncate", enospc)
    with pytest.raises(OSError) as err, output_lock(target):
        pass
    monkeypatch.undo()
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(target)
    assert not lock_path(target).exists() and open_fds() == fds  # the file removed, its descriptor closed
    taken = []
    thread = threading.Thread(target=lambda: taken.append(output_lock(target).__enter__()))
    thread.start()
    thread.join()
    assert taken == [lock_path(target)]  # the flock is free: another writer is not refused


def test_a_full_disk_while_writing_the_pid_still_locks_and_leaves_nothing(tmp_path, monkeypatch):
    import omniaudit.locks as locks

    target = tmp_path / "out.jsonl"
    monkeypatch.setattr(locks.os, "pwrite", enospc)
    with output_lock(target) as lock:
        assert lock.read_text() == ""  # the PID is only a hint for a refused second run
        refused = []
        t = threading.Thread(target=lambda: refused.append(pytest.raises(InputError, output_lock(target).__enter__)))
        t.start()
        t.join()
        assert "is writing this output right now" in str(refused[0].value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("writer", ["atomic_dir", "atomic_file"])
def test_a_full_disk_while_writing_releases_and_removes_the_lock(tmp_path, writer):
    target = tmp_path / ("out" if writer == "atomic_dir" else "out.jsonl")
    fds = open_fds()
    with pytest.raises(OSError, match="free some space"):
        if writer == "atomic_dir":
            with atomic_dir(target):
                enospc()
        else:
            with atomic_file(target, lock=True):
                enospc()
    assert sorted(p.name for p in tmp_path.iterdir()) == [] and open_fds() == fds  # no lock, no temporary
    with output_lock(target):  # a later run is not refused
        pass
    with atomic_dir(tmp_path / "out") if writer == "atomic_dir" else atomic_file(target, lock=True) as tmp:
        (tmp / "x.txt" if writer == "atomic_dir" else tmp).write_text("x", encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_a_lock_file_left_by_a_killed_run_does_not_refuse_the_next(tmp_path):
    target = tmp_path / "out"
    lock_path(target).write_text(f"{dead_pid()}\n")  # the file stays when a run dies; its flock does not
    with atomic_dir(target) as tmp:
        write(tmp, EARLIER)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# ------------------------------------------------------------------------------------------ failed writes, named
@pytest.mark.parametrize(("code", "hint"), [(errno.ENOSPC, "free some space"), (errno.EDQUOT, "quota"),
                                            (errno.EROFS, "writable disk"), (errno.EACCES, "permissions")])
def test_a_failed_write_names_the_file_as_the_user_will_find_it(tmp_path, code, hint):
    """``write()`` on a full disk names no file; the error names the output file, not omniaudit's temporary."""
    path = tmp_path / "runs" / "predictions.jsonl"
    with pytest.raises(OSError) as err, atomic_file(path):
        raise OSError(code, os.strerror(code))
    assert err.value.errno == code and err.value.filename == str(path)
    assert hint in err.value.strerror and "--out" in err.value.strerror
    assert isinstance(err.value, PermissionError) == (code == errno.EACCES)  # the same kind of OSError
    assert isinstance(err.value.__cause__, OSError)


def test_a_failed_write_inside_a_folder_output_names_that_file_in_the_output(tmp_path):
    out = tmp_path / "ds"
    with pytest.raises(OSError) as err, atomic_dir(out) as tmp:
        (tmp / "pairs").mkdir()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp / "pairs" / "train.parquet"))
    assert err.value.filename == str(out / "pairs" / "train.parquet")
    with pytest.raises(OSError) as err, atomic_dir(out) as tmp, atomic_file(tmp / "audit.json") as inner:
        inner.write_text("{", encoding="utf-8")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # a file written atomically inside the folder
    assert err.value.filename == str(out / "audit.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_failed_write_of_the_marker_names_it(tmp_path, monkeypatch):
    """The scorecard writes its marker straight into its folder."""
    monkeypatch.setattr(Path, "write_text", enospc)
    with pytest.raises(OSError) as err:
        write_marker(tmp_path)
    assert err.value.filename == str(tmp_path / MARKER) and "free some space" in err.value.strerror


def test_an_input_that_cannot_be_read_while_writing_keeps_its_own_error(tmp_path):
    """Only failed writes of the output are renamed: a missing or unreadable input is reported as it is."""
    source = tmp_path / "elsewhere" / "data.csv"
    for code in (errno.ENOENT, errno.EACCES):
        with pytest.raises(OSError) as err, atomic_dir(tmp_path / "out"):
            raise OSError(code, os.strerror(code), str(source))
        assert err.value.filename == str(source) and err.value.strerror == os.strerror(code)


def test_the_cli_says_a_full_disk_in_one_line_naming_the_output(capsys, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from omniaudit.cli import main

    out = tmp_path / "ds"
    monkeypatch.setattr(pq, "write_table", enospc)  # write() on a full disk: no file named
    assert main(["build", "preference", "--pairs", "60", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert err.startswith(f"error: the disk is full ({out}): No space left on device; free some space or choose "
                          f"another output (--out)"), err
    assert "Traceback" not in captured.err + captured.out and len(captured.err.strip().splitlines()) <= 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no temporary, no lock
