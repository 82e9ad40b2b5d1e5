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


@pytest.mark.parametrize("raw", ["A. Perdón, quise decir B.", "A, mejor dicho B.", "A. Pardon, je voulais dire B.",
                                 "A, ou plutôt B.", "A. Ich meinte B.", "A, besser gesagt B.", "A, anzi B.",
                                 "A. Quis dizer B.", "A, точнее B.", "A. Я имел в виду B.", "A。更正：B。",
                                 "A。我是说B。", "A。訂正：B。", "A. 정정: B."])
def test_a_correction_in_a_glossed_language_reads_the_corrected_answer(raw):
    assert read_answer(raw, ["A", "B"]).option == "B"


@pytest.mark.parametrize(("raw", "want"), [
    ("Описание B точнее: человек явно напряжён.", "B"),  # "точнее" as "more accurate", not "or rather"
    ("La B suona piuttosto metallica, direi la A.", "A"),  # "piuttosto" as "rather metallic"
])
def test_a_comparative_that_doubles_as_a_correction_word_stays_a_comparative(raw, want):
    assert read_answer(raw, ["A", "B"]).option == want


@pytest.mark.parametrize(("raw", "options", "want"), [
    ("Triste. Non, en fait, en colère.", "emotions", "angry"), ("Triste. Non, en colère.", "emotions", "angry"),
    ("Triste. No, arrabbiato.", "emotions", "angry"), ("Traurig. Nein, wütend.", "emotions", "angry"),
    ("Грустный. Нет, злой.", "emotions", "angry"), ("A. Non, B.", "slots", "B"), ("A. Não, B.", "slots", "B"),
    ("A。不，B。", "slots", "B"),
])
def test_sad_no_angry_in_every_glossed_language_is_never_sad(raw, options, want):
    opts = ["neutral", "happy", "sad", "angry"] if options == "emotions" else ["A", "B"]
    assert read_answer(raw, opts).option in (want, None)


def test_a_turn_the_gloss_did_not_understand_leaves_the_reply_unread():
    """A reply whose language is told wrong keeps its turn word untranslated: nothing after it is read as the answer
    and the first answer is not either."""
    assert read_answer("Triste. Non, finalement en colère.", ["neutral", "sad", "angry"]).reason == "reversed"


TURNS = {  # per glossed language: the first answer (sad), the corrected one (angry), the ways a reply turns
    "es": ("Triste", "enojado", ["No, en realidad, {}.", "Perdón, quise decir {}.", "Mejor dicho, {}.", "Espera, {}.",
                                 "No, {}.", "Corrijo: {}."]),
    "fr": ("Triste", "en colère", ["Non, en fait, {}.", "Pardon, je voulais dire {}.", "Attends, {}.", "Non, {}.",
                                   "Je corrige : {}.", "Ou plutôt {}."]),
    "de": ("Traurig", "wütend", ["Nein, eigentlich {}.", "Ich meinte {}.", "Warte, {}.", "Nein, {}.",
                                 "Korrektur: {}.", "Besser gesagt {}."]),
    "it": ("Triste", "arrabbiato", ["No, in realtà {}.", "Intendevo {}.", "Aspetta, {}.", "No, {}.", "Anzi, {}.",
                                    "Correggo: {}."]),
    "pt": ("Triste", "com raiva", ["Não, na verdade, {}.", "Quis dizer {}.", "Espera, {}.", "Não, {}.", "Aliás, {}.",
                                   "Corrijo: {}."]),
    "ru": ("Грустный", "Злой", ["Нет, на самом деле {}.", "Я имел в виду {}.", "Подождите, {}.", "Нет, {}.",
                                "Точнее, {}.", "Поправка: {}."]),
    "zh": ("悲伤", "生气", ["不对，是{}。", "其实是{}。", "我是说{}。", "更正：{}。", "等等，{}。", "不，{}。"]),
    "ja": ("悲しい", "怒り", ["いや、{}です。", "実は{}です。", "訂正：{}。", "やっぱり{}です。",
                             "違います、{}です。"]),
    "ko": ("슬픔", "분노", ["아니, {}입니다.", "사실은 {}입니다.", "정정: {}.", "잠깐, {}입니다.",
                          "아니요, {}입니다."]),
}


@pytest.mark.parametrize(("first", "turn", "then"), [(first, turn, then) for first, then, turns in TURNS.values()
                                                     for turn in turns])
def test_a_turn_in_any_glossed_language_is_never_read_as_the_first_answer(first, turn, then):
    assert read_answer(f"{first}. " + turn.format(then), ["neutral", "happy", "sad", "angry"]).option != "sad"


@pytest.mark.parametrize("raw", ["怒っていません。", "悲しそうではありません。", "화난 게 아니에요.", "没有生气。",
                                 "我不觉得是悲伤。", "悲しいとは言えません。",
                                 "Ich würde nicht sagen, dass er traurig ist.", "I would not call it sad.",
                                 "I don't think it's angry.", "It is not the case that he is sad.",
                                 "怒っているのか驚いているのか、判断できません。"])
def test_a_denied_label_is_never_read(raw):
    """A label named only to deny it, in any glossed language's order (the denial after the clause in Japanese and
    Korean, a judgement verb in English and German), is no answer."""
    assert read_answer(raw, ["neutral", "happy", "sad", "angry", "surprised"]).option is None


@pytest.mark.parametrize(("raw", "want"), [("怒っています。", "angry"), ("悲しいです。", "sad"), ("슬퍼요.", "sad"),
                                          ("我觉得是悲伤。", "sad"), ("Er ist traurig.", "sad"),
                                          ("Not only sad but angry.", None)])
def test_a_label_stated_is_read_and_not_only_is_no_denial(raw, want):
    assert read_answer(raw, ["neutral", "happy", "sad", "angry"]).option == want


@pytest.mark.parametrize("raw", ["A sounds better at first, but B is more natural overall.",
                                 "I prefer A over B... no, B over A.", "A slightly edges out B, but honestly B."])
def test_a_first_impression_taken_back_is_never_the_answer(raw):
    assert read_answer(raw, ["A", "B"]).option != "A"
