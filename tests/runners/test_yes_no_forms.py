"""Yes/no replies as pipelines write them: per-answer scores, JSON booleans under a presence key, a self-correction
to the other answer."""

import pytest

from omniaudit.runners.reading import read_answer

YES_NO = ["yes", "no"]


@pytest.mark.parametrize(("raw", "want"), [
    ("yes: 0.81\nno: 0.19", "yes"), ("Yes=0.2, No=0.8", "no"), ("yes: 0.5, no: 0.5", None),
    ('{"barking_detected": true}', "yes"), ('{"is_music_playing": false, "confidence": 0.9}', "no"),
    ('{"answer": true}', "yes"), ('{"dog": true}', None),
    ("Yes... hmm, actually no, the barking is a recording of a seal.", "no"), ("No. Wait, yes.", "yes"),
    ("No, actually maybe yes.", None), ("Yes, wait, it's a cat.", None),
])
def test_yes_no_scores_booleans_and_corrections(raw, want):
    assert read_answer(raw, YES_NO).option == want


@pytest.mark.parametrize("raw", ["Ja. Warte, nein.", "Sì. Intendevo no.", "Oui. Ou plutôt non.", "Да. Точнее, нет.",
                                 "是的. 等等，没有。", "はい. 実はいいえです。", "네. 잠깐, 아니요입니다.",
                                 "Sim. Aliás, não."])
def test_a_yes_taken_back_in_a_glossed_language_is_never_yes(raw):
    assert read_answer(raw, YES_NO).option != "yes"


def test_the_same_answer_twice_is_that_answer():
    assert read_answer("No. No dog.", YES_NO).option == "no"
    assert read_answer("Yes and no.", YES_NO).reason == "conflict"
