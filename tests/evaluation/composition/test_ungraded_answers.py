"""Grading without a judge never reads doubt as an answer: a reply's reasoning trace is set aside before the exact
match, the template's answer vocabulary is read ("It is red.", "Answer: red"), and a reply no reader reads is
ungraded: neither right nor wrong, left out of the accuracy, the ablation analyses and the dominance measure, and
counted. Before, every such reply was wrong, and a wrong answer that did not move under ``text_only`` read as text
dominance: a correct model answering in sentences was flagged for modality_dominance."""

import pandas as pd
import pytest

from omniaudit.evaluation.composition.ablation_accuracy import ablation_accuracy
from omniaudit.evaluation.composition.failure_modes import decompose
from omniaudit.evaluation.composition.grading import accuracy_table, grade, grading_summary
from omniaudit.evaluation.composition.replies import comparable, failed_ids, read_reply

COLOURS = ["blue", "green", "red"]


def _samples(answers, vocabulary=COLOURS, question="Which colour is it?"):
    return pd.DataFrame({"id": [f"s{k}" for k in range(len(answers))], "template_name": "T", "category": "IC",
                         "tier": 1, "question": question, "answer": answers,
                         "answer_vocabulary": [vocabulary] * len(answers)})


def _graded(replies, answers=None, vocabulary=COLOURS, judge=None):
    samples = _samples(answers or ["red"] * len(replies), vocabulary)
    return grade(samples, pd.DataFrame({"id": samples["id"], "prediction": replies}), judge)


@pytest.mark.parametrize(("reply", "read_by", "correct"), [
    ("red", "exact", True),
    ("It is red.", "closed", True),  # before: wrong (no exact match, no reader for a colour)
    ("Answer: red", "closed", True),
    ("The colour is red.", "closed", True),
    ("<think>Blue? No, the square is red.</think>\nred", "exact", True),  # the trace set aside before the match
    ("<think>It could be blue.</think>\nIt is red.", "closed", True),
    ("It is blue.", "closed", False),  # a wrong answer the reader reads stays wrong
    ("blue", "closed", False),
    ("", None, False),  # no answer: wrong, as before (never ungraded)
])
def test_a_reply_is_read_by_exact_match_or_the_template_vocabulary(reply, read_by, correct):
    g = _graded([reply]).iloc[0]
    assert (g["read_by"], bool(g["correct"]), bool(g["ungraded"])) == (read_by, correct, False)


@pytest.mark.parametrize(("reply", "reason"), [
    ("<think>Let me look at the picture. The square in the middle seems to be", "reasoning-only"),  # cut off
    ("<think>The square is red.</think>", "reasoning-only"),  # a trace, no answer
    ("Red or blue?", "conflict"),
    ("Maybe red.", "hedged"),
    ("I don't know.", "hedged"),
    ("crimson", "none"),  # perhaps red: only a judge can say
])
def test_a_reply_no_reader_reads_is_ungraded_not_wrong(reply, reason):
    g = _graded([reply]).iloc[0]
    assert bool(g["ungraded"]) and g["unread"] == reason and g["read_by"] is None and g["read"] is None


def test_the_trace_is_set_aside_before_the_exact_match():
    """Without a vocabulary (an older build) only the exact match reads a free answer: after the trace."""
    g = _graded(["<think>Is it the sparrow? No.</think>\nthe crow", "the crow"], ["crow", "crow"], None)
    assert g["exact"].tolist() == [True, True] and g["correct"].tolist() == [True, True]
    assert read_reply("<think>crow</think>", "crow").reason == "reasoning-only"  # the trace names it: no answer


def test_counts_and_yes_no_keep_their_closed_readers():
    g = grade(_samples(["three", "three", "three"], ["three", "four"], "How many dogs bark?"),
              pd.DataFrame({"id": ["s0", "s1", "s2"], "prediction": ["There are three dogs.", "maybe 3", "4 dogs"]}))
    assert g["read_by"].tolist() == ["closed", None, "closed"] and g["correct"].tolist() == [True, False, False]
    assert g["ungraded"].tolist() == [False, True, False] and g.loc[1, "unread"] == "hedged"


class _YesJudge:
    def __init__(self):
        self.asked = []

    def answer(self, items, progress=None):
        self.asked += [i.prompt for i in items]
        return ["Yes"] * len(items)


