"""A predictions row (the fields: :mod:`~omniaudit.runners.run`): how a runner's answer becomes one (read, its
option probabilities kept where the text agrees, its served model and hashes), whether it is usable, and the
predictions file rows are written to."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from omniaudit.answer_language import unreadable
from omniaudit.errors import InputError
from omniaudit.io import atomic_file, looks_like
from omniaudit.records import canonical
from omniaudit.runners.base import Runner
from omniaudit.runners.items import JudgeItem, Sampling, doc_hash
from omniaudit.runners.payload import constrained_option
from omniaudit.runners.reading import agreeing_probs, read_answer
from omniaudit.runners.reasoning import split_reasoning

MIN_USABLE = 0.2  # a run with fewer usable answers than this share writes nothing (--min-usable)
REFUSAL = re.compile(r"\s*(\[HTTP \d{3}\b|(i'?m|i am) (sorry|unable|not able)|sorry,? (but )?i|i (cannot|can'?t|"
                     r"won'?t|am not able to|do not have access|don'?t have access)|as an ai\b)", re.IGNORECASE)


def is_predictions_file(path: Path) -> bool:
    """An earlier predictions file of ``omniaudit judge`` (which a rerun may replace)."""
    return looks_like(path, {"id", "order", "raw", "label", "parsed"})


def listed_answer_path(judge: Runner, answers: list, i: int) -> str | None:
    """The path answer ``i`` took, where the runner says (its ``answer_paths`` aligned with its last answers)."""
    listed = judge.answer_paths
    return listed[i] if isinstance(listed, list) and len(listed) == len(answers) else None


def listed_option_probs(judge: Runner, answers: list, i: int) -> dict[str, float] | None:
    """Answer ``i``'s option probabilities: its own (an :class:`~.items.Answer`), else the runner's ``option_probs``
    aligned with its last answers; None when it has none."""
    probs = getattr(answers[i], "option_probs", None)  # an Answer carries its own; a plain str has none
    if probs is None:
        listed = judge.option_probs
        if isinstance(listed, list) and len(listed) == len(answers):
            probs = listed[i]
    return {str(k): float(v) for k, v in probs.items()} if probs else None


SERVED_FIELDS = ("served_model", "system_fingerprint")  # a served model's own word on who answered, per row


def served_fields(answer) -> dict[str, str]:
    """The :data:`SERVED_FIELDS` an answer carries (an :class:`~.items.Answer` of a server that gave them), else
    none."""
    return {k: v for k in SERVED_FIELDS if isinstance(v := getattr(answer, k, None), str)}


def served_difference(kept: Iterable[dict], now: Iterable[dict]) -> str | None:
    """How the rows ``now`` differ from the ``kept`` rows in who answered them (their :data:`SERVED_FIELDS`, an
    absent one as null), e.g. ``system_fingerprint "fp-1" (kept) but "fp-2" now``; None when they agree."""
    kept, now = list(kept), list(now)
    parts = []
    for name in SERVED_FIELDS:
        was, is_ = ({json.dumps(r.get(name)) for r in rows} for rows in (kept, now))
        if was != is_:
            parts.append(f"{name} {', '.join(sorted(was))} (kept) but {', '.join(sorted(is_))} now")
    return "; ".join(parts) or None


def prediction_row(item: JudgeItem, raw: str, sampling: Sampling, probs: dict[str, float] | None,
                   provenance: dict | None = None, finish_reason: str | None = None,
                   served: dict[str, str] | None = None, path: str | None = None,
                   hashes: dict[str, str] | None = None) -> dict:
    """One predictions row (see :mod:`~omniaudit.runners.run`); ``served``: its :func:`served_fields`; ``path``: the
    answer's ``answer_path`` where the runner says (default ``free``); ``hashes``: its ``doc_hash`` and
    ``prompt_hash`` (:func:`row_hashes`), placed before ``finish_reason`` and ``provenance``."""
    trace = getattr(raw, "reasoning", None)  # a server's reasoning_content, apart from the text
    raw = str(raw)
    label, dropped, unread = None, None, None
    path = path or "free"
    if item.closed:
        if path == "constrained":  # the server kept the reply to the options: its option, not a reading of it
            label = constrained_option(raw, item.options)
        if label is None:  # its question sentence, never the rest of the prompt; never the reasoning trace
            label, unread = read_answer(raw, item.options, item.prompt, trace)
        if label is None and probs and not raw.strip():  # a runner that scored the options without writing text
            label, unread, path = max(item.options, key=lambda o: cast(dict, probs).get(o, 0.0)), None, "option_scores"
        # the text wins over probabilities it contradicts (a sampled text is a draw from them)
        probs, dropped = agreeing_probs(raw, label, probs, sampled=bool(sampling.temperature))
    else:
        probs = None  # a free-form item is never scored against options
    record = sampling.record()
    row = {"id": item.id, "order": item.order, "run": record.pop("run"), "raw": raw, "label": label,
           "parsed": (label is not None) if item.closed else None, "option_probs": probs,
           "answer_path": path if item.closed else "free", **record}
    if unread:
        row["unread"] = unread  # why no option was read (reading.REASONS)
    reasoning = reasoning_length(raw, trace)
    if reasoning is not None:
        row["reasoning_chars"] = reasoning  # how much the model deliberated (never read as the answer unless asked)
    if trace and str(trace).strip():
        row["reasoning"] = str(trace)  # the server's trace, kept apart from raw (judge --read-reasoning reads it)
    if dropped:
        row["probs_dropped"] = dropped
    row.update(served or {})
    row.update(hashes or {})
    if provenance is not None:
        row["finish_reason"] = finish_reason
        row["provenance"] = provenance
    return row


def reasoning_length(raw: str, trace: str | None) -> int | None:
    """Characters of reasoning in a reply (its ``<think>`` blocks) and a server's separate trace; None when none."""
    inline = split_reasoning(raw).reasoning
    if inline is None and not trace:
        return None
    return len(inline or "") + len(trace or "")


