"""Output folders and files: atomic, marked as omniaudit's, and never put over what a user owns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from omniaudit.errors import InputError
from omniaudit.io import MARKER, atomic_dir, check_out_dir, check_out_file, looks_like, output_policy, read_marker


def write_output(target: Path | str, *names: str, **policy) -> Path:
    """One omniaudit output holding ``names`` (each file's text is its name)."""
    with atomic_dir(target, **policy) as tmp:
        for name in names:
            (tmp / name).write_text(name, encoding="utf-8")
    return Path(target)


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def victim(tmp_path) -> Path:
    """A user's folder: two files omniaudit never wrote."""
    folder = tmp_path / "victim"
    (folder / "thesis").mkdir(parents=True)
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    (folder / "thesis" / "draft.tex").write_text("mine too", encoding="utf-8")
    return folder


def test_foreign_folder_is_refused_and_left_untouched(tmp_path, victim):
    with pytest.raises(InputError) as err:
        write_output(victim, "report.md")
    message = str(err.value)
    assert message.startswith(f"{victim}: ") and "not an omniaudit output" in message
    assert "notes.txt" in message and "thesis/" in message and "--overwrite" in message
    assert listing(victim) == ["notes.txt", "thesis"]
    assert (victim / "thesis" / "draft.tex").read_text(encoding="utf-8") == "mine too"
    assert listing(tmp_path) == ["victim"]  # no temporary folder left beside it


def test_overwrite_replaces_a_foreign_folder(victim):
    write_output(victim, "report.md", overwrite=True)
    assert listing(victim) == [MARKER, "report.md"]
    (victim / "notes.txt").write_text("again", encoding="utf-8")
    with output_policy(overwrite=True):  # what the CLI's --overwrite sets
        write_output(victim, "audit.json")
    assert listing(victim) == [MARKER, "audit.json"]


def test_rerun_on_its_own_output_replaces_it(tmp_path):
    out = write_output(tmp_path / "out", "report.md", "fig.png")
    marker = read_marker(out)
    assert marker == {"written_by": "omniaudit", "version": marker["version"], "command": "python API",
                      "files": ["fig.png", "report.md"]}
    write_output(out, "report.md")
    assert listing(out) == [MARKER, "report.md"]  # the stale figure went with the old output
    first = (out / MARKER).read_bytes()
    write_output(out, "report.md")
    assert (out / MARKER).read_bytes() == first  # no time stamp: rebuilds are byte-identical


def test_a_file_added_to_an_earlier_output_is_not_deleted(tmp_path):
    out = write_output(tmp_path / "out", "report.md")
    (out / "my_notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match=r"holds files omniaudit did not write \(my_notes.txt\)"):
        write_output(out, "report.md")
    assert (out / "my_notes.txt").read_text(encoding="utf-8") == "mine"


def test_the_output_of_another_command_is_refused(tmp_path):
    with output_policy(command="omniaudit build protocols"):
        out = write_output(tmp_path / "data", "README.md")
        write_output(out, "README.md")  # the same command again: fine
    with output_policy(command="omniaudit audit protocols"), pytest.raises(InputError) as err:
        write_output(out, "report.md")
    assert "holds the output of `omniaudit build protocols`, not of `omniaudit audit protocols`" in str(err.value)
    assert listing(out) == [MARKER, "README.md"]


def test_a_folder_without_a_marker_is_never_replaced_however_it_looks(tmp_path):
    """No "looks like an old output" rule: a user's report.md + audit.json + figure, or a dataset copied from the Hub
    (a card naming omniaudit, Parquet shards, no marker), is refused without --overwrite and left as it was."""
    dataset = tmp_path / "dataset"
    (dataset / "pairs").mkdir(parents=True)
    (dataset / "pairs" / "train-00000-of-00001.parquet").write_bytes(b"PAR1")
    (dataset / "README.md").write_text("---\n---\nBuilt by omniaudit `build preference`\n", encoding="utf-8")
    report = tmp_path / "report"
    report.mkdir()
    for name in ("audit.json", "report.md", "waf.png"):
        (report / name).write_text("mine", encoding="utf-8")
    for folder, names in ((dataset, ["README.md", "pairs"]), (report, ["audit.json", "report.md", "waf.png"])):
        with pytest.raises(InputError, match=f"not an omniaudit output .*no {MARKER} marker"):
            check_out_dir(folder)
        with pytest.raises(InputError, match="--overwrite"):
            write_output(folder, "report.md")
        assert listing(folder) == names
    assert (report / "report.md").read_text(encoding="utf-8") == "mine"
    assert listing(tmp_path) == ["dataset", "report"]  # no temporary or lock file left beside them
    write_output(report, "report.md", overwrite=True)  # asked for: replaced
    assert listing(report) == [MARKER, "report.md"]


def test_the_marker_lists_every_file_and_a_file_added_inside_a_subfolder_is_kept(tmp_path):
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "pairs").mkdir()
        (tmp / "pairs" / "train-00000-of-00001.parquet").write_bytes(b"PAR1")
        (tmp / "README.md").write_text("card", encoding="utf-8")
    assert read_marker(out)["files"] == ["README.md", "pairs/train-00000-of-00001.parquet"]
    (out / "pairs" / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match=r"holds files omniaudit did not write \(pairs/notes.txt\)"):
        write_output(out, "README.md")
    assert (out / "pairs" / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_an_old_marker_listing_top_level_entries_still_counts(tmp_path):
    out = tmp_path / "out"
    (out / "pairs").mkdir(parents=True)
    (out / "pairs" / "train-00000-of-00001.parquet").write_bytes(b"PAR1")
    (out / "README.md").write_text("card", encoding="utf-8")
    (out / MARKER).write_text(json.dumps({"written_by": "omniaudit", "version": "0.0.9", "command": "python API",
                                          "files": ["README.md", "pairs"]}), encoding="utf-8")
    assert check_out_dir(out) == out.resolve()
    write_output(out, "report.md")
    assert listing(out) == [MARKER, "report.md"]


def test_a_file_in_the_way_is_refused_unless_overwrite(tmp_path):
    path = tmp_path / "out"
    path.write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="exists and is a file"):
        write_output(path, "report.md")
    assert path.read_text(encoding="utf-8") == "mine"
    write_output(path, "report.md", overwrite=True)
    assert listing(path) == [MARKER, "report.md"]


def test_out_dot_writes_into_the_current_folder(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    inode = here.stat().st_ino
    write_output(".", "report.md", "old.png")
    assert listing(here) == [MARKER, "old.png", "report.md"]
    (here / "notes.txt").write_text("mine", encoding="utf-8")
    write_output(".", "report.md")  # a rerun replaces its own entries and leaves the user's file alone
    assert listing(here) == [MARKER, "notes.txt", "report.md"]
    assert here.stat().st_ino == inode and Path.cwd() == here  # the current folder was never renamed away
    write_output("./sub/", "report.md")
    assert listing(here / "sub") == [MARKER, "report.md"]
    assert listing(tmp_path) == ["here"]


def test_out_dot_in_a_foreign_folder_needs_overwrite_and_keeps_other_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.md").write_text("mine", encoding="utf-8")
    (tmp_path / "data.csv").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="not an omniaudit output"):
        write_output(".", "report.md")
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "mine"
    write_output(".", "report.md", overwrite=True)
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "report.md"
    assert (tmp_path / "data.csv").read_text(encoding="utf-8") == "mine"


def test_a_folder_containing_the_current_folder_is_always_refused(tmp_path, monkeypatch):
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    monkeypatch.chdir(inner)
    for target in ("..", str(tmp_path / "a")):
        with pytest.raises(InputError, match="contains the current folder"):
            write_output(target, "report.md", overwrite=True)
    assert inner.is_dir() and listing(tmp_path / "a") == ["b"]


def test_failure_inside_leaves_an_earlier_output_untouched(tmp_path):
    out = write_output(tmp_path / "out", "report.md")
    with pytest.raises(RuntimeError), atomic_dir(out) as tmp:
        (tmp / "half.md").write_text("half", encoding="utf-8")
        raise RuntimeError("interrupted")
    assert listing(out) == [MARKER, "report.md"] and listing(tmp_path) == ["out"]


def test_output_file_rules(tmp_path):
    def ours(path: Path) -> bool:
        return looks_like(path, {"id", "label"})

    mine = tmp_path / "preds.jsonl"
    mine.write_text("my data\n", encoding="utf-8")
    with pytest.raises(InputError, match="exists and was not written by omniaudit") as err:
        check_out_file(mine, ours)
    assert str(mine) in str(err.value) and "--overwrite" in str(err.value)
    assert check_out_file(mine, ours, overwrite=True) == mine
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text(json.dumps({"id": "x", "label": "A", "raw": "A"}) + "\n", encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert check_out_file(earlier, ours) == earlier and check_out_file(empty, ours) == empty
    with pytest.raises(InputError, match="is a folder"):
        check_out_file(tmp_path, ours, overwrite=True)
    assert mine.read_text(encoding="utf-8") == "my data\n"


def test_benchmark_workdir_of_a_user_is_refused(tmp_path, victim):
    """The intervention benchmark deletes its own subfolders on a rerun: never in a folder it did not make."""
    (victim / "copy").mkdir()
    (victim / "copy" / "holiday.mp4").write_bytes(b"mine")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "interventions.py"
    proc = subprocess.run([sys.executable, str(script), "--workdir", str(victim)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 2 and "holds files this benchmark did not write" in proc.stderr
    assert (victim / "copy" / "holiday.mp4").read_bytes() == b"mine"


# ---------------------------------------------------------------------------------------------- paths in reports
def test_reports_name_files_relative_to_the_output_or_by_name_never_where_they_live(tmp_path, monkeypatch):
    from omniaudit.evaluation.report import shown_path, shown_paths_in
    from omniaudit.evaluation.scorecard.card import _relative

    out = tmp_path / "card"
    (out / "datasets" / "preference").mkdir(parents=True)
    assert shown_path(out / "datasets" / "preference", out) == "datasets/preference"  # inside: relative
    assert shown_path("/home/someone/data/emoprefer.csv", out) == "emoprefer.csv"  # outside: its name only
    assert shown_path(tmp_path / "preds.jsonl") == "preds.jsonl"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    assert shown_path("runs") == "runs" and shown_path("~/x/y.jsonl") == "y.jsonl"
    # not local paths: as given
    assert shown_path("me/my-dataset") == "me/my-dataset" and shown_path("embedded synthetic default") == \
        "embedded synthetic default" and shown_path(None) is None
    assert shown_paths_in(f"hf:/home/someone/models/qwen failed on {out}/models/a/x.jsonl: a1/a2", out) == \
        "hf:qwen failed on models/a/x.jsonl: a1/a2"
    assert _relative("/home/someone/ds", out) == "ds" and _relative(out / "models" / "m", out) == "models/m"


def test_a_preference_report_names_its_source_file_without_its_folder(tmp_path, small_raw):
    from omniaudit.cli import main

    source = tmp_path / "private" / "emoprefer.csv"
    source.parent.mkdir()
    small_raw.head(200).to_csv(source, index=False)
    assert main(["audit", "preference", "--source", str(source), "--n-resamples", "200",
                 "--no-source-classifier", "--no-controls", "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "Source: **emoprefer.csv**" in report and str(tmp_path) not in report
