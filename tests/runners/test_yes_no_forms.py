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
