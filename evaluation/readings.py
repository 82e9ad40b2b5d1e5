"""Check the readings on your own model: a sample of its replies to label by hand, and the readers' agreement with it.

Rules read a model's free text; before its numbers go into a paper, someone should check that they read *this*
model's phrasing right. :func:`sample_readings` draws replies from an ``omniaudit judge`` predictions file (seeded,
stratified so that every reading and every reason for no reading is represented) into ``readings.csv`` (one row per
reply: ``row``, ``id``, ``run``, ``raw``, ``reading``, ``reason``, and an empty ``truth`` column) and ``readings.html``
(the same, to read); a person fills ``truth`` with the option the reply states, or ``none`` when it states none.
:func:`agreement` then compares: accuracy, Cohen's kappa (scikit-learn), the misreadings (read as another option, or
a non-answer read as one: the dangerous kind) and the misses (an answer left unread: the safe kind).

Closed items are read as ``omniaudit judge`` read them (``label`` / ``unread``); free-form rows have no reading
here (their audit reads them) and are left out of the sample. The composition audit's ``graded.csv`` (C3PO answers
read by exact match, the closed number / yes-no readers or the LLM judge) is sampled too: each reply is shown with
its question and gold answer, its reading is ``right`` or ``wrong`` (``none`` where nothing read it) and its reason
says what read it (``read_by``); the truth is ``right``, ``wrong`` or ``none``. The interventions audit's
``scored.csv`` (Thud answers read by the rule-based extractor or an LLM) is sampled too: each reply with its
dimension, read as its class in words (``in sync``, ``audio late by 1.2 s``, ``audio early``, ``out of sync``,
``muted`` / ``audio_described`` / ``visual_only``, ``match`` / ``mismatch``); the truth is written the same way.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.tables import read_records

NONE = "none"  # the truth or reading of a reply that states no option
COLUMNS = ["row", "id", "run", "raw", "reading", "reason", "truth"]
GOAL = 0.95  # a card warns about a model whose checked sample agrees less than this


def closed_rows(predictions: str | Path) -> pd.DataFrame:
    """The closed-item rows of a predictions file: ``row``, ``id``, ``run``, ``raw``, ``reading``, ``reason``."""
    raw, rows = read_records(predictions)
    missing = {"id", "raw", "label"} - set(raw.columns)
    if missing:
        raise InputError(f"not an `omniaudit judge` predictions file: no column {', '.join(sorted(missing))}",
                         file=predictions)
    parsed = raw["parsed"] if "parsed" in raw.columns else pd.Series([None] * len(raw))
    closed = parsed.map(lambda v: v is not None and v == v and v != "")
    out = pd.DataFrame({"row": rows, "id": raw["id"].astype(str),
                        "run": raw["run"] if "run" in raw.columns else 0,
                        "raw": raw["raw"].fillna("").astype(str),
                        "reading": raw["label"].map(lambda v: NONE if v is None or v != v or v == "" else str(v)),
                        "reason": raw["unread"].fillna("") if "unread" in raw.columns else ""})[closed.to_numpy()]
    if out.empty:
        raise InputError("no closed-item answers to check (free-form answers are read by their audit)",
                         file=predictions)
    return out.reset_index(drop=True)


GRADED = {"id", "question", "answer", "prediction", "correct", "read_by"}  # a composition audit's graded.csv


def graded_rows(graded: str | Path) -> pd.DataFrame:
    """The graded replies of a composition audit (``graded.csv``) as readings: the reply shown with its question and
    gold answer, read ``right`` / ``wrong`` (``none`` where no reader decided), the reason the reader that did."""
    raw, rows = read_records(graded)
    text = lambda c: raw[c].fillna("").astype(str)  # noqa: E731
    read_by = text("read_by").str.strip()
    correct = text("correct").str.strip().str.casefold()
    reading = pd.Series(np.where(read_by == "", NONE, np.where(correct == "true", "right", "wrong")),
                        index=raw.index)
    shown = "question: " + text("question") + "\ngold: " + text("answer") + "\nreply: " + text("prediction")
    return pd.DataFrame({"row": rows, "id": text("id"), "run": raw["run"] if "run" in raw.columns else 0,
                         "raw": shown, "reading": reading, "reason": read_by}).reset_index(drop=True)


SCORED = {"id", "dimension", "text", "reading", "read_by"}  # an interventions audit's scored.csv


def scored_rows(scored: str | Path) -> pd.DataFrame:
    """The answers of an interventions audit (``scored.csv``) as readings: each reply shown with its dimension, read
    as its class in words (``in sync``, ``audio late by 1.2 s``, ``muted``, ``mismatch``, ...; ``none`` where nothing
    read it), the reason what read it (``rule``, ``extractor``, ``given``); unanswered rows are left out."""
    raw, rows = read_records(scored)
    text = lambda c: raw[c].fillna("").astype(str)  # noqa: E731
    answered = text("text").str.strip() != ""
    if not answered.any():
        raise InputError("no answers to check (every row of the interventions audit is unanswered)", file=scored)
    out = pd.DataFrame({"row": rows, "id": text("id"), "run": raw["run"] if "run" in raw.columns else 0,
                        "raw": "dimension: " + text("dimension") + "\nreply: " + text("text"),
                        "reading": text("reading").replace("", NONE), "reason": text("read_by")})
    return out[answered.to_numpy()].reset_index(drop=True)


def reply_rows(path: str | Path) -> pd.DataFrame:
    """The replies of ``path`` with their readings: a composition ``graded.csv``, an interventions ``scored.csv`` or
    an ``omniaudit judge`` file."""
    columns = set(read_records(path)[0].columns)
    return graded_rows(path) if columns >= GRADED else scored_rows(path) if columns >= SCORED else closed_rows(path)


def sample_readings(predictions: str | Path, n: int = 100, seed: int = 0) -> pd.DataFrame:
    """Up to ``n`` replies (closed items of a predictions file, or a composition audit's graded replies: see the
    module docstring), stratified by reading and reason (each stratum gets its share, at least one), in file order,
    with an empty ``truth`` column."""
    if n < 1:
        raise InputError("expected --n >= 1", value=n)
    rows = reply_rows(predictions)
    strata = rows.groupby(["reading", "reason"], sort=True).indices
    rng = np.random.default_rng(seed)
    share = {key: max(1, round(n * len(idx) / len(rows))) for key, idx in strata.items()}
    picked = np.concatenate([rng.choice(idx, size=min(share[key], len(idx)), replace=False)
                             for key, idx in strata.items()])
    if picked.size > n:  # the at-least-one rule overshot: keep a seeded n, every stratum first
        picked = rng.permutation(picked)[:n]
    return rows.iloc[np.sort(picked)].assign(truth="")[COLUMNS].reset_index(drop=True)


def write_sample(sample: pd.DataFrame, out: str | Path, source: str) -> tuple[Path, Path]:
    """``readings.csv`` (to fill) and ``readings.html`` (to read) in the folder ``out``."""
    from omniaudit.io import atomic_dir

    with atomic_dir(out) as tmp:
        sample.to_csv(tmp / "readings.csv", index=False)
        (tmp / "readings.html").write_text(_page(sample, source), encoding="utf-8")
    return Path(out) / "readings.csv", Path(out) / "readings.html"


def _page(sample: pd.DataFrame, source: str) -> str:
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in ("row", "id", "run")) +
        f"<td class=raw>{html.escape(r['raw'])}</td><td><b>{html.escape(r['reading'])}</b></td>"
        f"<td>{html.escape(r['reason'])}</td></tr>" for _, r in sample.iterrows())
    return (f"<!doctype html><meta charset=utf-8><title>Readings of {html.escape(source)}</title>"
            "<style>body{font:14px sans-serif;margin:2em}td,th{border-bottom:1px solid #ddd;padding:4px 8px;"
            "vertical-align:top}.raw{white-space:pre-wrap;max-width:60em}</style>"
            f"<h1>Readings of {html.escape(source)}</h1><p>{len(sample)} replies. For each, write in the "
            "<code>truth</code> column of readings.csv the option the reply states (a graded reply: "
            "<code>right</code> or <code>wrong</code> against its gold), or <code>none</code> when it states none "
            "(a hedge, a reversal without a final answer, a refusal, noise); then run "
            "<code>omniaudit readings agree readings.csv</code>.</p><table><tr><th>row</th><th>id</th><th>run</th>"
            f"<th>reply</th><th>reading</th><th>why unread</th></tr>{cells}</table>")


@dataclass(frozen=True)
class Agreement:
    """Readers against hand labels: ``n`` labelled replies, ``accuracy``, Cohen's ``kappa``; ``misread`` (read as
    another option, or a non-answer read as one) and ``missed`` (an answer left unread) as lists of rows."""

    n: int
    accuracy: float
    kappa: float
    misread: list[dict]
    missed: list[dict]

    @property
    def meets_goal(self) -> bool:
        return self.accuracy >= GOAL and not self.misread

    def summary(self) -> str:
        verdict = "meets" if self.meets_goal else "does not meet"
        return (f"reader agreement {self.accuracy:.1%} on {self.n} hand-labelled replies (Cohen's kappa "
                f"{self.kappa:.2f}); {len(self.misread)} misread, {len(self.missed)} left unread; {verdict} the "
                f"{GOAL:.0%} goal with no misreading")


def agreement(labelled: str | Path) -> Agreement:
    """Compare the ``reading`` of a filled ``readings.csv`` with its ``truth`` (rows with an empty truth are left
    out; at least one is needed). A truth may list several acceptable readings separated by ``|`` (``A|none``: the
    reply may be read as A or left unread)."""
    from sklearn.metrics import cohen_kappa_score

    table, rows = read_records(labelled)
    missing = {"reading", "truth"} - set(table.columns)
    if missing:
        raise InputError(f"not a readings file: no column {', '.join(sorted(missing))}", file=labelled)
    table = table.assign(_row=rows)
    done = table[table["truth"].astype(str).str.strip() != ""]
    if done.empty:
        raise InputError("no row has a truth yet: fill the truth column (an option, or none)", file=labelled)
    # a truth may name several acceptable readings ("A|B": the reply is read right either way)
    truths = [{t.strip() for t in str(v).casefold().split("|") if t.strip()} for v in done["truth"]]
    reading = done["reading"].astype(str).str.strip().str.casefold()
    right = pd.Series([r in t for r, t in zip(reading, truths, strict=True)], index=done.index)
    misread = done[~right & (reading != NONE)]
    missed = done[~right & (reading == NONE)]
    truth = pd.Series([r if r in t else sorted(t)[0] for r, t in zip(reading, truths, strict=True)], index=done.index)
    kappa = float(cohen_kappa_score(truth, reading)) if len(set(truth) | set(reading)) > 1 else 1.0
    keep = ["_row", "id", "raw", "reading", "truth"]
    return Agreement(len(done), float(right.mean()), kappa,
                     misread[keep].rename(columns={"_row": "row"}).to_dict("records"),
                     missed[keep].rename(columns={"_row": "row"}).to_dict("records"))
