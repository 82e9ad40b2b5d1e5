"""`omniaudit verify DIR`: a received folder rechecked against the records it carries (markers, sealed fingerprints,
provenance, audit inputs, scorecard digests), each finding verified, failed or cannot vouch for."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from omniaudit.cli import main


def _verify(capsys, *argv: str) -> tuple[int, dict]:
    """``omniaudit verify --json ...`` in-process: (exit status, the findings as JSON)."""
    capsys.readouterr()
    try:
        rc = main(["verify", "--json", *argv])
    except SystemExit as exc:
        rc = exc.code
    return rc, json.loads(capsys.readouterr().out)


def _findings(report: dict, status: str, path: str | None = None) -> list[str]:
    return [f["what"] for f in report["findings"] if f["status"] == status and (path is None or f["path"] == path)]


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def received(tmp_path_factory, protocol_dataset):
    """What a colleague sends: a protocols build (ds/), a judge's predictions on it, and the audit of those."""
    root = tmp_path_factory.mktemp("received") / "folder"
    shutil.copytree(protocol_dataset, root / "ds")
    preds = root / "oracle.reference.jsonl"
    assert main(["judge", "--dataset", str(root / "ds"), "--config", "reference", "--judge", "scripted:oracle",
                 "--out", str(preds)]) == 0
    assert main(["audit", "protocols", "--dataset", str(root / "ds"), "--predictions", str(preds),
                 "--n-resamples", "50", "--out", str(root / "audit")]) == 0
    return root


@pytest.fixture
def folder(received, tmp_path):
    """A fresh copy of the received folder, moved elsewhere (as a download would be), to edit."""
    return shutil.copytree(received, tmp_path / "copy")


def test_an_untouched_build_predictions_and_audit_verify(folder, capsys):
    rc, report = _verify(capsys, str(folder))
    assert rc == 0 and report["ok"] and not _findings(report, "failed")
    verified = _findings(report, "verified")
    assert any(w.startswith("marker: all 6 files") for w in _findings(report, "verified", "ds/"))
    assert any(w.startswith("marker: all 2 files") for w in _findings(report, "verified", "audit/"))
    for config in ("blueprint", "reference", "pairwise", "cue_conflict"):
        assert any(f"config '{config}'" in w and "as built" in w for w in verified)
    preds = _findings(report, "verified", "oracle.reference.jsonl")
    assert any(w.startswith("one run of scripted:oracle") for w in preds)
    assert any(w.startswith("complete:") for w in preds)
    assert any(w.startswith("made on this build of ds/") for w in preds)
    audit = _findings(report, "verified", "audit/audit.json")
    assert any("it read oracle.reference.jsonl: the same run" in w for w in audit)  # found though the folder moved
    assert any("made on this build of ds/" in w for w in audit)
    assert any("the version here" in w for w in audit)
    # what it cannot vouch for is said, and does not fail
    cannot = _findings(report, "cannot vouch")
    assert any("carry no digest" in w for w in cannot) and any("not recomputed" in w for w in cannot)
    assert any("unkeyed" in w for w in cannot)
    main(["verify", str(folder)])
    text = capsys.readouterr().out
    assert "failed:\n  (none)\n" in text and "verified:\n" in text and "cannot vouch for:\n" in text


def test_a_parquet_file_edited_after_the_build_fails_naming_the_config(folder, capsys):
    shard = folder / "ds" / "reference" / "train-00000-of-00001.parquet"
    table = pq.read_table(shard)
    columns = table.to_pydict()
    columns["id"][0] += " (edited)"
    pq.write_table(pa.Table.from_pydict(columns, schema=table.schema), shard)
    rc, report = _verify(capsys, str(folder))
    assert rc == 1 and not report["ok"]
    failed = _findings(report, "failed", "ds/")
    assert len(failed) == 1 and failed[0].startswith("config 'reference': its files changed after the build")
    assert "reference/train-00000-of-00001.parquet" in failed[0]
    assert any(w.startswith("config 'pairwise'") for w in _findings(report, "verified", "ds/"))  # the others hold
    # the answers and the audit were made on the build the card describes, not on these files
    assert any("another build of the dataset" in w for w in _findings(report, "failed", "oracle.reference.jsonl"))
    assert any("config 'reference'" in w for w in _findings(report, "failed", "audit/audit.json"))


def test_a_predictions_row_edited_fails_naming_the_row(folder, capsys):
    preds = folder / "oracle.reference.jsonl"
    rows = _rows(preds)
    rows[4]["temperature"] = 0.9
    _write(preds, rows)
    rc, report = _verify(capsys, str(folder))
    assert rc == 1
    failed = _findings(report, "failed", "oracle.reference.jsonl")
    assert len(failed) == 1 and failed[0].startswith("row 5: column 'temperature': temperature 0.9 contradicts")
    assert any(w.startswith("made on this build of ds/") for w in _findings(report, "verified",
                                                                            "oracle.reference.jsonl"))