def test_a_judge_grades_what_no_reader_reads_but_never_a_bare_trace(monkeypatch):
    judge = _YesJudge()
    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: judge)
    g = _graded(["crimson", "<think>crimson", "<think>hm</think>\nscarlet", "It is red."], judge="fake:judge")
    assert g["read_by"].tolist() == ["judge", None, "judge", "closed"]
    assert g["correct"].tolist() == [True, False, True, True] and g["ungraded"].tolist() == [False, True, False, False]
    assert len(judge.asked) == 2 and "Predicted answer: scarlet" in judge.asked[1]  # asked without the trace


def test_ungraded_rows_are_left_out_of_accuracy_and_counted():
    g = _graded(["red", "It is blue.", "Maybe red.", "<think>cut"]).assign(run="r")
    assert accuracy_table([g])["overall"]["mean"] == 50.0  # 1 right of 2 graded (before: 25%)
    assert accuracy_table([g.assign(ungraded=True)])["overall"] == {"mean": None, "sd": 0.0, "runs": 0}
    summary = grading_summary([g], [], 4, None)
    assert (summary["n_read"], summary["n_ungraded"], summary["coverage"]) == (2, 2, 0.5)
    assert summary["reasons"] == {"hedged": 1, "reasoning-only": 1}
    assert summary["note"] == ("2 of 4 rows ungraded (1 only a reasoning trace, cut off or never concluded): no "
                               "grader; pass --grader SPEC")
    assert grading_summary([g], [], 4, "some:judge")["note"].endswith("never concluded)")  # no hint with a judge
    assert failed_ids(g) == {"s1"}  # a failure is graded and wrong
    assert comparable(g).to_dict() == {"s0": "red", "s1": "blue"}  # compared by what the readers read


def _ablations(sample_ids, answers):
    """text_only, mute_audio and drop_image answers of each sample (``answers``: per sample, a 3-tuple)."""
    return pd.DataFrame([{"sample_id": s, "ablation": a, "prediction": p}
                         for s, triple in zip(sample_ids, answers, strict=True)
                         for a, p in zip(("text_only", "mute_audio", "drop_image"), triple, strict=True)])


def test_the_decomposition_compares_what_the_readers_read_and_drops_ungraded_answers():
    g = _graded(["It is blue.", "blue", "Answer: blue", "Maybe red."])
    ablated = _ablations(g["id"], [("blue", "It is blue.", "Answer: blue"),  # never moved: text dominance
                                   ("It is red.", "red", "The colour is blue."),  # the image does not move it
                                   ("Answer: blue", "Hmm, red or green?", "blue"),  # one ablation unread
                                   ("red", "red", "red")])  # the sample itself is ungraded: no failure
    expected = {s: {"text_only", "mute_audio", "drop_image"} for s in g["id"]}
    out = decompose(g, ablated, expected)
    modes = {r["id"]: r["mode"] for r in out["samples"]}
    # before: "It is blue." vs "blue" was a move, so every sample read as incomplete fusion or a dominance at random
    assert modes == {"s0": "text_dominance", "s1": "audio_dominance", "s2": "ungraded"}
    assert out["n_ungraded"] == 1 and out["overall"]["counts"] == {"audio_dominance": 1, "text_dominance": 1,
                                                                  "ungraded": 1}


def test_ablation_accuracy_leaves_out_pairs_with_an_ungraded_answer():
    g = _graded(["red", "red", "Maybe red.", "red"]).assign(run="r")
    copies = _graded(["blue", "It is red.", "red", "Red or blue?"]).assign(
        run="r", sample_id=["s0", "s1", "s2", "s3"], ablation="mute_audio", id=lambda f: f["sample_id"] + "/m")
    expected = pd.DataFrame({"id": copies["id"], "ablation": "mute_audio"})
    e = ablation_accuracy([g], [copies], expected, n_resamples=200)["mute_audio"]
    # s2's intact answer and s3's copy are ungraded: two pairs left out, counted; s0 wrong, s1 right
    assert (e["n_copies"], e["n_ungraded"], e["n_unanswered"], e["accuracy"], e["intact"]) == (2, 2, 0, 50.0, 100.0)
