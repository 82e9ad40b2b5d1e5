"""A model that reads what the rules left unread: ``omniaudit judge --extractor SPEC`` for closed items.

The rule-based reader (:mod:`~.reading`) abstains rather than guess. Two of its reasons say it did not understand
the reply, not that the reply commits to nothing: ``none`` (no option named in a way the rules know) and
``language`` (a language the readers do not gloss). Only those rows are put to an extractor model (any runner SPEC,
e.g. a served instruction model), with the item's question, its options and the reply, asked for the option the
reply finally chooses or ``none``; its answer is read by the same reader. A row it reads gets the option, ``read_by:
extractor``, the extractor's spec and raw reply, and keeps the rules' reason as ``unread_by_rules``; a row it does
not read stays unread. Doubt (``hedged``, ``negated``, ``reversed``, ``conflict``, ``tie``, ``reasoning-only``,
``noise``, ``empty``) is never put to it: an extractor must not turn doubt into an answer.

``omniaudit judge --read-reasoning`` is the other rescue, asked for by name because a trace weighs options it may
drop (:mod:`~.reasoning`): a reply that is deliberation only (an empty visible answer after a *concluded* trace,
never one the token limit cut off) is read from its trace by the same reader, which still abstains on a trace that
hedges, conflicts or takes its choice back; the row says ``read_by: reasoning``. A visible answer the rules could not
read ("Neither is faithful.") is never overruled by its trace.

Audits read these rows like any other and count them apart; ``--exclude-extracted`` leaves them out
(:data:`omniaudit.predictions.EXTRACTED`).
"""

from __future__ import annotations

from collections.abc import Callable

from omniaudit.runners.items import JudgeItem
from omniaudit.runners.reading import question_of, read_answer
from omniaudit.runners.reasoning import split_reasoning

RESCUABLE = ("none", "language")  # the rules did not understand the reply; every other reason is the reply's doubt
NONE = "none"
PROMPT = ("A model was asked a closed question and replied in free text. Read its reply.\n\n"
          "Question: {question}\nOptions: {options}\n\nReply:\n<<<\n{reply}\n>>>\n\n"
          "Which option does the reply finally choose? Answer with exactly one of: {options}, {none}. Answer {none} "
          "when it chooses no option (it hedges, calls it a tie, refuses, or answers something else).")


def extraction_item(item: JudgeItem, raw: str, key: str) -> JudgeItem:
    """The extractor's question about one reply: the item's question sentence, its options and ``none``."""
    options = ", ".join(item.options)
    return JudgeItem(id=key, options=[*item.options, NONE],
                     prompt=PROMPT.format(question=question_of(item.prompt) or item.prompt, options=options,
                                          reply=raw, none=NONE))


def rescue_unread(pairs: list[tuple[dict, JudgeItem]], spec: str, progress: Callable[[str], None] | None = None,
                  **judge_options) -> int:
    """Put the closed rows the rules did not understand (:data:`RESCUABLE`) to the extractor ``spec``; rows it reads
    are updated in place (see the module docstring). Returns how many it read."""
    from omniaudit.runners.factory import make_judge
    from omniaudit.runners.transport import redact

    asked = [(row, item) for row, item in pairs
             if item.closed and row.get("label") is None and row.get("unread") in RESCUABLE]
    if not asked:
        return 0
    if progress:
        progress(f"extractor {redact(spec)}: {len(asked)} replies the rules left unread")
    items = [extraction_item(item, row["raw"], f"{item.id}#{row.get('run', 0)}") for row, item in asked]
    raws = make_judge(spec, **judge_options).answer(items)
    read = 0
    for (row, item), raw in zip(asked, raws, strict=True):
        got = read_answer(raw, [*item.options, NONE]).option
        row["extractor"], row["extractor_raw"] = redact(spec), str(raw)
        if got is not None and got != NONE:
            row.update(label=got, parsed=True, read_by="extractor", unread_by_rules=row.pop("unread"))
            read += 1
    return read


def read_traces(pairs: list[tuple[dict, JudgeItem]]) -> int:
    """``--read-reasoning``: the closed rows unread as ``reasoning-only`` whose visible answer is empty and whose
    trace concluded, read from the trace (the reply's ``<think>`` block and the server's ``reasoning``); rows it reads
    are updated in place (``read_by: reasoning``, the rules' reason kept as ``unread_by_rules``). Returns how many."""
    read = 0
    for row, item in pairs:
        if not item.closed or row.get("label") is not None or row.get("unread") != "reasoning-only":
            continue
        split = split_reasoning(row["raw"])
        server = row.get("reasoning") or ""
        if split.cut or split.answer.strip() or (not split.reasoning and row.get("finish_reason") == "length"):
            continue  # cut off (never concluded), or a visible answer the trace must not overrule
        got = read_answer("\n".join(t for t in (split.reasoning, server) if t), item.options, item.prompt).option
        if got is not None:
            row.update(label=got, parsed=True, read_by="reasoning", unread_by_rules=row.pop("unread"))
            read += 1
    return read
