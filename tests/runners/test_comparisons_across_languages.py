"""A comparison in the question's attribute or its opposite reads the same in every glossed language as in English,
in each language's own word order; and a verdict after descriptions of both options is read unless numbers in them
may contradict it."""

import json
from pathlib import Path

import pytest

from omniaudit.runners.reading import read_answer

QUESTIONS = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "reader-questions.json").read_text())


@pytest.mark.parametrize(("raw", "question", "want"), [
    ("Clip B ist viel verrauschter als Clip A.", "clean", "A"), ("Clip B ist sauberer als Clip A.", "clean", "B"),
    ("Клип A шумнее, чем клип B.", "clean", "B"), ("Клип B чище, чем клип A.", "clean", "B"),
    ("Il clip B è più rumoroso del clip A.", "clean", "A"), ("Il clip A è più pulito del clip B.", "clean", "A"),
    ("B比A噪音更大。", "clean", "A"), ("A的杂音比B多。", "clean", "B"), ("B比A更干净。", "clean", "B"),
    ("A比B更自然。", "natural", "A"), ("B比A好。", None, "B"),
    ("A가 B보다 잡음이 많습니다.", "clean", "B"), ("B는 A보다 훨씬 깨끗해요.", "clean", "B"),
    ("A가 B보다 더 자연스럽습니다.", "natural", "A"), ("A가 B보다 더 좋아요.", None, "A"),
])
def test_a_comparison_reads_in_each_languages_word_order(raw, question, want):
    assert read_answer(raw, ["A", "B"], QUESTIONS.get(question)).option == want


@pytest.mark.parametrize(("raw", "want"), [
    ("Clip A rushes its vowels and clip A clips at the end. Clip B breathes between phrases. So the more natural "
     "one is clip B.", "B"),
    ("A is monotone. B has pauses where a person would pause. Overall, clip A is the more natural one.", "A"),
    # measurements beside the verdict may contradict it: left for the judge
    ("A: jitter 0.9%, B: jitter 2.1%. So the more natural one is clip B.", None),
])
def test_a_verdict_after_descriptions_of_both_options(raw, want):
    assert read_answer(raw, ["A", "B"], QUESTIONS["natural"]).option == want


@pytest.mark.parametrize(("raw", "question", "want"), [
    ("The first clip has a lot less static.", "clean", "A"), ("Clip B has far less hum.", "clean", "B"),
    ("Clip B has less hum.", "natural", None),  # a kind of noise answers only a question about noise
])
def test_a_kind_of_noise_answers_a_question_about_noise(raw, question, want):
    assert read_answer(raw, ["A", "B"], QUESTIONS[question]).option == want


def test_a_revision_after_an_answer_is_never_the_first_answer():
    emotions = ["neutral", "happy", "sad"]
    assert read_answer("sad. Let me revise: happy.", emotions).option != "sad"
    assert read_answer("A. I'll have to revise that.", ["A", "B"]).reason == "reversed"


@pytest.mark.parametrize("raw", ["A는 B보다 낫지 않습니다.", "A가 B보다 잡음이 많지 않아요.",
                                 "Aの方が良いとは言えません。", "A is not better than B.", "A ist nicht besser als B.",
                                 "A并不比B好。"])
def test_a_denied_comparison_is_never_read_as_the_comparison(raw):
    assert read_answer(raw, ["A", "B"], QUESTIONS["clean"]).option != "A"
