"""Adverbs of certainty before an answer in the glossed languages read like English "Definitely A."; the words for
"maybe" stay a hedge and a negation stays a negation."""

import pytest

from omniaudit.runners.reading import read_answer

CLEAN = ("The first audio is clip A and the second audio is clip B. Which clip has cleaner audio, with less "
         "background noise? Answer with A or B only.")


@pytest.mark.parametrize(("raw", "want"), [
    ("Eindeutig A.", "A"), ("Definitiv B.", "B"), ("Ganz klar A.", "A"), ("Auf jeden Fall B.", "B"),
    ("Ohne Zweifel A.", "A"), ("Définitivement B.", "B"), ("Clairement A.", "A"), ("Sans aucun doute B.", "B"),
    ("Évidemment B.", "B"), ("Claramente A.", "A"), ("Definitivamente B.", "B"), ("Sin lugar a dudas A.", "A"),
    ("Sicuramente la B.", "B"), ("Decisamente la A.", "A"), ("Senza dubbio B.", "B"), ("Com certeza A.", "A"),
    ("Sem dúvida B.", "B"), ("Claramente a B.", "B"), ("Однозначно B.", "B"), ("Определённо A.", "A"),
    ("Безусловно A.", "A"), ("明らかにBです。", "B"), ("間違いなくAです。", "A"), ("确定是B。", "B"),
    ("毫无疑问是A。", "A"),
    ("분명히 B입니다.", "B"), ("당연히 B죠.", "B"),
    # "probably" in each language commits as the English word does
    ("Wahrscheinlich B.", "B"), ("Probablemente B.", "B"), ("Скорее всего B.", "B"),
    # in a sentence: the adverb inside a comparison
    ("Der Clip B ist eindeutig sauberer.", "B"), ("El clip B es claramente más limpio.", "B"),
    ("Il clip A è sicuramente più pulito.", "A"), ("Клип B однозначно чище.", "B"),
])
def test_an_adverb_of_certainty_before_the_option_reads_the_option(raw, want):
    assert read_answer(raw, ["A", "B"], CLEAN).option == want


@pytest.mark.parametrize(("raw", "want"), [
    ("Ich würde die zweite Beschreibung wählen.", "B"), ("Ich würde mich für A entscheiden.", "A"),
    ("Ich würde Clip A nehmen.", "A"), ("Ich würde sagen, B.", "B"), ("Yo diría que B.", "B"), ("Eu diria B.", "B"),
])
def test_a_choice_whose_verb_comes_last_or_an_i_would_say_is_read(raw, want):
    assert read_answer(raw, ["A", "B"]).option == want


@pytest.mark.parametrize("raw", ["Vielleicht B.", "Peut-être A.", "Quizás B.", "たぶんB。", "可能是B。",
                                 "肯定不是A。", "Eindeutig nicht A.", "Однозначно не A.", "분명히 A가 아닙니다.",
                                 "Nicht eindeutig, A oder B.", "Ich würde weder A noch B wählen.",
                                 "Ich würde nicht A wählen."])
def test_maybe_and_negations_keep_their_doubt(raw):
    assert read_answer(raw, ["A", "B"]).option is None
