"""``omniaudit verify``'s checks of the files themselves: every file a marker lists is there (no symbolic link in its
place) and the marker whole; files beside them it does not list, files whose contents no check covered, and files no
marker covers are named."""

from __future__ import annotations

from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.outputs import MARKER, foreign_entries, list_files, marker_files, read_marker
from omniaudit.verify_findings import CANNOT, FAILED, VERIFIED, Finding, some_names
from omniaudit.verify_survey import Context, leftover, under_marker


# ----------------------------------------------------------------------------------------------------- the checks
def check_marker(ctx: Context, folder: Path) -> list[Finding]:
    """A marker's own consistency, and every file it lists present (no symbolic link in its place)."""
    where = ctx.shown(folder, folder=True)
    marker = read_marker(folder) or {}
    try:
        files = marker_files(folder, marker)
    except InputError as exc:
        return [Finding(FAILED, "marker", where, f"marker: {exc.message}")]
    listed = marker["files"]
    outside = [f for f in listed if f.startswith("/") or ".." in f.split("/")]
    if outside:
        return [Finding(FAILED, "marker", where, f"marker: lists paths outside its folder ({some_names(outside)})")]
    findings = []
    missing = [f for f in files if not (folder / f).exists() and not (folder / f).is_symlink()]
    links = [f for f in files if (folder / f).is_symlink()]
    if missing:
        findings.append(Finding(FAILED, "marker", where, f"marker: {len(missing)} of the {len(files)} files it lists "
                                                         f"are missing ({some_names(missing)})"))
    if links:
        findings.append(Finding(FAILED, "marker", where, f"marker: listed files are symbolic links, which omniaudit "
                                                         f"never writes ({some_names(links)})"))
    if not findings:
        findings.append(Finding(VERIFIED, "marker", where, f"marker: all {len(files)} files it lists are present "
                                                           f"(written by omniaudit {marker.get('version')}, "
                                                           f"`{marker.get('command')}`)"))
    return findings


def check_not_ours(ctx: Context, folder: Path) -> list[Finding]:
    """Files in a marked folder that its marker does not list (and no marker inside it claims)."""
    findings = []
    for entry in foreign_entries(folder):
        rel = ctx.shown(entry)
        if leftover(rel) is not None or under_marker(ctx, entry, below=folder):
            continue
        nested = [m for m in ctx.markers if m.is_relative_to(entry)]
        strays = ([entry / f for f in list_files(entry) if not any((entry / f).is_relative_to(m) for m in nested)]
                  if nested else [entry])
        for stray in strays:
            kind = " (a folder)" if stray.is_dir() and not stray.is_symlink() else ""
            findings.append(Finding(CANNOT, "files", ctx.shown(stray, folder=bool(kind)),
                                    f"not ours{kind}: the marker of {ctx.shown(folder, folder=True)} does not list "
                                    "it (added after omniaudit wrote the folder)"))
    return findings


def check_unchecked(ctx: Context, folder: Path) -> list[Finding]:
    """The files a marker lists whose contents no check covered (the marker names files; it holds no digests)."""
    try:
        files = [folder / f for f in marker_files(folder)]
    except InputError:
        return []
    left = [f for f in files if f.is_file() and f not in ctx.examined and f.name != MARKER
            and not under_marker(ctx, f, below=folder)]
    if not left:
        return []
    return [Finding(CANNOT, "files", ctx.shown(folder, folder=True), f"contents of {len(left)} listed file(s) are not "
                    f"checked (the marker lists names, not digests): "
                    f"{some_names([f.relative_to(folder).as_posix() for f in left])}")]


def check_unmarked(ctx: Context) -> list[Finding]:
    """Files no marker covers and no check recognised (not a predictions file, not a dataset's card or data)."""
    findings = []
    known = set(ctx.predictions) | ctx.examined | {d.folder / "README.md" for d in ctx.datasets}
    for rel in ctx.files:
        path = ctx.root / rel
        if (leftover(rel) is not None or path in known or under_marker(ctx, path)
                or any(path.is_relative_to(m) for m in ctx.bad_markers)):
            continue
        findings.append(Finding(CANNOT, "files", rel, "not ours: no omniaudit marker lists it, and it is neither a "
                                                      "predictions file nor a dataset's card or data"))
    return findings