def usable(row: dict) -> bool:
    """An answer an audit can read: a closed item's named option (or option probabilities); a free-form item's
    non-empty text that is not a refusal, an error reply or noise (:func:`~omniaudit.answer_language.
    unreadable`). (Truncated text, ``finish_reason: length``, is usable
    when it named an option or said something.)"""
    if row["parsed"] is not None:
        return bool(row["parsed"]) or row["option_probs"] is not None
    return bool(row["raw"].strip()) and not REFUSAL.match(row["raw"]) and not unreadable(row["raw"])


@dataclass(kw_only=True)
class UnusableRun(InputError):
    """A judge run whose answers are mostly not answers; nothing is written. ``usable`` of ``total`` answers were
    usable (:func:`usable`)."""

    usable: int
    total: int


def check_usable(rows: list[dict], spec: str, min_usable: float) -> None:
    """Stop (UnusableRun) when fewer than ``min_usable`` of the answers are usable: an audit would otherwise score
    a model that said nothing as a coin."""
    good = sum(map(usable, rows))
    if rows and good < min_usable * len(rows):
        bad = next(r for r in rows if not usable(r))
        length = sum(r.get("finish_reason") == "length" for r in rows)
        hint = (f"; {length} replies were cut by the token limit (finish_reason: length): raise --max-tokens"
                if length else "")
        raise UnusableRun(f"{spec} gave {good} usable answers of {len(rows)} (at least {min_usable:.0%} needed): "
                          f"empty replies, refusals, error replies, noise or no option named, e.g. item "
                          f"'{bad['id']}': {bad['raw'][:200]!r}{hint}. No predictions file was written "
                          f"(--min-usable 0 writes it anyway)", usable=good, total=len(rows))


def rendered_request(judge: Runner, item: JudgeItem) -> str:
    """The request ``item`` is sent as, as text: the runner's own ``render(item)`` (``hf:`` the chat template's text,
    ``openai:`` and ``scripted:`` the JSON messages with each media input as a stand-in carrying its size and
    SHA-256, :func:`~.payload.render_messages`); a runner without ``render`` gets the runner-independent messages of
    :func:`~.payload.render_messages`."""
    if judge.renders:
        return judge.render(item)
    from omniaudit.runners.payload import render_messages

    return render_messages(item)


def row_hashes(judge, item: JudgeItem, settings: dict) -> dict[str, str]:
    """A predictions row's ``doc_hash`` and ``prompt_hash`` (as lm-evaluation-harness's ``doc_hash`` /
    ``prompt_hash``), SHA-256 hex digests computed in this one place for every runner:

    - ``doc_hash``: the item as the judge saw it (:func:`~.items.doc_hash`: id, order, condition, system, prompt,
      options, gold / reference / specialist labels, the media inputs' columns, kinds and sizes), which an audit
      recomputes from the dataset (:func:`~omniaudit.row_hashes.check_row_hashes`);
    - ``prompt_hash``: the canonical JSON of ``{"request": rendered_request(judge, item), "settings": settings}``: the
      rendered request as sent (:func:`rendered_request`) and the runner settings that shape it
      (:func:`~.factory.request_settings`). No secret, nonce, URL or sampling setting enters it, so it is the same in
      every run of an item (``--runs``) and on every machine. For ``hf:`` the rendered text holds the template's media
      placeholders, not the media (their sizes are in ``doc_hash``, their content in the dataset fingerprint)."""
    request = canonical({"request": rendered_request(judge, item), "settings": settings})
    return {"doc_hash": doc_hash(item), "prompt_hash": hashlib.sha256(request.encode()).hexdigest()}


def write_jsonl(out: Path, rows: list[dict]) -> None:
    """Write ``rows`` as JSON lines to ``out`` atomically (:func:`omniaudit.io.atomic_file`: a temporary unique to this
    process, an ordinary file's permissions, renamed over ``out``; removed on failure), holding ``out``'s lock."""
    with atomic_file(out, lock=True) as tmp, tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
