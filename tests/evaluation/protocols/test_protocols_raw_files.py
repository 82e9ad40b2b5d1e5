"""`audit protocols` reads another harness's answers (``id`` + ``raw``, no ``label``): each answer is read with the
reader ``omniaudit judge`` uses, and the audit says so (``label_sources.read_by_audit``, the report)."""

import json
from pathlib import Path

import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig, audit_protocols, read_judge_predictions
from omniaudit.evaluation.protocols.report import protocols_report
from omniaudit.runners import run_judge

LABELS = ["angry", "happy", "sad"]
CONFIGS = ("blueprint", "reference", "pairwise", "cue_conflict")


def cue_items(prompt: str | None = None) -> pd.DataFrame:
    rows = [{"id": f"cc/{c}/{cond}", "config": "cue_conflict", "attribute": "emotion", "condition": cond,
             "clip_id": f"clip{c}", "options": LABELS, "k": 3, "gold": gold, "cue": LABELS[(c + 1) % 3]}
            for c, gold in enumerate(LABELS) for cond in ("none", "conf_spec")]
    frame = pd.DataFrame(rows).reindex(columns=["id", "config", "attribute", "task", "condition", "placement",
                                                "clip_id", "trial", "order", "format", "options", "k", "gold", "cue"])
    frame = frame.astype(object).where(frame.notna(), None)
    return frame if prompt is None else frame.assign(prompt=prompt)


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_file_of_id_and_raw_has_its_labels_read_and_counted(tmp_path):
    items = cue_items()
    ids = list(items["id"])
    texts = ["angry", "I think it's happy.", "hmm, hard to say", "", "Sad.", "The speaker sounds angry."]
    path = write(tmp_path / "other.jsonl", [{"id": i, "raw": t} for i, t in zip(ids, texts, strict=True)])
    pred = read_judge_predictions([f"other={path}"], items)["other"]
    assert [lab if isinstance(lab, str) else None for lab in pred["label"]] == [
        "angry", "happy", None, None, "sad", "angry"]
    sources = pred.attrs["label_sources"]
    assert sources == {"rule": 4, "extractor": 0, "option_probs": 0, "given": 0, "unparsed": 2, "answers": 6,
                       "read_by_audit": 6}
    result = {"dataset": "d", **audit_protocols(items, {"other": pred}, ProtocolAuditConfig(n_resamples=20))}
    assert result["label_sources"]["other"] == sources
    assert "6 of them came without a `label` (another harness's `id` + `raw`)" in protocols_report(result)


def test_a_file_with_labels_is_read_as_before(tmp_path):
    """A label column wins: the answers are not read again, and nothing is counted as read by the audit."""
    items = cue_items()
    path = write(tmp_path / "j.jsonl", [{"id": i, "raw": "angry", "label": "sad"} for i in items["id"]])
    sources = read_judge_predictions([f"j={path}"], items)["j"].attrs["label_sources"]
    assert sources["rule"] == len(items) and "read_by_audit" not in sources


def test_labels_the_rules_did_not_read_count_apart_and_can_be_left_out(tmp_path):
    """Rows `omniaudit judge` read with an extractor or from a reasoning trace (``read_by``) are counted apart;
    ``extracted=False`` (``--exclude-extracted``) leaves them unread and the report says how many."""
    items = cue_items()
    by = [None, "extractor", "reasoning", None, "extractor", None]
    rows = [{"id": i, "raw": "…", "label": "sad", "parsed": True, **({"read_by": b} if b else {})}
            for i, b in zip(items["id"], by, strict=True)]
    path = write(tmp_path / "j.jsonl", rows)
    kept = read_judge_predictions([f"j={path}"], items)["j"]
    assert list(kept["label"]) == ["sad"] * 6
    assert {k: kept.attrs["label_sources"].get(k, 0) for k in ("rule", "extractor", "reasoning", "excluded")} == {
        "rule": 3, "extractor": 2, "reasoning": 1, "excluded": 0}
    left = read_judge_predictions([f"j={path}"], items, extracted=False)["j"]
    assert [lab if isinstance(lab, str) else None for lab in left["label"]] == [
        "sad", None, None, "sad", None, "sad"]
    assert left.attrs["label_sources"]["excluded"] == 3
    result = {"dataset": "d", **audit_protocols(items, {"j": left}, ProtocolAuditConfig(n_resamples=20))}
    assert "3 read by an extractor or from a reasoning trace and left out (--exclude-extracted)" in \
        protocols_report(result)


def test_the_answer_is_read_with_the_items_question(tmp_path):
    """The reader is given the item's prompt, as ``omniaudit judge`` gives it: a statement in the question's own
    words ("clip A has less background noise") answers it; without the question it names no option."""
    from omniaudit.runners.reading import read_answer

    prompt = "Listen to both clips. Which clip has cleaner audio, with less background noise?"
    text = "Clip A has less background noise."
    items = cue_items(prompt=prompt).assign(options=[["A", "B"]] * 6)
    path = write(tmp_path / "q.jsonl", [{"id": i, "raw": text} for i in items["id"]])
    pred = read_judge_predictions([f"q={path}"], items)["q"]
    assert list(pred["label"]) == ["A"] * 6 and read_answer(text, ["A", "B"]).option is None
    unprompted = read_judge_predictions([f"q={path}"], items.drop(columns="prompt"))["q"]
    assert unprompted.attrs["label_sources"]["unparsed"] == 6


def test_a_file_without_label_or_raw_is_refused_naming_both(tmp_path):
    items = cue_items()
    path = write(tmp_path / "bad.jsonl", [{"id": i, "answer": "sad"} for i in items["id"]])
    with pytest.raises(InputError, match="id and label, or id and the answer text in raw"):
        read_judge_predictions([f"bad={path}"], items)


def test_audit_protocols_reads_a_harness_file_as_the_runner_did(protocol_dataset, tmp_path, capsys):
    """The runner's own files stripped to id + raw: the audit reads every label the runner read, so every estimate is
    the same; the only difference is how the labels were obtained."""
    stripped = []
    for config in CONFIGS:
        path = tmp_path / f"random.{config}.jsonl"
        run_judge(protocol_dataset, config, "scripted:random", path)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        stripped.append(write(tmp_path / f"other.{config}.jsonl", [{"id": r["id"], "raw": r["raw"]} for r in rows]))
    common = ["audit", "protocols", "--dataset", str(protocol_dataset), "--n-resamples", "20"]
    assert main([*common, "--predictions", *(f"j={tmp_path / f'random.{c}.jsonl'}" for c in CONFIGS),
                 "--out", str(tmp_path / "runner")]) == 0
    assert main([*common, "--predictions", *(f"j={p}" for p in stripped), "--out", str(tmp_path / "other")]) == 0
    capsys.readouterr()
    runner, other = (json.loads((tmp_path / d / "audit.json").read_text()) for d in ("runner", "other"))
    for metric in ("accuracy", "parse_rate", "rf", "lock", "p_a", "follow_cue"):
        assert other[metric] == runner[metric], metric
    n = runner["label_sources"]["j"]["answers"]
    assert other["label_sources"]["j"] == {**runner["label_sources"]["j"], "read_by_audit": n}
    assert [p["known"] for p in other["provenance"]["j"]] == [False] * len(CONFIGS)
    assert f"{n} of them came without a `label`" in (tmp_path / "other" / "report.md").read_text()
