"""The closed-option reader abstains on doubt, with a reason: reversals, negated claims, hypotheticals, conflicts,
reported labels, ties and noise are never read as an answer; final commitments, structured answers, language codes
and German and French answers are read."""

import pytest

from omniaudit.runners.reading import REASONS, Reading, read_answer

AB = ["A", "B"]
N12 = ["1", "2"]
EMOTIONS = ["neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"]
LANGUAGES = ["English", "French", "German", "Japanese", "Spanish", "Italian", "Portuguese", "Mandarin Chinese"]

UNREAD = [  # reply, options, reason
    ("Description A is better. Wait, no: B is more faithful to the voice.", AB, "reversed"),
    ("A is the better one... actually, hmm.", AB, "reversed"),
    ("A... no, B... no, A. Hmm.", AB, "reversed"),
    ("It is not the case that A is better.", AB, "negated"),
    ("I don't think clip B is better.", AB, "negated"),
    ("I would have said A is better, but after listening again, B.", AB, "hedged"),
    ("At first I thought A is better.", AB, "hedged"),
    ("Maybe it's Polish?", LANGUAGES + ["Polish"], "hedged"),
    ("I'm glad to help! The emotion is hard to determine.", EMOTIONS, "hedged"),
    ("A is better. B is better.", AB, "conflict"),
    ('{"answer": "A", "verdict": "B"}', AB, "conflict"),
    ("Chinese (Cantonese).", LANGUAGES, "conflict"),
    ("happy/sad", EMOTIONS, "conflict"),
    ("[[C]]", AB, "tie"),
    ("They are equally good.", AB, "tie"),
    ("The label says angry, but I disagree.", EMOTIONS, "label"),
    ("The reference label is happy.", EMOTIONS, "label"),
    ("She is anything but happy.", EMOTIONS, "negated"),
    ("Pas triste.", EMOTIONS, "negated"),
    ("Happy to help!", EMOTIONS, "none"),
    ("B, or perhaps A.", AB, "hedged"),
    ("Clip A... or maybe clip B.", AB, "hedged"),
    ("the the the the", AB, "noise"),
    ("xq zzk pwt qrst", EMOTIONS, "noise"),
    ("", AB, "empty"),
    ("   ", EMOTIONS, "empty"),
]


@pytest.mark.parametrize(("raw", "options", "reason"), UNREAD)
def test_doubt_is_not_read_and_says_why(raw, options, reason):
    assert read_answer(raw, options) == Reading(None, reason)
    assert reason in REASONS


READ = [  # reply, options, option
    ("A. Actually no, B. Final answer: B.", AB, "B"),
    ("At first I thought A, but B is clearly better.", AB, "B"),
    ("It sounds sad at first, but overall the emotion is angry.", EMOTIONS, "angry"),
    ("A is better than B.", AB, "A"),
    ("Although the reference label is happy, I hear sadness.", EMOTIONS, "sad"),
    ("German, according to the label; but I hear French.", LANGUAGES, "French"),
    ("The metadata says Spanish, but the speaker is clearly speaking Portuguese.", LANGUAGES, "Portuguese"),
    ("The label says angry. I agree.", EMOTIONS, "angry"),
    ("Happy to help! The speaker sounds angry.", EMOTIONS, "angry"),
    ("Not sad, happy.", EMOTIONS, "happy"),
    ("My verdict: [[A]]", AB, "A"),
    ("\\boxed{B}", AB, "B"),
    ('{"choice": "A", "reason": "B has more hiss than A."}', AB, "A"),
    ('```json\n{"answer": "2"}\n```', N12, "2"),
    ('{"emotion": "Sadness"}', EMOTIONS, "sad"),
    ("Response: B", AB, "B"),
    ("A clear win for B.", AB, "B"),
    ("The second audio, no doubt.", N12, "2"),
    ("es", LANGUAGES, "Spanish"),
    ("pt-BR", LANGUAGES, "Portuguese"),
    ("zh-CN", LANGUAGES, "Mandarin Chinese"),
    ("Language: de", LANGUAGES, "German"),
    ("Die Antwort ist B.", AB, "B"),
    ("Ich wähle A.", AB, "A"),
    ("Ich bevorzuge Clip A.", AB, "A"),
    ("Clip B ist besser.", AB, "B"),
    ("Laut Label fröhlich, aber ich höre Traurigkeit.", EMOTIONS, "sad"),
    ("traurig", EMOTIONS, "sad"),
    ("Je choisis la B.", AB, "B"),
    ("La réponse est A.", AB, "A"),
    ("Le premier est meilleur.", AB, "A"),
    ("Le second.", AB, "B"),
    ("Je préfère l'extrait A.", AB, "A"),
    ("L'étiquette dit joyeux, mais j'entends de la tristesse.", EMOTIONS, "sad"),
    ("Prefiero la B a la A.", AB, "B"),
    ("<answer>A</answer>", AB, "A"),
    ("<verdict> B </verdict>", AB, "B"),
    ("My first impression was sad, but the rising pitch settles it: surprised.", EMOTIONS, "surprised"),
    ("It might be Korean, which is not listed; the nearest option is Japanese.", LANGUAGES, "Japanese"),
    ("语言代码：de", LANGUAGES, "German"),
    ("Le label indique « calme », mais j'entends de la peur.", EMOTIONS, "fearful"),
    ("Aunque la etiqueta dice feliz, yo oigo tristeza.", EMOTIONS, "sad"),
    ("虽然参考标签是开心，但我听到的是悲伤。", EMOTIONS, "sad"),
]


@pytest.mark.parametrize(("raw", "options", "option"), READ)
def test_a_final_unambiguous_commitment_is_read(raw, options, option):
    assert read_answer(raw, options) == Reading(option)


def test_a_two_letter_word_is_a_language_code_only_where_it_stands_alone():
    assert read_answer("It is Italian.", LANGUAGES) == Reading("Italian")  # "It" here is a pronoun, not a code
    assert read_answer("de", EMOTIONS) == Reading(None, "none")  # no language options: a word, not a code
    assert read_answer("it", LANGUAGES) == Reading("Italian")  # alone, it is the code


def test_unread_rows_record_their_reason_and_the_judge_counts_them():
    from omniaudit.runners.items import JudgeItem, Sampling
    from omniaudit.runners.run import prediction_row

    item = JudgeItem(id="x", prompt="Which clip is cleaner? Answer with A or B.", options=AB, media=[])
    row = prediction_row(item, "It is not the case that A is better.", Sampling(), None)
    assert row["label"] is None and row["parsed"] is False and row["unread"] == "negated"
    assert "unread" not in prediction_row(item, "Answer: B", Sampling(), None)
