"""Rows bound to prompts: every predictions row's ``doc_hash`` (the item as the judge saw it) and ``prompt_hash`` (the
request as rendered), checked by resumes, merges, audits and ``omniaudit verify``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from omniaudit.cli import main
from omniaudit.data_builders.fingerprint import config_fingerprint
from omniaudit.errors import InputError
from omniaudit.predictions import check_predictions
from omniaudit.runners import run_judge
from omniaudit.runners.items import JudgeItem, MediaPart, doc_hash, doc_hashes, load_items
from omniaudit.runners.run import row_hashes
from omniaudit.runners.scripted import ScriptedJudge
from omniaudit.runners.shards import merge_predictions

HEX = set("0123456789abcdef")


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _items_dataset(root, loud_prompt="Is the clip loud? Answer with exactly one of: yes, no."):
    """A small Hub-layout dataset, config `items`: closed items (one with an audio clip), a pair in two orders."""
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    s = datasets.Value("string")
    features = datasets.Features({"id": s, "condition": s, "prompt": s, "options": datasets.List(s), "gold": s,
                                  "order": s, "audio_1": datasets.Audio()})
    clip = {"bytes": b"RIFF-not-really-audio-0123456789", "path": None}
    rows = [{"id": "loud/1", "condition": "loud", "prompt": loud_prompt, "options": ["yes", "no"], "gold": "yes",
             "order": None, "audio_1": clip}]
    rows += [{"id": f"text/{k}", "condition": "text", "prompt": f"Is {k} even? Answer yes or no.",
              "options": ["yes", "no"], "gold": "yes" if k % 2 == 0 else "no", "order": None, "audio_1": None}
             for k in range(6)]
    rows += [{"id": f"pair/1/{o}", "condition": "pair", "prompt": "Which is better? Answer A or B.",
              "options": ["A", "B"], "gold": "A" if o == "AB" else "B", "order": o, "audio_1": None}
             for o in ("AB", "BA")]
    (root / "items").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=features.arrow_schema),
                   root / "items" / "train-00000-of-00001.parquet")
    card = {"configs": [{"config_name": "items", "data_files": [{"split": "train", "path": "items/train-*.parquet"}]}]}
    (root / "README.md").write_text(f"---\n{yaml.safe_dump(card)}---\n")
    return root


@pytest.fixture(scope="module")
def items_dataset(tmp_path_factory):
    return _items_dataset(tmp_path_factory.mktemp("rows") / "ds")


def _check(path, dataset, partial=False):
    rows = _rows(path)
    return check_predictions(pd.DataFrame(rows), path, dataset, ("items",), partial=partial)


# ------------------------------------------------------------------------------------------------ what rows carry
def test_every_row_carries_both_hashes_the_same_in_every_run(items_dataset, tmp_path):
    out = tmp_path / "p.jsonl"
    run_judge(items_dataset, "items", "scripted:random", out, temperature=1.0, seed=3, runs=2)
    rows = _rows(out)
    assert all(len(r["doc_hash"]) == 64 and set(r["doc_hash"]) <= HEX and len(r["prompt_hash"]) == 64
               for r in rows)
    first, second = rows[: len(rows) // 2], rows[len(rows) // 2:]
    assert [(r["id"], r["doc_hash"], r["prompt_hash"]) for r in first] == \
        [(r["id"], r["doc_hash"], r["prompt_hash"]) for r in second]  # runs differ in seed only
    assert len({r["doc_hash"] for r in first}) == len(first)  # every item its own
    assert list(rows[0])[-4:] == ["doc_hash", "prompt_hash", "finish_reason", "provenance"]
    # the same inputs and seed: the same bytes
    again = tmp_path / "again.jsonl"
    run_judge(items_dataset, "items", "scripted:random", again, temperature=1.0, seed=3, runs=2)
    assert again.read_bytes() == out.read_bytes()


def test_hashes_are_stable_golden_values():
    item = JudgeItem(id="loud/1", prompt="Is the clip loud?", options=["yes", "no"], gold="yes",
                     media=[MediaPart("audio", b"abc", "audio_1")], condition="loud")
    assert doc_hash(item) == "fe2246ae2fc312004c268c2c3969c0cd137fc822553878ecbb815a21dec76361"
    hashes = row_hashes(ScriptedJudge("oracle"), item, {})
    assert hashes["doc_hash"] == doc_hash(item)
    assert hashes["prompt_hash"] == "880a855614890020543446cdd8c261a53fa5127755c2ec20ad55153159904ec9"
    # what decides the answer changes the doc_hash; the prompt settings change only the prompt_hash
    assert doc_hash(JudgeItem(**{**item.__dict__, "gold": "no"})) != doc_hash(item)
    assert doc_hash(JudgeItem(**{**item.__dict__, "media": [MediaPart("audio", b"abcd", "audio_1")]})) \
        != doc_hash(item)
    assert row_hashes(ScriptedJudge("oracle"), item, {"fps": 1.0})["prompt_hash"] != hashes["prompt_hash"]


def test_an_audit_recomputes_doc_hash_as_the_run_made_it(mixed_dataset, items_dataset):
    """The audit's reading (no media decoded or copied) gives every item's hash as the judge's loading does."""
    for dataset, config in ((mixed_dataset, "mixed"), (items_dataset, "items")):
        recomputed = doc_hashes(dataset, config)
        items = load_items(dataset, config)
        assert sum(map(len, recomputed.values())) == len(items)
        for item in items:
            assert doc_hash(item) in recomputed[(item.id, item.order)]


