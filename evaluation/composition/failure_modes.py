"""Dominance vs incomplete fusion (C3PO §4.3), read off a model's answers to the bypass-test ablations.

For every sample the model gets wrong on the full input (answer ``f``), its answers to the ablated copies say which
modalities the wrong answer depends on. An ablated answer *moved* when it is not the same answer as ``f`` by the
composition grader's rule (:func:`.grading.grade`: normalised exact match, then, when a judge is
given, the judge's Yes / No on whether the two pick out the same entity or concept), so a rephrasing is no move:

- the ``text_only`` copy did not move: **text dominance** (a prior; the media are ignored);
- removing exactly one grounded modality ``m`` moves the answer, removing any other does not: **``m``
  dominance** (the answer follows ``m`` and ignores the others);
- otherwise (no single modality, or several, moves the answer): **incomplete fusion**; this needs two grounded
  modalities. A sample with one grounded modality has nothing to fuse: removing it (which leaves the text only)
  moved the answer, ``m`` dominance, or did not, text dominance; when its ``text_only`` copy moved but the copy
  without ``m`` (the same text-only input) did not, the two answers to one input disagree: **unstable** (sampling
  noise), not classified.

Failures that say nothing about fusion are not classified: ``unanswered`` (empty answer), ``unclassified`` (an
ablation unanswered), ``unstable``.

**Swaps** (``swap_audio`` / ``swap_image``: the modality replaced by another sample's of the same template) do not
classify: a failure needs only the removal ablations and ``text_only`` answered, and its mode is read off them
alone. Where a swap was answered, it *corroborates* the call (:func:`swap_agreement`): an ``m`` dominance failure
follows ``m`` and ignores the rest, so swapping ``m`` should move it and swapping another modality should not; a
text-dominance failure ignores the media, so no swap should.
Swap moves are reported beside the others (:func:`move_rates`) but are not held against the stability floor.

**Stability floor.** A move is only evidence of modality dependence where ablations move answers more often than
re-running the intact sample does. Per model, :func:`stability_floor` is how often another sampled run's answer to
the same full input is not the same answer (graded equivalence, as above) as a failed answer, and
:func:`move_rates` each ablation's move rate over the classified failures; both with Wilson 95% intervals.
:func:`floor_check` applies the rule: an ablation's moves *clear the floor* when its move rate's lower bound exceeds
the floor's upper bound; a decomposition is **flagged** when any ablation that moved an answer does not clear it
(its dominance / fusion calls may be sampling noise), and **unchecked** when the floor cannot be measured (one run).

**Chance.** With a few possible answers an ablated answer often agrees with the failed one by chance, so the
dominance share of a model that reads no content is not 0.5 (0.46-0.63 on the default build). :mod:`.dominance_null`
gives each sample its own content-blind null, written per model as ``failure_decomposition.models.<m>.dominance_test``
in ``audit.json`` (``per_sample``, ``null_per_sample``, ``value``, ``null``, ``null_by_policy``, ``n_samples``,
``method``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from omniaudit.answer_language import unreadable
from omniaudit.answer_match import normalize
from omniaudit.evaluation.composition.grading import grade
from omniaudit.evaluation.composition.replies import read_reply, ungraded_mask, visible_answer

ABLATION_OF = {"mute_audio": "audio", "drop_image": "image", "blank_video": "video"}
CLASSIFYING = (*ABLATION_OF, "text_only")  # the ablations a failure mode is read off (swaps only corroborate)
UNCLASSIFIED = ("unanswered", "unclassified", "unstable", "ungraded")
Z95 = 1.959963984540054
FLOOR_RULE = ("an ablation's moves clear the stability floor when the Wilson 95% lower bound of its move rate "
              "exceeds the Wilson 95% upper bound of the floor; the decomposition is flagged when an ablation that "
              "moved any answer does not clear it, unchecked without a floor (one run)")


def wilson(k: int, n: int) -> list[float | None]:
    """Wilson score 95% interval of k successes in n trials ([None, None] for n = 0); the same as SciPy's
    ``binomtest(k, n).proportion_ci(method="wilson")``."""
    if not n:
        return [None, None]
    p = k / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


class AnswerMatcher:
    """Whether two answers to one question are the same answer, by the composition grader's rule
    (:func:`.grading.grade`): normalised exact match, then the judge (any ``omniaudit judge``
    SPEC) when one is given, asked with one answer as the reference. Each distinct pair is decided once (cached;
    the pair's order does not matter) and the judge is asked in one batch per call of :meth:`same`."""

    def __init__(self, judge: str | None = None, **judge_options) -> None:
        self.judge, self.judge_options = judge, judge_options
        self._known: dict[tuple[str, str, str], bool] = {}
        self.n_judged = 0  # pairs the judge was asked about

    @staticmethod
    def _key(question: str, a: str, b: str) -> tuple[str, str, str]:
        na, nb = sorted((normalize(str(a)), normalize(str(b))))
        return str(question), na, nb

    def same(self, pairs: Iterable[tuple[str, str, str]]) -> list[bool]:
        """``(question, answer_a, answer_b)`` -> same answer?"""
        pairs = [(str(q), str(a), str(b)) for q, a, b in pairs]
        todo: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        for q, a, b in pairs:
            key = self._key(q, a, b)
            if key in self._known or key in todo:
                continue
            if key[1] and key[1] == key[2]:
                self._known[key] = True
            elif not self.judge or not key[1] or not key[2]:
                self._known[key] = False
            else:
                todo[key] = (q, a, b)
        if todo:
            ids = [f"pair-{k}" for k in range(len(todo))]
            frame = pd.DataFrame({"id": ids, "template_name": "", "category": "", "tier": 0,
                                  "question": [q for q, _, _ in todo.values()],
                                  "answer": [a for _, a, _ in todo.values()]})
            answers = pd.DataFrame({"id": ids, "prediction": [b for _, _, b in todo.values()]})
            graded = grade(frame, answers, self.judge, **self.judge_options)
            self.n_judged += int(graded["judge_prompt"].notna().sum())
            for key, same in zip(todo, graded["correct"].astype(bool), strict=True):
                self._known[key] = bool(same)
        return [self._known[self._key(q, a, b)] for q, a, b in pairs]


def mode_of(moved: dict[str, bool]) -> str:
    """Failure mode from which ablations moved the answer (ablation name -> moved); see the module docstring."""
    grounded = [name for name in moved if name in ABLATION_OF]
    if "text_only" in moved and not moved["text_only"]:
        return "text_dominance"
    if not grounded:  # the media moved the answer, but no ablation says which
        return "unclassified"
    hits = [ABLATION_OF[name] for name in grounded if moved[name]]
    if len(grounded) == 1:  # one grounded modality: nothing to fuse
        if hits:
            return f"{hits[0]}_dominance"
        return "unstable" if moved.get("text_only") else "text_dominance"
    return f"{hits[0]}_dominance" if len(hits) == 1 else "incomplete_fusion"


def classify(full: str, ablated: dict[str, str], question: str = "", matcher: AnswerMatcher | None = None) -> str:
    """Failure mode of one wrong answer ``full`` given the answers to its ablations (name -> answer); answers are
    compared by ``matcher`` (default: normalised exact match, no judge)."""
    matcher = matcher or AnswerMatcher()
    names = list(ablated)
    same = matcher.same((question, full, ablated[name]) for name in names)
    return mode_of({name: not s for name, s in zip(names, same, strict=True)})


def _blank(answer: object) -> bool:
    """No answer: None, NaN (a missing cell) or only whitespace."""
    return answer is None or (isinstance(answer, float) and answer != answer) or not str(answer).strip()


def _no_answers(graded: pd.DataFrame, questions: pd.Series, ablated: pd.Series) -> pd.Series:
    """Per sample: its answer says nothing about the inputs, so its failure is ``unanswered``: blank, the question
    echoed back (the answer repeats it), noise (:func:`~omniaudit.answer_language.unreadable`), or the one
    answer the run gives to every question and every ablation (a
    constant model: at least 3 different questions, one answer, nothing ever moves). Such a wrong answer persists
    under every ablation, which would otherwise read as text dominance. A reasoning trace is set aside first (a
    trace that restates the question is no echo)."""
    from omniaudit.answer_match import normalize

    def said(a: object) -> str:
        return "" if _blank(a) else (visible_answer(a) or "").strip()

    shown = graded["prediction"].map(said)
    answers = shown.map(lambda a: normalize(a) if a else "")
    asked = questions.map(lambda q: normalize(str(q)) if isinstance(q, str) and q.strip() else "\0")
    echoed = [bool(q) and q in a for a, q in zip(answers, asked, strict=True)]  # the prompt repeated (safe side)
    every = set(answers) | {normalize(t) if (t := said(a)) else "" for a in ablated}
    constant = len(every) == 1 and questions.nunique() >= 3
    noise = shown.map(lambda a: bool(a) and unreadable(a))  # a broken model's bytes
    return answers.eq("") | pd.Series(echoed, index=graded.index) | noise | constant


def _ablated_values(row, ablated: dict[str, str], vocabulary: object, matcher: AnswerMatcher) -> dict:
    """Ablation -> the answer its reply is compared by: the value a reader reads in it (:func:`~.replies.read_reply`,
    against the sample's gold, question and vocabulary), else, when a judge compares answers, the reply without its
    trace; None when it is ungraded (no reader reads it and no judge, or it is only a reasoning trace)."""
    out = {}
    for name, answer in ablated.items():
        read = read_reply(answer, str(row.answer), str(row.question), vocabulary)
        if read.value is not None:
            out[name] = read.value
        elif read.reason == "empty":
            out[name] = ""
        else:
            out[name] = read.visible if matcher.judge and read.reason != "reasoning-only" else None
    return out


def _compared(graded: pd.DataFrame, ablated: dict[str, dict], matcher: AnswerMatcher) -> tuple[pd.Series, dict]:
    """The failed answers and their ablated answers as compared: by the values read (a grade() frame, with ``read``)
    or by the raw replies (a frame without it); an ungraded ablated reply is None."""
    if "read" not in graded.columns or "answer" not in graded.columns:
        return graded["prediction"].astype(str), ablated
    from omniaudit.evaluation.composition.grading import VOCABULARY

    full = graded["read"].where(graded["read"].notna(),
                                graded["prediction"].map(lambda p: visible_answer(p) or "")).astype(str)
    vocabularies = graded[VOCABULARY] if VOCABULARY in graded.columns else pd.Series(None, index=graded.index)
    out = {r.id: _ablated_values(r, ablated.get(r.id, {}), v, matcher)
           for r, v in zip(graded.itertuples(), vocabularies, strict=True)}
    return full, out


def decompose(graded: pd.DataFrame, ablation_answers: pd.DataFrame,
              expected: dict[str, set[str]] | None = None, matcher: AnswerMatcher | None = None) -> dict:
    """Counts and rates of each failure mode, overall and per template.

    ``graded``: one run's graded samples (``id``, ``template_name``, ``prediction``, ``correct``, and ``question``
    for the judge; a :func:`.grading.grade` frame also ``answer``, ``read``, ``ungraded`` and the vocabulary);
    ``ablation_answers``: ``sample_id``, ``ablation``, ``prediction`` of the same run; ``expected``: the ablations
    each sample has in the dataset; ``matcher``: how answers are compared (default: normalised exact match). Answers
    are compared by what the readers read in them (:func:`~.replies.read_reply`: "It is red." and "red" are one
    answer), the judge comparing the replies no reader reads. A sample whose own answer is ungraded is no failure
    (``n_ungraded`` counts them); a failure one of whose classifying ablated answers is ungraded is ``ungraded``
    (an ungraded swap is left out), never classified. A failed sample with no answer (:func:`_no_answers`: blank,
    echoed, a constant) is ``unanswered``; one whose ablations were not all answered (missing, or an empty answer,
    which says nothing about what moved it) is ``unclassified`` (a dominance call on a partial set could be wrong).
    Each classified sample's record keeps ``moved`` (ablation -> moved).
    """
    matcher = matcher or AnswerMatcher()
    by_sample = {sid: dict(zip(g["ablation"], g["prediction"], strict=True))
                 for sid, g in ablation_answers.groupby("sample_id")}
    modes, todo = [], []
    questions = graded["question"] if "question" in graded.columns else pd.Series("", index=graded.index)
    no_answer = _no_answers(graded, questions, ablation_answers["prediction"])
    failed = ~graded["correct"].astype(bool) & ~ungraded_mask(graded)
    full, values = _compared(graded[failed], by_sample, matcher)
    for r, question, none, answer in zip(graded[failed].itertuples(), questions[failed], no_answer[failed], full,
                                         strict=True):
        # swaps corroborate, never classify: only the removal ablations and text_only must be answered
        ablated = {k: a for k, a in by_sample.get(r.id, {}).items() if k in CLASSIFYING or not _blank(a)}
        needed = expected.get(r.id, set()) if expected is not None else set(ablated)
        needed = {k for k in needed if k in CLASSIFYING}
        record = {"id": r.id, "template_name": r.template_name, "mode": None}
        read = {k: v for k, v in values.get(r.id, {}).items() if k in ablated}
        if none:
            record["mode"] = "unanswered"
        elif (not needed & set(ablated) or not needed <= set(ablated)
              or any(_blank(a) or unreadable(str(a)) for a in ablated.values())):
            record["mode"] = "unclassified"  # without every ablation answered, a dominance call could be wrong
        elif any(read[k] is None for k in read if k in CLASSIFYING):
            record["mode"] = "ungraded"  # an ablated answer no reader reads: what moved is unknown
        else:
            todo.append((record, str(question), answer, {k: v for k, v in read.items() if v is not None}))
        modes.append(record)
    same = iter(matcher.same((q, full, answer) for _, q, full, ablated in todo for answer in ablated.values()))
    for record, _, _, ablated in todo:
        record["moved"] = {name: not next(same) for name in ablated}
        record["mode"] = mode_of(record["moved"])
    table = pd.DataFrame([{k: m[k] for k in ("id", "template_name", "mode")} for m in modes],
                         columns=["id", "template_name", "mode"])
    return {**rates_by_template(table), "samples": modes, "n_ungraded": int(ungraded_mask(graded).sum())}


def rates_by_template(table: pd.DataFrame) -> dict:
    """Counts and rates of the failure modes in ``table`` (``template_name``, ``mode``), overall and per template."""
    def rates(frame: pd.DataFrame) -> dict:
        counts = frame["mode"].value_counts().sort_index()
        return {"n_failures": len(frame), "counts": {k: int(v) for k, v in counts.items()},
                "rates": {k: float(v / len(frame)) for k, v in counts.items()}}

    return {"overall": rates(table), "by_template": {t: rates(g) for t, g in table.groupby("template_name",
                                                                                          sort=True)}}


CLASSIFIED = ("text_dominance", "audio_dominance", "image_dominance", "video_dominance", "incomplete_fusion")


def _shares(modes: pd.Series) -> dict:
    """Shares of each classified mode among the classified failures (dominance + incomplete fusion; unanswered,
    unclassified and unstable failures say nothing about fusion and are left out), and the dominance share (their
    sum)."""
    modes = modes[modes.isin(CLASSIFIED)]
    n = len(modes)
    shares = {m: float((modes == m).sum() / n) for m in CLASSIFIED} if n else {m: None for m in CLASSIFIED}
    dominance = float(modes.str.endswith("_dominance").sum() / n) if n else None
    return {"n_classified": n, "shares": shares, "dominance_share": dominance}


def cohort_decomposition(per_model: dict[str, pd.DataFrame]) -> dict:
    """Failure decomposition across models (C3PO Table 12 and the 86-95% dominance statistic).

    ``per_model``: model -> its failed samples (``template_name``, ``mode``; its runs pooled). Per model, overall and
    per template, each mode's share of the *classified* failures (the four dominance modes + incomplete fusion) and
    the dominance share (their dominance part). ``combined``: the mean over models of those shares (each model
    weighs the same, as the paper's cohort average; a model without a classified failure on a template is left out
    of that template's mean, ``n_models`` says how many count; ``n_classified`` is the models' classified failures
    together).
    """
    models = {m: {"overall": _shares(t["mode"]),
                  "by_template": {name: _shares(g["mode"]) for name, g in t.groupby("template_name", sort=True)}}
              for m, t in per_model.items()}

    def mean_over(entries: list[dict]) -> dict:
        entries = [e for e in entries if e["n_classified"]]
        if not entries:
            return {"n_models": 0, "n_classified": 0, "shares": {m: None for m in CLASSIFIED},
                    "dominance_share": None}
        return {"n_models": len(entries), "n_classified": int(sum(e["n_classified"] for e in entries)),
                "shares": {m: float(sum(e["shares"][m] for e in entries) / len(entries)) for m in CLASSIFIED},
                "dominance_share": float(sum(e["dominance_share"] for e in entries) / len(entries))}

    templates = sorted({t for v in models.values() for t in v["by_template"]})
    combined = {"overall": mean_over([v["overall"] for v in models.values()]),
                "by_template": {t: mean_over([v["by_template"][t] for v in models.values() if t in v["by_template"]])
                                for t in templates}}
    return {"models": models, "combined": combined}


def stability_floor(answers: dict[str, pd.Series], failed: dict[str, set],
                    questions: pd.Series | dict | None = None, matcher: AnswerMatcher | None = None) -> dict:
    """How often re-running the *full* input (sampling on) alone moves a wrong answer: the noise floor of a
    "removing modality m moved the answer" call.

    ``answers``: run -> the run's answers to the samples (Series indexed by sample id); ``failed``: run -> the ids it
    got wrong; ``questions``: sample id -> question (for the judge); ``matcher``: how answers are compared (default:
    normalised exact match). For every run i, every sample it failed and every other run j of the same model, the
    pair counts as moved when run j's answer to the same full input is not the same answer. ``floor`` = moved pairs /
    pairs (None with fewer than two runs), ``ci`` its Wilson 95% interval (pairs taken as independent).
    """
    matcher = matcher or AnswerMatcher()
    questions = questions if questions is not None else {}
    runs = list(answers)
    pairs = [(str(questions.get(sid, "")), str(answers[i][sid]), str(answers[j][sid]))
             for i in runs for j in runs if i != j for sid in sorted(failed.get(i, set()), key=str)
             if sid in answers[j].index]
    moved = sum(not s for s in matcher.same(pairs))
    n = len(pairs)
    return {"floor": float(moved / n) if n else None, "ci": wilson(moved, n), "n_pairs": n, "n_moved": moved,
            "n_runs": len(runs)}


def move_rates(samples: list[dict]) -> dict:
    """Per ablation, how often it moved a failed answer, over the classified failures that have it (decompose's
    sample records with ``moved``): ``{ablation: {n, n_moved, rate, ci}}`` (Wilson 95%)."""
    counts: dict[str, list[int]] = {}
    for record in samples:
        for name, moved in (record.get("moved") or {}).items():
            c = counts.setdefault(name, [0, 0])
            c[0] += 1
            c[1] += bool(moved)
    return {name: {"n": n, "n_moved": k, "rate": k / n, "ci": wilson(k, n)} for name, (n, k) in sorted(counts.items())}


def swap_agreement(samples: list[dict]) -> dict:
    """Per swap ablation, how often it agrees with the failure mode read off the removals (decompose's records with
    ``moved``): an ``m`` dominance failure follows ``m`` and ignores the rest, so it agrees when ``swap_m`` moved it
    and another modality's swap did not; a text-dominance failure agrees when a swap did not move it; incomplete
    fusion predicts nothing and is not counted. ``{swap: {n, n_agree, rate, ci}}`` (Wilson 95%)."""
    counts: dict[str, list[int]] = {}
    for record in samples:
        moved, mode = record.get("moved") or {}, str(record.get("mode"))
        if not (mode == "text_dominance" or mode.endswith("_dominance")):
            continue
        for name, did_move in moved.items():
            if not name.startswith("swap_"):
                continue
            agree = bool(did_move) == (mode == f"{name.removeprefix('swap_')}_dominance")
            c = counts.setdefault(name, [0, 0])
            c[0] += 1
            c[1] += agree
    return {name: {"n": n, "n_agree": k, "rate": k / n, "ci": wilson(k, n)} for name, (n, k) in sorted(counts.items())}


def floor_check(rates: dict, floor: dict) -> dict:
    """Whether each ablation's moves clear the stability floor, and the decomposition's status (``cleared``,
    ``flagged`` or ``unchecked``): see :data:`FLOOR_RULE`. Only the classifying ablations are checked (a swap's
    moves corroborate, they decide no mode)."""
    rates = {name: r for name, r in rates.items() if name in CLASSIFYING}
    high = floor.get("ci", [None, None])[1] if floor.get("floor") is not None else None
    clears = {name: (None if high is None or r["ci"][0] is None else bool(r["ci"][0] > high))
              for name, r in rates.items()}
    if high is None:
        status = "unchecked"
    else:
        status = "flagged" if any(rates[n]["n_moved"] and not ok for n, ok in clears.items()) else "cleared"
    return {"status": status, "clears_floor": clears,
            "not_cleared": [n for n, ok in clears.items() if ok is False and rates[n]["n_moved"]],
            "rule": FLOOR_RULE}
