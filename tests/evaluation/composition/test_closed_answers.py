"""Counts, numbers and yes/no read from free composition answers, or left to the judge with a reason."""

import pandas as pd
import pytest

from omniaudit.evaluation.composition.closed_answers import closed_kind, read_number, read_yes_no
from omniaudit.evaluation.composition.grading import grade
from omniaudit.runners.reading import Reading


@pytest.mark.parametrize(("raw", "want"), [
    ("There are three dogs barking.", Reading("3")),
    ("3 dogs.", Reading("3")),
    ("The answer is 3.", Reading("3")),
    ("Three.", Reading("3")),
    ("<think>Could be 4... no.</think>\n3", Reading("3")),
    ("I hear 3 dogs, maybe 4.", Reading(None, "hedged")),
    ("At least 2.", Reading(None, "hedged")),
    ("2-3 times", Reading(None, "hedged")),
    ("about 5 seconds", Reading(None, "hedged")),
    ("Not 3.", Reading(None, "negated")),
    ("3 dogs and 2 cats", Reading(None, "conflict")),
    ("A dog barks.", Reading(None, "none")),
    ("<think>It is 3", Reading(None, "reasoning-only")),
])
def test_a_count_is_read_only_when_one_number_is_stated(raw, want):
    assert read_number(raw) == want


@pytest.mark.parametrize(("raw", "want"), [
    ("Yes, a dog barks in the background.", "yes"),
    ("No.", "no"),
    ("There is no barking.", "no"),  # a statement of absence (omniaudit.runners.yes_no)
    ("No audio was attached.", None),  # "no" as a determiner, not the answer
    ("It's not the case that there is no barking.", None),  # two negations: left to the judge
    ("Maybe?", None),
])
def test_yes_or_no_is_read_as_a_label(raw, want):
    assert read_yes_no(raw).option == want


def test_closed_items_are_graded_without_the_judge_and_the_rest_are_left_to_it():
    assert [closed_kind(a) for a in ("3", "three", "Yes", "a red car")] == ["number", "number", "yes_no", None]
    samples = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "template_name": "t", "category": "c", "tier": 1,
                            "question": "q?", "answer": ["3", "3", "Yes", "Yes", "a red car"]})
    predictions = pd.DataFrame({"id": ["a", "b", "c", "d", "e"],
                                "prediction": ["There are three dogs.", "I count 4 dogs.", "Yes, one barks.",
                                               "Maybe, hard to say.", "A red car."]})
    graded = grade(samples, predictions).set_index("id")
    assert graded["read_by"].fillna("unread").tolist() == ["closed", "closed", "closed", "unread", "exact"]
    assert graded["correct"].tolist() == [True, False, True, False, True]


def test_the_judges_progress_reaches_the_caller(monkeypatch):
    """`audit composition` shows the grader's "k/n" (and so a rate and an ETA) while it asks the judge."""
    heard = []

    class Judge:
        def answer(self, items, progress=None):
            progress(f"{len(items)}/{len(items)}")
            return ["Yes"] * len(items)

    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: Judge())
    samples = pd.DataFrame({"id": ["a", "b"], "template_name": "t", "category": "c", "tier": 1, "question": "q?",
                            "answer": ["a red car", "a blue bus"]})
    graded = grade(samples, pd.DataFrame({"id": ["a", "b"], "prediction": ["crimson car", "bus"]}), "openai:j@x",
                   progress=heard.append)
    assert heard == ["2/2"] and graded["correct"].all()