# ------------------------------------------------------------------------------------------------------ audits
def test_a_row_whose_item_changed_in_the_dataset_is_refused(items_dataset, tmp_path):
    out = tmp_path / "p.jsonl"
    run_judge(items_dataset, "items", "scripted:oracle", out)
    assert _check(out, items_dataset).known  # as made: passes
    changed = _items_dataset(tmp_path / "changed", loud_prompt="Is the clip quiet? Answer with exactly one of: "
                                                               "yes, no.")
    # the fingerprint check refuses the other build first...
    with pytest.raises(InputError, match="another build of the dataset"):
        _check(out, changed)
    # ...and where a file claims the new build (its provenance rewritten), the row of the changed item is named
    rows = _rows(out)
    fingerprint = config_fingerprint(changed, "items")
    for row in rows:
        row["provenance"]["dataset"]["fingerprint"] = fingerprint
    forged = _write(tmp_path / "forged.jsonl", rows)
    with pytest.raises(InputError, match=r"forged\.jsonl:row 1: column 'doc_hash': item 'loud/1' of config 'items' "
                                         r"is not the item this answer was made for") as caught:
        _check(forged, changed)
    assert "changed since the answers were made" in str(caught.value)


def test_an_audit_refuses_an_edited_doc_hash_exit_2(intervention_dataset, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", out)
    args = ["audit", "interventions", "--dataset", str(intervention_dataset), "--n-resamples", "50"]
    rows = _rows(out)
    rows[4]["doc_hash"] = rows[5]["doc_hash"]  # another item's
    edited = _write(tmp_path / "edited.jsonl", rows)
    capsys.readouterr()
    assert main([*args, "--predictions", str(edited), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "edited.jsonl:row 5" in err and "doc_hash" in err and not (tmp_path / "r").exists()


def test_legacy_rows_pass_and_a_half_hashed_file_is_refused(items_dataset, tmp_path):
    out = tmp_path / "p.jsonl"
    run_judge(items_dataset, "items", "scripted:oracle", out, runs=2)
    rows = _rows(out)
    legacy = _write(tmp_path / "legacy.jsonl", [{k: v for k, v in r.items() if k not in ("doc_hash", "prompt_hash")}
                                                for r in rows])
    assert _check(legacy, items_dataset).known
    half = _write(tmp_path / "half.jsonl", [{k: v for k, v in r.items() if k not in ("doc_hash", "prompt_hash")}
                                            if n == 3 else r for n, r in enumerate(rows)])
    with pytest.raises(InputError, match=r"half\.jsonl:row 4: column 'doc_hash': some rows carry doc_hash / "
                                         r"prompt_hash and others do not"):
        _check(half, items_dataset)
    # rows of one item that disagree (a run spliced from another prompt) are refused even without the dataset
    spliced = [dict(r) for r in rows]
    spliced[len(rows) // 2]["prompt_hash"] = "0" * 64
    with pytest.raises(InputError, match=r"row 10: column 'prompt_hash': item 'loud/1' has prompt_hash"):
        _check(_write(tmp_path / "spliced.jsonl", spliced), None)


# ------------------------------------------------------------------------------------------------------ resume
def test_a_journal_kept_for_another_prompt_is_refused_at_resume(items_dataset, tmp_path, monkeypatch):
    out = tmp_path / "p.jsonl"
    first = run_judge(items_dataset, "items", "scripted:oracle", out, keep_journal=True)
    journal = first["journal"]
    # the same run again: every answer resumed, the same file
    kept = out.read_bytes()
    assert run_judge(items_dataset, "items", "scripted:oracle", out, keep_journal=True)["resumed"] == first["rows"]
    assert out.read_bytes() == kept
    # another prompt template (here: the runner renders its requests otherwise): refused, naming the journal's row
    original = ScriptedJudge.render
    monkeypatch.setattr(ScriptedJudge, "render", lambda self, item: "Template 2: " + original(self, item))
    with pytest.raises(InputError, match=r"journal-\w+\.jsonl:row 1: column 'prompt_hash': the answer kept for "
                                         r"item 'loud/1' \(run 0\)") as caught:
        run_judge(items_dataset, "items", "scripted:oracle", out, keep_journal=True)
    message = str(caught.value)
    assert "the rendered prompt changed" in message and "rerun with a fresh --out" in message
    assert out.read_bytes() == kept  # nothing written
    monkeypatch.setattr(ScriptedJudge, "render", original)
    # a kept row of another version of its item
    lines = _rows(Path(journal))
    lines[2]["row"]["doc_hash"] = "f" * 64
    _write(Path(journal), lines)
    with pytest.raises(InputError, match=r"row 3: column 'doc_hash'.*the dataset's item changed"):
        run_judge(items_dataset, "items", "scripted:oracle", out)
    # a fresh --out answers afresh
    assert run_judge(items_dataset, "items", "scripted:oracle", tmp_path / "fresh.jsonl")["resumed"] == 0


# ------------------------------------------------------------------------------------------------------- merges
def test_a_merge_of_parts_that_disagree_on_the_hashes_is_refused(items_dataset, tmp_path):
    whole = tmp_path / "whole.jsonl"
    run_judge(items_dataset, "items", "scripted:oracle", whole, runs=2)
    parts = [tmp_path / f"s{i}.jsonl" for i in range(2)]
    for i, part in enumerate(parts):
        run_judge(items_dataset, "items", "scripted:oracle", part, runs=2, shard=(i, 2))
    merge_predictions(tmp_path / "m.jsonl", parts)
    assert (tmp_path / "m.jsonl").read_bytes() == whole.read_bytes()  # byte for byte, hashes included
    # one part's run 1 made for another prompt of an item
    rows = _rows(parts[1])
    rows[-1]["prompt_hash"] = "0" * 64
    other = _write(tmp_path / "other.jsonl", rows)
    with pytest.raises(InputError, match=r"other\.jsonl:row \d+: column 'prompt_hash': item '.*' has prompt_hash"):
        merge_predictions(tmp_path / "m2.jsonl", [parts[0], other])
    # a part without the hashes (an older omniaudit's) beside one with them
    old = _write(tmp_path / "old.jsonl", [{k: v for k, v in r.items() if k not in ("doc_hash", "prompt_hash")}
                                          for r in _rows(parts[1])])
    with pytest.raises(InputError, match="some rows carry doc_hash / prompt_hash and others do not"):
        merge_predictions(tmp_path / "m3.jsonl", [parts[0], old])
    assert not (tmp_path / "m2.jsonl").exists() and not (tmp_path / "m3.jsonl").exists()


# ------------------------------------------------------------------------------------------------------- verify
def test_verify_reports_the_row_hash_check(items_dataset, tmp_path, capsys):
    root = tmp_path / "received"
    shutil.copytree(items_dataset, root / "ds")
    preds = root / "oracle.items.jsonl"
    run_judge(root / "ds", "items", "scripted:oracle", preds)

    def verify(*argv):
        capsys.readouterr()
        try:
            rc = main(["verify", "--json", *argv])
        except SystemExit as exc:
            rc = exc.code
        report = json.loads(capsys.readouterr().out)
        return rc, {(f["status"], f["what"]) for f in report["findings"] if f["path"].endswith("oracle.items.jsonl")}

    rc, found = verify(str(root))
    assert rc == 0
    assert any(s == "verified" and w.startswith("row hashes: each row's doc_hash is its item's in ds/")
               for s, w in found)
    assert any(s == "cannot vouch" and "prompt_hash is not recomputed" in w for s, w in found)
    rows = _rows(preds)
    rows[0]["doc_hash"] = rows[1]["doc_hash"]
    _write(preds, rows)
    rc, found = verify(str(root))
    assert rc == 1
    assert any(s == "failed" and w.startswith("row 1: column 'doc_hash'") for s, w in found)
    alone = tmp_path / "alone"
    alone.mkdir()
    _write(alone / "oracle.items.jsonl", [{k: v for k, v in r.items() if k not in ("doc_hash", "prompt_hash")}
                                          for r in rows])
    rc, found = verify(str(alone))
    assert rc == 0 and any(s == "cannot vouch" and "carry no doc_hash / prompt_hash" in w for s, w in found)


def test_a_servers_rows_hash_its_rendered_request_and_options(mixed_dataset, tmp_path):
    """``openai:``: the prompt_hash is the rendered request (media as stand-ins with their SHA-256) with the runner
    options that shape it; the doc_hash is the item's, whatever the runner."""
    import hashlib

    from chat_server import ChatServer

    from omniaudit.records import canonical
    from omniaudit.runners.payload import render_messages

    made = {}
    with ChatServer() as server:
        for dialect in ("vllm", "frames"):
            out = tmp_path / f"{dialect}.jsonl"
            run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", out, dialect=dialect,
                      cache_dir=tmp_path / "c", fps=4.0, max_frames=2)
            made[dialect] = {r["id"]: r for r in _rows(out)}
    scripted = tmp_path / "scripted.jsonl"
    run_judge(mixed_dataset, "mixed", "scripted:random", scripted)
    items = {i.id: i for i in load_items(mixed_dataset, "mixed")}
    for id, row in made["vllm"].items():
        assert row["doc_hash"] == made["frames"][id]["doc_hash"] == doc_hash(items[id])
        assert row["prompt_hash"] != made["frames"][id]["prompt_hash"]  # another dialect: another request
    settings = {"dialect": "vllm", "fps": 4.0, "max_frames": 2, "top_logprobs": 10}
    request = canonical({"request": render_messages(items["audio/1"]), "settings": settings})
    assert made["vllm"]["audio/1"]["prompt_hash"] == hashlib.sha256(request.encode()).hexdigest()
    assert {r["id"]: r["doc_hash"] for r in _rows(scripted)} == {id: r["doc_hash"] for id, r in made["vllm"].items()}
