"""Writing into the current folder in place (``--out .``, :func:`move_into`: omniaudit's earlier entries are replaced,
nothing else is touched), and settling a run killed halfway through that swap (:func:`settle_killed_writes`: undone,
or finished when the new output was already whole), so the folder always ends as one whole output."""

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.locks import _pid_alive, clean_stale_temporaries, output_lock, remove_path
from omniaudit.outputs import MARKER, SWAP_JOURNAL, foreign_entries, overwrite_allowed, read_marker


def move_into(tmp: Path, target: Path, overwrite: bool | None) -> None:
    """Move ``tmp``'s entries into ``target``: omniaudit's earlier entries go, entries it did not write stay.

    The earlier entries are first moved into a ``.omniaudit-old-PID-*`` folder in ``target`` (with a journal of the
    swap), then the new ones in, the new marker last: ``target`` holds the new output once its marker is there. On
    any exception (Ctrl-C included) the swap is undone at once; a run killed halfway is undone (or, when the new output
    was complete, finished) by the next run (:func:`settle_killed_writes`). Never a mix of the two outputs.
    """
    old_marker = read_marker(target)
    ours = {f.split("/")[0] for f in old_marker.get("files", [])} | {MARKER} if old_marker else {MARKER}
    new = sorted(e.name for e in tmp.iterdir())
    clash = [n for n in new if (target / n).exists() and n not in ours]
    inside = [e for e in (foreign_entries(target) if old_marker else []) if e.parent != target]  # in our folders
    if (clash or inside) and not overwrite_allowed(overwrite):
        what = ", ".join(clash + [e.relative_to(target).as_posix() for e in inside])
        raise InputError(f"the output folder already has {what}, which omniaudit did not write; pass --overwrite to "
                         f"replace them, or choose another folder", file=target)
    trash = Path(tempfile.mkdtemp(prefix=f".omniaudit-old-{os.getpid()}-", dir=target))
    done = False
    try:
        (trash / SWAP_JOURNAL).write_text(json.dumps({"tmp": tmp.name, "new": new}) + "\n", encoding="utf-8")
        for name in sorted(ours - set(new)) + new:  # stale entries of the earlier output, then the ones replaced
            if _exists(target / name):
                (target / name).rename(trash / name)
        for name in [n for n in new if n != MARKER] + [MARKER]:  # the marker last: then the new output is whole
            (tmp / name).rename(target / name)
        done = True
    except BaseException:
        kept = _undo_swap(target, trash, tmp, new)[2]  # the earlier output back; if that fails, the next run does it
        if kept is not None:  # something of that name appeared meanwhile
            warnings.warn(f"{target}: the earlier output could not be put back whole after the write was interrupted: "
                          f"{', '.join(sorted(_entries_named(kept)))} are in {kept.name}", UserWarning, stacklevel=4)
        raise
    finally:
        if done:
            remove_path(trash)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def swap_pending(target: Path, tmp: Path) -> bool:
    """Whether an in-place swap from ``tmp`` into ``target`` was interrupted and not undone (``tmp`` is then kept
    for :func:`settle_killed_writes`)."""
    if tmp.parent != target:
        return False
    for trash in target.glob(f".omniaudit-old-{os.getpid()}-*"):
        journal = _read_journal(trash)
        if journal is None or journal["tmp"] == tmp.name:
            return True
    return False


