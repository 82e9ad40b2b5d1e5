"""Accuracy under the bypass-test ablations (C3PO §3's grading applied to every ablated copy) and its drop.

Every answered ablated copy (``mute_audio``, ``blank_video``, ``drop_image``, ``text_only``, ``swap_audio``,
``swap_image``: whatever kinds the build wrote) is graded against its sample's ground truth exactly as the intact
samples are (:func:`.grading.grade`: the readers, then the judge), so a copy's accuracy says how often
the model still reaches the answer without (or with a wrong) modality, and the *drop* (intact - ablated accuracy, in
percentage points, on the same samples) how much the model needed it.

Per model and ablation kind, over the graded copies (a run that answered none of a kind's copies adds nothing to
it; a partly answered kind counts only its answered copies). A drop needs both answers of a (run, sample) pair, so
a pair is left out when either is no answer (:func:`.failure_modes._no_answers`: blank, the question echoed, noise,
or the run's one constant answer): ``n_unanswered`` counts the copies without an answer, ``n_intact_unanswered``
the answered copies whose run gave no answer to the intact sample (scored wrong, they would read as a negative
drop), ``n_ungraded`` the other copies whose own or intact answer is ungraded (no reader read it and no judge was
given: neither right nor wrong, never read as a wrong answer). A kind no run answered is listed with its counts and
no accuracy:

- ``accuracy``: correct / graded copies (%), its 95% CI: Wilson when each sample has one graded copy (one run),
  else a percentile bootstrap over *samples* (a sample's copies in every run resampled together: the runs of one
  sample are not independent); ``by_run``: each run's accuracy;
- ``intact``: the intact accuracy on the same (run, sample) pairs; ``survival``: of those answered right intact,
  the share still right under the ablation (the paper's bypass test, per sample);
- ``drop``: intact - ablated accuracy (points), with a *paired* percentile bootstrap 95% CI over samples (each
  resampled sample brings its intact and ablated answers of every run), vectorised.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from omniaudit.evaluation.composition.failure_modes import _no_answers, wilson
from omniaudit.evaluation.composition.grading import VOCABULARY, grade
from omniaudit.evaluation.composition.replies import ungraded_mask

GRADED = ["id", "template_name", "category", "tier", "question", "answer"]
CHUNK = 4_000_000  # bootstrap draws x samples per block (bounded memory for large sets)


def _columns(frame: pd.DataFrame) -> list[str]:
    return [*GRADED, *([VOCABULARY] if VOCABULARY in frame.columns else [])]


def ablation_frame(samples: pd.DataFrame, ablations: pd.DataFrame) -> pd.DataFrame:
    """One gradable row per ablated copy: its ``id``, ``sample_id``, ``ablation`` and its sample's template,
    category, tier, question, ground-truth answer and answer vocabulary (where the samples have one)."""
    fields = samples[_columns(samples)].rename(columns={"id": "sample_id"})
    return ablations[["id", "sample_id", "ablation"]].merge(fields, on="sample_id", how="inner")


def grade_ablations(frame: pd.DataFrame, answers: pd.DataFrame, judge: str | None = None,
                    **judge_options) -> pd.DataFrame:
    """The run's answered copies graded like the samples (:func:`.grading.grade`), with ``sample_id`` and
    ``ablation``; copies the run did not answer, or answered blank, are left out: no answer is no evidence (ablations
    may be partial, and a blank answer reads as none, never as a drop)."""
    given = answers.loc[answers["prediction"].fillna("").astype(str).str.strip() != "", "id"]
    answered = frame[frame["id"].isin(given)]
    if answered.empty:
        return pd.DataFrame(columns=[*GRADED, "prediction", "exact", "closed", "read_by", "read", "judge_prompt",
                                     "judge_raw", "judge_says", "correct", "ungraded", "unread", "sample_id",
                                     "ablation"])
    graded = grade(answered[_columns(answered)], answers, judge, **judge_options)
    return graded.merge(answered[["id", "sample_id", "ablation"]], on="id", how="left")


def _blocks(n_resamples: int, n: int) -> list[int]:
    size = max(1, CHUNK // max(n, 1))
    return [min(size, n_resamples - s) for s in range(0, n_resamples, size)]


def cluster_bootstrap(numerators: list[np.ndarray], counts: np.ndarray, n_resamples: int = 2000,
                      seed: int = 0) -> np.ndarray:
    """Percentile bootstrap over clusters (samples) of ratio statistics: for each draw of ``len(counts)`` clusters
    with replacement, ``sum(numerator[draw]) / sum(counts[draw])`` for every numerator (one row per numerator,
    one column per draw). The same draws serve every numerator, so differences of the rows are paired."""
    counts = np.asarray(counts, float)
    nums = np.stack([np.asarray(x, float) for x in numerators])
    rng = np.random.default_rng(seed)
    out = []
    for size in _blocks(n_resamples, counts.size):
        idx = rng.integers(0, counts.size, (size, counts.size))
        out.append(nums[:, idx].sum(axis=2) / counts[idx].sum(axis=1))
    return np.concatenate(out, axis=1)


def _ci(draws: np.ndarray) -> list[float]:
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return [float(lo), float(hi)]


def kind_accuracy(rows: pd.DataFrame, n_resamples: int = 2000, seed: int = 0) -> dict:
    """One ablation kind's accuracy, intact accuracy on the same pairs, survival and paired drop (see the module
    docstring). ``rows``: one row per graded copy with ``run``, ``sample_id``, ``correct`` (ablated) and
    ``intact`` (the same run's intact correctness of the sample)."""
    per = rows.groupby("sample_id", sort=True).agg(ablated=("correct", "sum"), intact=("intact", "sum"),
                                                   n=("correct", "size"))
    n, k, k_intact = len(rows), int(rows["correct"].sum()), int(rows["intact"].sum())
    kept = int((rows["correct"] & rows["intact"]).sum())
    draws = cluster_bootstrap([per["ablated"].to_numpy(), per["intact"].to_numpy()], per["n"].to_numpy(),
                              n_resamples, seed)
    clustered = bool((per["n"] > 1).any())
    by_run = {str(r): float(100 * g["correct"].mean()) for r, g in rows.groupby("run", sort=False)}
    acc_ci = [100 * v for v in _ci(draws[0])] if clustered else [100 * v for v in wilson(k, n)]
    return {"n_samples": len(per), "n_copies": n, "runs": len(by_run),
            "accuracy": 100 * k / n, "ci": acc_ci,
            "ci_method": "percentile bootstrap over samples (runs clustered)" if clustered else "Wilson 95%",
            "sd_over_runs": float(pd.Series(list(by_run.values())).std(ddof=1)) if len(by_run) > 1 else 0.0,
            "by_run": by_run, "intact": 100 * k_intact / n,
            "survival": {"rate": kept / k_intact if k_intact else None, "kept": kept, "n_intact_correct": k_intact},
            "drop": {"value": 100 * (k_intact - k) / n, "ci": [100 * v for v in _ci(draws[1] - draws[0])],
                     "method": "paired percentile bootstrap over samples (intact and ablated answers of a sample "
                               "resampled together, runs clustered)", "n_resamples": n_resamples, "seed": seed}}


def _no_answer(graded: pd.DataFrame, others: pd.DataFrame) -> pd.Series:
    """Per row of ``graded`` (a run's graded samples or copies): no answer (:func:`.failure_modes._no_answers`);
    ``others``: the run's other graded answers, for the constant-answer check over all its answers."""
    return _no_answers(graded, graded["question"], others["prediction"]).astype(bool)


def paired_rows(intact: list[pd.DataFrame], ablated: list[pd.DataFrame]) -> pd.DataFrame:
    """The graded copies of a model's runs, each with its run's intact correctness of the sample (``intact``),
    whether the copy's answer is an answer (``answered``), whether the run's intact answer of the sample is one
    (``intact_answered``; a sample the run did not answer is not) and whether both were graded (``graded``: neither
    is ungraded, :func:`.grading.grade`). ``intact`` / ``ablated``: per run (same order), the graded samples and the
    graded copies (with ``run``)."""
    frames = []
    for g, a in zip(intact, ablated, strict=True):
        if a.empty:
            continue
        ok = g.set_index("id")["correct"].astype(bool)
        given = pd.Series(~_no_answer(g, a).to_numpy(), index=g["id"].to_numpy())
        read = pd.Series(~ungraded_mask(g).to_numpy(), index=g["id"].to_numpy())
        frames.append(a.assign(intact=a["sample_id"].map(ok).fillna(False).astype(bool),
                               correct=a["correct"].astype(bool), answered=~_no_answer(a, g),
                               intact_answered=a["sample_id"].map(given).fillna(False).astype(bool),
                               graded=(~ungraded_mask(a)).to_numpy() & a["sample_id"].map(read).fillna(True)
                               .astype(bool).to_numpy()))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["run", "sample_id", "ablation", "category", "correct", "intact", "answered", "intact_answered",
                 "graded"])


