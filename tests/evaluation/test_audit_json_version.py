"""audit.json readers check the schema version: a newer one is refused with one line, verify reports it."""

from __future__ import annotations

import json

import pytest

from omniaudit.errors import InputError
from omniaudit.evaluation.audit_outputs import SCHEMA_VERSION, read_audit


def _write(folder, audit) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "audit.json").write_text(json.dumps(audit), encoding="utf-8")


def test_a_newer_schema_is_refused_naming_the_file_and_both_versions(tmp_path):
    _write(tmp_path, {"schema": {"version": SCHEMA_VERSION + 1, "audit": "preference"}, "dataset": None})
    with pytest.raises(InputError) as err:
        read_audit(tmp_path)
    message = str(err.value)
    assert "newer omniaudit" in message and f"schema {SCHEMA_VERSION + 1}" in message and "audit.json" in message
    assert read_audit(tmp_path, newer=True)["schema"]["version"] == SCHEMA_VERSION + 1


def test_the_current_and_older_files_are_read(tmp_path):
    _write(tmp_path / "now", {"schema": {"version": SCHEMA_VERSION}, "x": 1})
    _write(tmp_path / "old", {"x": 2})  # before the schema record existed
    assert read_audit(tmp_path / "now")["x"] == 1 and read_audit(tmp_path / "old")["x"] == 2


@pytest.mark.parametrize("content", ["[1, 2]", "not json", '"text"'])
def test_what_is_not_an_audit_object_is_refused(tmp_path, content):
    (tmp_path / "audit.json").write_text(content, encoding="utf-8")
    with pytest.raises(InputError):
        read_audit(tmp_path)
