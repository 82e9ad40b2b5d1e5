"""A reply that corrects itself is never read as its first answer: the corrected one is read, or the reply is left
unread as reversed."""

import pytest

from omniaudit.runners.reading import read_answer

CORRECTIONS = ["Correction: {}.", "Update: {}.", "Edit: {}", "EDIT: {}", "Second thought: {}.", "Hold on, {}.",
               "Never mind, {}.", "My mistake, {}.", "Sorry, I meant {}.", "Oops, {}.", "Upon further listening, {}.",
               "After re-listening, {}.", "Changed my mind: {}.", "Revised: {}.", "Nope, {}.", "I misspoke, {}.",
               "Strike that, {}.", "On second listen, {}.", "Having listened again, {}.", "Let me revise: {}."]


@pytest.mark.parametrize("correction", CORRECTIONS)
def test_a_correction_is_never_read_as_the_first_answer(correction):
    assert read_answer("A. " + correction.format("B"), ["A", "B"]).option in ("B", None)
    assert read_answer("sad. " + correction.format("happy"), ["neutral", "happy", "sad"]).option in ("happy", None)


@pytest.mark.parametrize("correction", ["Correction: {}.", "Edit: {}", "Sorry, I meant {}.", "Never mind, {}.",
                                        "Upon further listening, {}.", "Changed my mind: {}."])
def test_the_corrected_answer_is_read(correction):
    assert read_answer("A. " + correction.format("B"), ["A", "B"]).option == "B"
    assert read_answer("sad. " + correction.format("happy"), ["neutral", "happy", "sad"]).option == "happy"