def _unread() -> dict:
    """A kind without a graded pair: counts only, no accuracy."""
    return {"n_samples": 0, "n_copies": 0, "runs": 0, "accuracy": None, "ci": [None, None], "ci_method": None,
            "sd_over_runs": None, "by_run": {}, "intact": None,
            "survival": {"rate": None, "kept": 0, "n_intact_correct": 0}, "drop": {"value": None, "ci": [None, None]}}


def ablation_accuracy(intact: list[pd.DataFrame], ablated: list[pd.DataFrame], expected: pd.DataFrame,
                      n_resamples: int = 2000, seed: int = 0) -> dict:
    """Per ablation kind of the dataset: :func:`kind_accuracy` overall and per category over the pairs with both
    answers graded, with ``n_unanswered`` (the kind's copies in the dataset times the model's runs, minus the
    answered ones), ``n_intact_unanswered`` (answered copies left out: no intact answer) and ``n_ungraded`` (the
    other copies left out: the copy's or the intact answer is ungraded, neither right nor wrong); see the module
    docstring. ``expected``: the dataset's ablation rows (``id``, ``ablation``)."""
    rows = paired_rows(intact, ablated)
    copies = expected.groupby("ablation").size()
    out = {}
    for kind in sorted({*map(str, copies.index), *map(str, rows["ablation"])}):
        g = rows[rows["ablation"] == kind]
        answered = g[g["answered"].astype(bool)]
        paired = answered[answered["intact_answered"].astype(bool)]
        used = paired[paired["graded"].astype(bool)]
        entry = kind_accuracy(used, n_resamples, seed) if len(used) else _unread()
        entry["n_unanswered"] = int(copies.get(kind, 0) * len(intact) - len(answered))
        entry["n_intact_unanswered"] = len(answered) - len(paired)
        entry["n_ungraded"] = len(paired) - len(used)
        entry["by_category"] = {c: kind_accuracy(s, n_resamples, seed) for c, s in used.groupby("category", sort=True)}
        out[kind] = entry
    return out


def judging(ablated: list[pd.DataFrame]) -> dict:
    """How many ablated answers were graded, how many the judge was asked about, how many verdicts could not be read
    and how many answers neither a reader nor the judge graded (``n_ungraded``)."""
    asked = sum(int(a["judge_prompt"].notna().sum()) for a in ablated)
    unparsed = sum(int((a["judge_prompt"].notna() & a["judge_says"].isna()).sum()) for a in ablated)
    return {"n_graded": int(sum(len(a) for a in ablated)), "n_judged": asked, "n_unparsed_verdicts": unparsed,
            "n_ungraded": int(sum(ungraded_mask(a).sum() for a in ablated))}
