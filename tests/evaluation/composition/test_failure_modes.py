"""C3PO failure decomposition: an empty or missing answer is no evidence of which modality moved the answer."""

import pandas as pd

from omniaudit.evaluation.composition.failure_modes import decompose


def test_blank_answers_are_not_read_as_a_moved_answer():
    graded = pd.DataFrame({"id": ["a", "b", "c", "d"], "template_name": "T",
                           "prediction": ["four", "four", float("nan"), "four"], "correct": False})
    answers = pd.DataFrame({"sample_id": ["a", "a", "b", "b", "c", "c", "d", "d"],
                            "ablation": ["text_only", "mute_audio"] * 4,
                            # a: mute_audio left unanswered (""), b: NaN cell, d: a real change under mute_audio
                            "prediction": ["x", "", "x", float("nan"), "x", "three", "x", "three"]})
    expected = {k: {"text_only", "mute_audio"} for k in "abcd"}
    modes = {s["id"]: s["mode"] for s in decompose(graded, answers, expected)["samples"]}
    # before: a and b were "audio_dominance" (the blank answer differs from "four"), c was classified on "nan"
    assert modes == {"a": "unclassified", "b": "unclassified", "c": "unanswered", "d": "audio_dominance"}
    without_expected = {s["id"]: s["mode"] for s in decompose(graded, answers)["samples"]}
    assert without_expected == modes
