"""A judge run's journal (the answers kept as they come) on a full disk: the error names the predictions file being
written and what to do, never a bare "No space left on device"."""

import errno
import os
import pathlib

import pytest

from omniaudit.runners import run_judge
from omniaudit.runners.journal import Journal


class _FullDisk:
    """A journal file on a full disk: ``fail`` (write, flush or close) raises ENOSPC naming no file, as the kernel
    does."""

    def __init__(self, fail: str) -> None:
        self.fail = fail

    def _maybe(self, what: str) -> None:
        if what == self.fail:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def write(self, text: str) -> int:
        self._maybe("write")
        return len(text)

    def flush(self) -> None:
        self._maybe("flush")

    def close(self) -> None:
        self._maybe("close")


def _journal_on_a_full_disk(monkeypatch, fail: str) -> None:
    opened = pathlib.Path.open

    def open_(self, *args, **kwargs):
        if ".journal-" in self.name:
            if fail == "open":
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
            return _FullDisk(fail)
        return opened(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "open", open_)


@pytest.mark.parametrize("fail", ["open", "write", "flush", "close"])
def test_a_full_disk_while_journaling_names_the_predictions_file(fail, intervention_dataset, tmp_path, monkeypatch):
    out = tmp_path / "preds.jsonl"
    _journal_on_a_full_disk(monkeypatch, fail)
    with pytest.raises(OSError) as err:
        run_judge(intervention_dataset, "diagnostic", "scripted:oracle", out)
    monkeypatch.undo()
    assert err.value.errno == errno.ENOSPC and err.value.filename == str(out)
    assert "free some space or choose another output" in str(err.value)
    assert not out.exists()


def test_the_journal_knows_its_predictions_file(tmp_path):
    assert Journal(tmp_path / ".p.jsonl.journal-0123.jsonl", False).out == tmp_path / "p.jsonl"
    odd = tmp_path / ".a.journal-b.jsonl.journal-0123.jsonl"  # a predictions file whose name looks like a journal
    assert Journal(odd, False).out == tmp_path / "a.journal-b.jsonl"
    assert Journal(tmp_path / "j.jsonl", False, out=tmp_path / "x.jsonl").out == tmp_path / "x.jsonl"
