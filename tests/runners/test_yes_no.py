"""A yes/no reply read as the answer word that opens it or the statement of absence or presence it makes; doubt,
reversals, politeness and negation particles are never read as an answer."""

import pytest

from omniaudit.runners.reading import read_answer


@pytest.mark.parametrize(("reply", "want"), [
    ("Yep — there's a dog barking around the 3-second mark.", "yes"),
    ("Correct, a dog barks twice.", "yes"),
    ("Absolutely not, it's just wind.", "no"),
    ("Nope.", "no"),
    ("Well, no.", "no"),
    ("There isn't any barking, no.", "no"),
    ("No barking can be heard.", "no"),
    ("No doorbell detected in the recording.", "no"),
    ('{"detected": "yes"}', "yes"),
    ("Without a doubt - a siren is audible.", "yes"),
    ("The recording includes a doorbell, yes.", "yes"),
    ("No doubt about it - no, the room is silent.", "no"),
    ("Not that I can hear.", "no"),
    ("I don't think so.", "no"),
    ("I can hear a dog.", "yes"),
    ("Yes, no doubt about it.", "yes"),
    ("Sì.", "yes"),
    ("Sí, hay un perro.", "yes"),
    ("Non, aucun chien.", "no"),
    ("네, 들려요.", "yes"),
    ("有,背景里有狗在叫。", "yes"),
    ("No... wait, yes — there's a faint knock at 0:07. Final answer: yes.", "yes"),  # the final answer wins
    ("Yes. Actually, no, that was just the speaker's breathing. My answer is no.", "no"),
])
def test_an_answer_word_or_a_plain_statement_is_read(reply, want):
    assert read_answer(reply, ["yes", "no"]).option == want


@pytest.mark.parametrize(("reply", "reason"), [
    ("No audio was attached, so I cannot tell.", "hedged"),  # a determiner, then doubt
    ("Não consigo ouvir áudio.", "none"),  # "não" negates the verb: no answer word
    ("Sure, let me listen.", "none"),  # politeness
    ("Absolutely! Let me check the clip.", "none"),
    ("No. Yes, actually.", "reversed"),
    ("Yes and no — hard to say.", "hedged"),
    ("It's not the case that there is no barking.", "negated"),  # two negations: not guessed
    ("There is a dog barking, but no cat.", "none"),  # presence with a negation elsewhere: not guessed
    ("No idea.", "hedged"),
    ("不确定。", "hedged"),  # "not sure", not "不" (no)
    ("Si fuera un perro, ladraría.", "none"),  # "si" = if
    ("The clip contains only rain.", "none"),  # what it contains is not what was asked
])
def test_doubt_and_words_that_only_look_like_answers_are_left_unread(reply, reason):
    assert read_answer(reply, ["yes", "no"]) == (None, reason)


def test_the_options_keep_their_own_case():
    assert read_answer("Nope.", ["Yes", "No"]).option == "No"