def _read_journal(trash: Path) -> dict | None:
    try:
        journal = json.loads((trash / SWAP_JOURNAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(journal, dict) and isinstance(journal.get("tmp"), str) and isinstance(journal.get("new"), list)
    return journal if ok else None


def _undo_swap(target: Path, trash: Path, tmp: Path | None,
               new: list[str]) -> tuple[list[str], list[str], Path | None]:
    """Undo an interrupted in-place swap: the new entries already moved into ``target`` go back into ``tmp``, the
    earlier ones come back from ``trash`` (then removed, with ``tmp``). Returns (new entries taken out, earlier
    entries put back, where earlier entries that could not come back are kept: an entry of that name is in
    ``target`` again). That folder (``.omniaudit-kept-*``) is not omniaudit's to remove: it counts as the user's."""
    taken, back, stuck = [], [], []
    if tmp is not None and tmp.is_dir():
        for name in reversed(new):  # moved into target = no longer in tmp (an entry still in tmp was never moved)
            if not _exists(tmp / name) and _exists(target / name):
                (target / name).rename(tmp / name)
                taken.append(name)
    for entry in sorted(trash.iterdir()):
        if entry.name == SWAP_JOURNAL:
            continue
        if _exists(target / entry.name):
            stuck.append(entry.name)
        else:
            entry.rename(target / entry.name)
            back.append(entry.name)
    kept = None
    if not stuck:
        remove_path(trash)
    else:  # never taken for a finished swap and removed: a folder that blocks a replacement until someone looks
        remove_path(trash / SWAP_JOURNAL)
        kept = trash.with_name(trash.name.replace(".omniaudit-old-", ".omniaudit-kept-", 1))
        trash.rename(kept)
    if tmp is not None:
        remove_path(tmp)
    return taken, back, kept


def _entries_named(folder: Path) -> list[str]:
    return [e.name for e in _entries(folder)]


def _tops(marker: dict | None) -> list[str]:
    files = marker.get("files") if marker else None
    return sorted({f.split("/")[0] for f in files if isinstance(f, str)} | {MARKER}) if isinstance(files, list) \
        else [MARKER]


def settle_killed_writes(folder: str | Path) -> list[Path]:
    """Finish what runs killed while replacing the output ``folder`` left half done, so the folder holds one whole
    output again (the earlier one or the new one, never a mix) and the next run is not refused. Returns what was
    settled; each output put back gets one warning naming the folder.

    A run killed between the two renames of a swap: the earlier output (``.NAME.old-PID-*`` beside ``folder``) is
    put back when ``folder`` is missing (:func:`clean_stale_temporaries`). A run killed while swapping its output
    into the folder in place (``--out .``): the earlier entries wait in ``.omniaudit-old-PID-*``; when the new output
    was incomplete (its marker not moved in yet) they are put back and the new entries removed, when it was complete
    the earlier copy is removed. Only leftovers of processes no longer alive are touched; a live run's are its own.
    """
    folder = Path(folder)
    beside = re.compile(rf"^\.{re.escape(folder.name)}\.old-(\d+)-")
    killed = [e for e in _entries(folder) if _killed(e.name, r"^\.omniaudit-old-(\d+)-") and e.is_dir()]
    restore = not _exists(folder) and any(_killed(e.name, beside) for e in _entries(folder.parent))
    if not killed and not restore:
        return []
    settled = []
    with output_lock(folder):
        if restore:
            settled += clean_stale_temporaries(folder)
            if _exists(folder):
                warnings.warn(f"{folder}: an omniaudit run was killed while replacing this output; the earlier "
                              f"output was put back", UserWarning, stacklevel=3)
        for trash in killed:
            if trash.is_dir():
                settled += _settle_in_place(folder, trash)
    return settled


def _entries(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _killed(name: str, pattern: str | re.Pattern) -> bool:
    m = re.match(pattern, name)
    return m is not None and not _pid_alive(int(m.group(1)))


def _settle_in_place(folder: Path, trash: Path) -> list[Path]:
    """One interrupted in-place swap (``trash``: its ``.omniaudit-old-PID-*`` folder): undone or finished."""
    pid = trash.name.split("-")[2]
    journal = _read_journal(trash)
    if journal is not None:
        tmp = folder / journal["tmp"]
    else:  # killed before its journal was whole (nothing moved yet), or an omniaudit that kept none
        tmps = [e for e in _entries(folder) if e.name.startswith(f".omniaudit-tmp-{pid}-") and e.is_dir()]
        tmp = tmps[0] if len(tmps) == 1 else None
    tmp = tmp if tmp is not None and tmp.is_dir() and not tmp.is_symlink() else None
    waiting = tmp is not None and (tmp / MARKER).is_file()  # the new marker not moved in yet: the new output is not
    if tmp is None:  # the new output is gone: put back what is there of the earlier one (never over anything)
        new, complete = [], not [e for e in trash.iterdir() if e.name != SWAP_JOURNAL]
    elif journal is not None:
        new, complete = [str(n) for n in journal["new"]], not waiting
    elif waiting:  # no journal: earlier versions moved the new marker first, so nothing new was moved in yet
        new, complete = _tops(read_marker(tmp)), False
    else:  # no journal, the new marker moved in: complete once the temporary is empty
        new, complete = _tops(read_marker(folder)), not _entries(tmp)
    if complete:
        remove_path(trash)
        if tmp is not None:
            remove_path(tmp)
        return [trash]
    taken, back, kept = _undo_swap(folder, trash, tmp, new)
    killed = f"{folder}: an omniaudit run was killed while replacing its output here"
    if kept is not None:
        warnings.warn(f"{killed}; its incomplete output was removed, but {', '.join(sorted(_entries_named(kept)))} "
                      f"of the earlier output could not be put back (an entry of that name is here again): they are "
                      f"in {kept.name}", UserWarning, stacklevel=4)
    elif back:
        warnings.warn(f"{killed}; its output was incomplete: the earlier output was put back", UserWarning,
                      stacklevel=4)
    elif taken:
        warnings.warn(f"{killed}; its output was incomplete and was removed (there was no earlier output)",
                      UserWarning, stacklevel=4)
    return [trash]  # nothing moved yet: the folder was as it was, nothing to say
