"""Dominance vs incomplete fusion (C3PO §4.3), read off a model's answers to the bypass-test ablations.

For every sample the model gets wrong on the full input (answer ``f``), its answers to the ablated copies say which
modalities the wrong answer depends on:

- the ``text_only`` copy gives ``f`` again: **text dominance** (a prior; the media are ignored);
- removing exactly one grounded modality ``m`` changes the answer, removing any other does not: **``m``
  dominance** (the answer follows ``m`` and ignores the others);
- otherwise (no single modality, or several, moves the answer): **incomplete fusion**.

Answers are compared after the grading normalisation.
"""

from __future__ import annotations

import pandas as pd

from omniaudit.evaluation.grading import normalize

ABLATION_OF = {"mute_audio": "audio", "drop_image": "image", "blank_video": "video"}


def classify(full: str, ablated: dict[str, str]) -> str:
    """Failure mode of one wrong answer ``full`` given the answers to its ablations (name -> answer)."""
    f = normalize(full)
    if "text_only" in ablated and normalize(ablated["text_only"]) == f:
        return "text_dominance"
    moved = [ABLATION_OF[name] for name, answer in ablated.items()
             if name in ABLATION_OF and normalize(answer) != f]
    return f"{moved[0]}_dominance" if len(moved) == 1 else "incomplete_fusion"


def _blank(answer: object) -> bool:
    """No answer: None, NaN (a missing cell) or only whitespace."""
    return answer is None or (isinstance(answer, float) and answer != answer) or not str(answer).strip()


def decompose(graded: pd.DataFrame, ablation_answers: pd.DataFrame,
              expected: dict[str, set[str]] | None = None) -> dict:
    """Counts and rates of each failure mode, overall and per template.

    ``graded``: one run's graded samples (``id``, ``template_name``, ``prediction``, ``correct``);
    ``ablation_answers``: ``sample_id``, ``ablation``, ``prediction`` of the same run; ``expected``: the ablations
    each sample has in the dataset. A failed sample with an empty answer is ``unanswered``; one whose ablations were
    not all answered (missing, or an empty answer, which says nothing about what moved it) is ``unclassified`` (a
    dominance call on a partial set could be wrong).
    """
    by_sample = {sid: dict(zip(g["ablation"], g["prediction"], strict=True))
                 for sid, g in ablation_answers.groupby("sample_id")}
    modes = []
    for r in graded[~graded["correct"]].itertuples():
        ablated = by_sample.get(r.id, {})
        needed = expected.get(r.id, set()) if expected is not None else set(ablated)
        if _blank(r.prediction):
            mode = "unanswered"
        elif not ablated or not needed <= set(ablated) or any(_blank(a) for a in ablated.values()):
            mode = "unclassified"  # without every ablation answered, a dominance call could be wrong
        else:
            mode = classify(r.prediction, ablated)
        modes.append({"id": r.id, "template_name": r.template_name, "mode": mode})
    table = pd.DataFrame(modes, columns=["id", "template_name", "mode"])
    return {**rates_by_template(table), "samples": table.to_dict("records")}


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
    """Shares of each classified mode among the classified failures (dominance + incomplete fusion; unanswered and
    unclassified failures say nothing about fusion and are left out), and the dominance share (their sum)."""
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
    of that template's mean, ``n_models`` says how many count).
    """
    models = {m: {"overall": _shares(t["mode"]),
                  "by_template": {name: _shares(g["mode"]) for name, g in t.groupby("template_name", sort=True)}}
              for m, t in per_model.items()}

    def mean_over(entries: list[dict]) -> dict:
        entries = [e for e in entries if e["n_classified"]]
        if not entries:
            return {"n_models": 0, "shares": {m: None for m in CLASSIFIED}, "dominance_share": None}
        return {"n_models": len(entries),
                "shares": {m: float(sum(e["shares"][m] for e in entries) / len(entries)) for m in CLASSIFIED},
                "dominance_share": float(sum(e["dominance_share"] for e in entries) / len(entries))}

    templates = sorted({t for v in models.values() for t in v["by_template"]})
    combined = {"overall": mean_over([v["overall"] for v in models.values()]),
                "by_template": {t: mean_over([v["by_template"][t] for v in models.values() if t in v["by_template"]])
                                for t in templates}}
    return {"models": models, "combined": combined}


def stability_floor(answers: dict[str, pd.Series], failed: dict[str, set]) -> dict:
    """How often re-running the *full* input (sampling on) alone moves a wrong answer: the noise floor of a
    "removing modality m moved the answer" call.

    ``answers``: run -> the run's answers to the samples (Series indexed by sample id); ``failed``: run -> the ids it
    got wrong. For every run i, every sample it failed and every other run j of the same model, the pair counts as
    moved when run j's answer to the same full input differs after the grading normalisation. ``floor`` = moved
    pairs / pairs (None with fewer than two runs). A dominance / incomplete-fusion share is only read as modality
    dependence where the ablations move answers clearly more often than this floor.
    """
    runs = list(answers)
    moved = pairs = 0
    for i in runs:
        for j in runs:
            if i == j:
                continue
            for sid in failed.get(i, set()):
                if sid in answers[j].index:
                    pairs += 1
                    moved += normalize(str(answers[i][sid])) != normalize(str(answers[j][sid]))
    return {"floor": float(moved / pairs) if pairs else None, "n_pairs": pairs, "n_moved": moved,
            "n_runs": len(runs)}
