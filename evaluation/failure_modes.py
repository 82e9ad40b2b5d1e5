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