def test_a_truncated_predictions_file_fails_as_incomplete_and_as_not_what_the_audit_read(folder, capsys):
    preds = folder / "oracle.reference.jsonl"
    _write(preds, _rows(preds)[:-3])
    rc, report = _verify(capsys, str(folder))
    assert rc == 1
    assert any(w.startswith("incomplete: 3 of the answers") for w in _findings(report, "failed",
                                                                               "oracle.reference.jsonl"))
    assert any("it read 256 rows" in w and "has 253" in w for w in _findings(report, "failed", "audit/audit.json"))


def test_a_stray_file_is_reported_as_not_ours_without_failing(folder, capsys):
    (folder / "ds" / "notes.txt").write_text("my notes\n")
    (folder / "README.txt").write_text("from a colleague\n")
    rc, report = _verify(capsys, str(folder))
    assert rc == 0
    assert any(w.startswith("not ours: the marker of ds/ does not list it")
               for w in _findings(report, "cannot vouch", "ds/notes.txt"))
    assert any(w.startswith("not ours: no omniaudit marker lists it")
               for w in _findings(report, "cannot vouch", "README.txt"))


def test_a_file_the_marker_lists_missing_fails(folder, capsys):
    (folder / "audit" / "report.md").unlink()
    rc, report = _verify(capsys, str(folder))
    assert rc == 1
    assert _findings(report, "failed", "audit/") == ["marker: 1 of the 2 files it lists are missing (report.md)"]


def test_predictions_whose_dataset_is_absent_cannot_be_vouched_for(received, tmp_path, capsys):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(received / "oracle.reference.jsonl", alone)
    rc, report = _verify(capsys, str(alone))
    assert rc == 0 and not _findings(report, "failed")
    assert any(w.startswith("dataset not at hand: the answers were made on config 'reference' of ds")
               for w in _findings(report, "cannot vouch", "oracle.reference.jsonl"))
    # given with --dataset, the build is checked (one file given as DIR works too)
    rc, report = _verify(capsys, str(alone / "oracle.reference.jsonl"), "--dataset", str(received / "ds"))
    assert rc == 0
    assert any(w.startswith("made on this build of") for w in _findings(report, "verified",
                                                                        "oracle.reference.jsonl"))


def test_a_missing_folder_or_dataset_is_bad_input(tmp_path, received, capsys):
    assert main(["verify", str(tmp_path / "nope")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["verify", str(received), "--dataset", str(tmp_path / "nope")]) == 2


def test_scorecard_predictions_are_checked_against_the_digests_status_json_recorded(tmp_path, capsys,
                                                                                   small_defaults):
    out = tmp_path / "card"
    assert main(["scorecard", "--model", "coin=scripted:random", "--audits", "protocols", "--size", "small",
                 "--n-resamples", "200", "--out", str(out)]) == 0  # coin and the oracle: two reference.jsonl
    rc, report = _verify(capsys, str(out))
    assert rc == 0, _findings(report, "failed")
    for model in ("coin", "oracle"):
        assert any(f"SHA-256 as models/{model}/status.json records" in w
                   for w in _findings(report, "verified", f"models/{model}/reference.jsonl"))
        assert any(w.startswith(f"it read models/{model}/reference.jsonl: the same run")  # its own model's file
                   for w in _findings(report, "verified", f"models/{model}/protocols/audit.json"))
    assert not any("carry no digest" in w for w in _findings(report, "cannot vouch", "models/coin/reference.jsonl"))
    # a reply edited without touching its label agrees with its provenance: only the recorded digest catches it
    preds = out / "models" / "coin" / "reference.jsonl"
    rows = _rows(preds)
    rows[0]["raw"] = "something else entirely"
    _write(preds, rows)
    rc, report = _verify(capsys, str(out))
    assert rc == 1
    assert [f["path"] for f in report["findings"] if f["status"] == "failed"] == ["models/coin/reference.jsonl"]
    assert _findings(report, "failed")[0].startswith("changed after the scorecard read it")


@pytest.mark.slow
def test_a_scorecard_whose_verdicts_were_edited_fails(tmp_path, capsys, small_defaults):
    out = tmp_path / "card"
    assert main(["scorecard", "--model", "coin=scripted:random", "--audits", "protocols", "--size", "small",
                 "--n-resamples", "200", "--out", str(out)]) == 0
    rc, report = _verify(capsys, str(out))
    assert rc == 0, _findings(report, "failed")
    assert any("decided again from the numbers" in w for w in _findings(report, "verified", "scorecard.json"))
    assert _findings(report, "verified", "scorecard.md") and _findings(report, "verified", "scorecard.html")
    # a verdict turned over in scorecard.json, as a forger would (and in the md, which then disagrees with nothing)
    card = json.loads((out / "scorecard.json").read_text())
    entry = card["models"]["oracle"]["shortcuts"]["position"]
    was = entry["status"]
    entry["status"] = "flagged" if was != "flagged" else "clear"
    (out / "scorecard.json").write_text(json.dumps(card))
    rc, report = _verify(capsys, str(out))
    assert rc == 1
    assert any(f"oracle / position: recorded {entry['status']}, its measures say {was}" in w
               for w in _findings(report, "failed", "scorecard.json"))
    assert _findings(report, "failed", "scorecard.md")  # no longer what the json renders to
