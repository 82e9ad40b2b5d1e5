"""Reading one free-form composition reply without a judge: what answer it states, or why it states none.

A reply is read, in order (:func:`read_reply`):

1. its reasoning trace set aside (:func:`omniaudit.runners.reasoning.split_reasoning`): a trace is deliberation,
   never the answer; a reply that is only a trace, or whose trace was cut off (the token limit came first), states
   no answer (``reasoning-only``);
2. the normalised exact match of what is left (:func:`omniaudit.answer_match.exact_match`): the gold answer;
3. a count or a yes/no gold: the closed readers (:mod:`~.closed_answers`: "There are three dogs." is 3), whose
   abstention stands (a hedged or conflicting count is no answer, and no other reader overrides it);
4. any other gold: the template's answer vocabulary (the sample's ``answer_vocabulary``, the template's possible
   answers) read by :func:`omniaudit.runners.reading.read_answer` ("It is red.", "Answer: red", "I think it is red,
   not blue." read ``red``; "Red or blue?", "Maybe red." read nothing).

What no reader reads is *ungraded*: the grader (:func:`.grading.grade`) asks the judge about it when one is given,
else it is neither right nor wrong and the audit's measures leave it out (doubt is never read as an answer). An
empty reply is no answer, not doubt: it is graded wrong (``empty``), as before.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from omniaudit.answer_match import exact_match, normalize
from omniaudit.evaluation.composition.closed_answers import closed_kind, read_number, read_yes_no
from omniaudit.runners.reading import read_answer
from omniaudit.runners.reasoning import split_reasoning

UNGRADED_HINT = "no grader; pass --grader SPEC"  # what a judge-less audit says of the replies it could not read


class Read(NamedTuple):
    """A reply as read: ``value`` (the answer it states, normalised; None: none read), ``by`` (``exact``,
    ``closed`` or None), ``reason`` (why none was read: ``empty``, ``reasoning-only`` or the reader's reason) and
    ``visible`` (the reply without its reasoning trace)."""

    value: str | None
    by: str | None
    reason: str | None
    visible: str


def _text(raw: object) -> str:
    return "" if raw is None or (isinstance(raw, float) and raw != raw) else str(raw)


def visible_answer(raw: object) -> str | None:
    """The reply without its reasoning trace; None when it is only a trace or the trace was cut off."""
    split = split_reasoning(_text(raw))
    if split.cut or (split.reasoning is not None and not split.answer.strip()):
        return None
    return split.answer


def _options(vocabulary: object, answer: str) -> list[str]:
    """The template's possible answers (the gold among them), or none without a vocabulary."""
    if vocabulary is None or isinstance(vocabulary, float | str):
        return []
    words = [str(w) for w in vocabulary if w is not None and str(w).strip()]
    return words + [answer] if words and normalize(answer) not in {normalize(w) for w in words} else words


def read_reply(raw: object, answer: str, question: str | None = None, vocabulary: object = None) -> Read:
    """What ``raw`` states as the answer to ``question`` (gold ``answer``; ``vocabulary``: the template's possible
    answers), or why it states none (see the module docstring)."""
    if not _text(raw).strip():
        return Read(None, None, "empty", "")
    visible = visible_answer(raw)
    if visible is None:
        return Read(None, None, "reasoning-only", "")
    if not visible.strip():
        return Read(None, None, "empty", "")
    if exact_match(visible, answer):
        return Read(normalize(answer), "exact", None, visible)
    kind = closed_kind(answer)
    if kind is not None:
        reading = read_number(visible, question) if kind == "number" else read_yes_no(visible)
    else:
        options = _options(vocabulary, answer)
        reading = read_answer(visible, options, question) if options else None
    if reading is None:
        return Read(None, None, "no reader", visible)
    if reading.option is None:
        return Read(None, None, reading.reason or "none", visible)
    return Read(normalize(reading.option), "closed", None, visible)


def ungraded_note(n_ungraded: int, n_rows: int, judge: str | None,
                  reasons: dict[str, int] | None = None) -> str | None:
    """"N of M rows ungraded: no grader; pass --grader SPEC" (None when every row was graded); replies that are only a
    reasoning trace, which no grader reads, are counted apart ("(K only a reasoning trace)"), and the hint is given
    only where a grader would read the rest. ``reasons``: why the rows were not read -> count."""
    if not n_ungraded:
        return None
    trace = (reasons or {}).get("reasoning-only", 0)
    note = f"{n_ungraded} of {n_rows} rows ungraded"
    if trace:
        note += f" ({trace} only a reasoning trace, cut off or never concluded)"
    return note + ("" if judge or n_ungraded <= trace else f": {UNGRADED_HINT}")


def comparable(graded: pd.DataFrame) -> pd.Series:
    """Per graded row (indexed by ``id``; ungraded rows left out): the answer two replies are compared by: the value
    read (exact or closed), else the reply without its trace (for the judge's comparison)."""
    kept = graded[~ungraded_mask(graded)]
    if "read" not in kept.columns:
        return kept.set_index("id")["prediction"].astype(str)
    text = kept["prediction"].map(lambda p: visible_answer(p) or "")
    return pd.Series(kept["read"].where(kept["read"].notna(), text).astype(str).to_numpy(), index=kept["id"])


def ungraded_mask(graded: pd.DataFrame) -> pd.Series:
    """Rows no reader and no judge graded (all False for a frame graded before ungraded rows were kept apart)."""
    if "ungraded" not in graded.columns:
        return pd.Series(False, index=graded.index)
    return graded["ungraded"].fillna(False).astype(bool)


def failed_ids(graded: pd.DataFrame) -> set:
    """The ids a run got wrong: graded and not correct (an ungraded row is neither right nor wrong)."""
    return set(graded.loc[~graded["correct"].astype(bool) & ~ungraded_mask(graded), "id"])
