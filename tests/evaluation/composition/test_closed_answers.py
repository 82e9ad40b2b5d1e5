"""Counts, numbers and yes/no read from free composition answers, or left to the judge with a reason.

A misreading becomes a finding, a non-reading only costs a judge call: every case below that is not read must stay
unread, and ``benchmarks/data/readers-numbers-dev.jsonl`` (replies written the way models answer counting questions,
in ten languages, labelled with the count they state or null) must never be misread."""

import json
from pathlib import Path

import pandas as pd
import pytest

from omniaudit.evaluation.composition.closed_answers import closed_kind, closed_reading, read_number, read_yes_no
from omniaudit.evaluation.composition.grading import grade
from omniaudit.evaluation.composition.number_words import cjk_value, spell_digits
from omniaudit.runners.reading import Reading

DOGS = "How many dogs bark?"
PEOPLE = "How many people speak in the video?"
BIRDS = "How many birds can be heard?"
DEV = Path(__file__).parents[3] / "benchmarks" / "data" / "readers-numbers-dev.jsonl"


@pytest.mark.parametrize(
    ("raw", "want"),
    [
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
        ("iki köpek, 3 kez havlıyor", Reading(None, "language")),
    ],
)
def test_a_count_is_read_only_when_one_number_is_stated(raw, want):
    assert read_number(raw) == want


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Hay dos perros ladrando.", "2"),
        ("Es bellen drei Hunde.", "3"),
        ("J'entends trois chiens aboyer.", "3"),
        ("Há dois cães latindo.", "2"),
        ("Duas pessoas estão conversando.", "2"),
        ("Ci sono due cani che abbaiano.", "2"),
        ("Ventitré cani.", "23"),
        ("Vinte e dois cães.", "22"),
        ("Лают три собаки.", "3"),
        ("Я слышу двух собак.", "2"),
        ("Говорят двое.", "2"),
        ("Двадцать одна собака.", "21"),
        ("我听到三只狗在叫。", "3"),
        ("音频中有两条狗在叫。", "2"),
        ("视频中有两个人在说话。", "2"),
        ("三人在说话。", "3"),
        ("答案是两只。", "2"),
        ("犬が三匹吠えています。", "3"),
        ("2匹の犬が吠えています。", "2"),
        ("ふたりが話しています。", "2"),
        ("개 두 마리가 짖고 있습니다.", "2"),
        ("세 명이 말하고 있습니다.", "3"),
        ("셋입니다.", "3"),
        ("네, 세 마리입니다.", "3"),
        ("Solo un perro ladra.", "1"),
        ("Nur ein Hund bellt.", "1"),
        ("Il n'y a qu'un chien.", "1"),
        ("Um só cão.", "1"),
        ("Un solo cane abbaia.", "1"),
        ("A single dog barks.", "1"),
        ("Se ríen tres perros.", "3"),  # "ríen", not French "rien"
    ],
)
def test_plain_counts_are_read_in_every_language(raw, want):
    assert read_number(raw, DOGS).option == want


@pytest.mark.parametrize(
    "raw",
    [
        "The barking is due to the neighbours.",  # English "due", not Italian 2
        "Sei cani.",  # Italian 6, but also "you are" and Portuguese "I know"
        "Não sei.",
        "Um cão late.",  # an article
        "Un perro ladra.",
        "Ein Hund bellt.",
        "Un chien aboie très fort.",  # French "très" is no Spanish "tres"
        "Сорок собак.",  # also "magpies"
        "狗一直在叫。",  # 一直 ("all the time") has no counter
        "另一只狗也在叫。",  # "another"
        "第二只狗在叫。",  # "the second"
        "세대를 거쳐 짖는 개.",  # 세대 ("generation")
        "두 번째 개가 더 크게 짖습니다.",  # "the second dog"
        "네.",  # "yes"
        "Um, I'm not sure.",
        "狗叫了一段时间。",  # "for a while"
        "一部分狗在叫。",  # "part of"
        "한 가지 소리만 들립니다.",  # "one kind of"
        "The one on the left is louder.",
        "One can hear dogs barking.",
        "The dogs bark one by one.",
        "The dog barks at one point.",
        "Uno puede oír perros.",
        "A 3-year-old dog barks.",
        "The bark peaks at 60 dB.",
        "A dog barks at 3 pm.",
        "Dogs bark 100% of the time.",
    ],
)
def test_a_word_that_is_also_another_word_is_no_number(raw):
    assert read_number(raw, DOGS).option is None


@pytest.mark.parametrize(
    ("raw", "question", "want"),
    [
        ("Answer: 2\n\nExplanation: two distinct barks at 0:03 and 0:07.", None, "2"),
        ("**Answer:** 4", None, "4"),
        ("Final answer: 3", None, "3"),
        ("3\n\nThe barks are at 0:03, 0:05 and 0:09.", None, "3"),
        ("The answer is 2 dogs, because I hear two distinct barks.", None, "2"),
        ("Answer: 3 (2 sparrows, 1 crow)", None, "3"),
        ("答案：3只狗。\n\n解释：在0:03、0:05和0:08分别听到三种不同的叫声。", None, "3"),
        ("Ответ: 3\n\nПояснение: лай слышен на 0:02, 0:05 и 0:09.", None, "3"),
        ("答え：二匹\n\n説明：0:02と0:06に異なる鳴き声が聞こえます。", None, "2"),
        ("정답: 두 마리", None, "2"),
        ("Respuesta: 2\n\nExplicación: se oyen dos ladridos distintos en 0:03 y 0:07.", DOGS, "2"),
        ("Answer: 2. The dogs bark 5 times in total.", DOGS, "2"),
        ("Answer: 2. One man and one woman speak.", PEOPLE, "2"),
        ("Answer: There are no dogs barking.", DOGS, "0"),
        ("Answer: None", DOGS, "0"),
        ("Step 1: listen. Step 2: count. Result: 3 dogs.", DOGS, "3"),
    ],
)
def test_an_explicit_commitment_decides_over_numbers_that_are_no_count(raw, question, want):
    assert read_number(raw, question) == Reading(want)


@pytest.mark.parametrize(
    ("raw", "question"),
    [
        ("Answer: 2\nExplanation: I hear three barks, two from the big dog.", None),
        ("I initially thought 3, but on reflection it's 2. Final answer: 2", None),
        ("Answer: 2. The dogs bark 5 times in total.", None),  # unknown question: 5 may be what it asks
        ("Answer: 1. One man and one woman speak.", None),
        ("Answer: 2. There could be a third dog in the background.", None),
        ("Answer: 2\nI'm not completely sure.", None),
        ("Answer: 2 or 3", None),
        ("Answer: about 3", None),
        ("Answer: not 3", None),
        ("The answer isn't 3.", None),
        ("Answer: 3. 2 dogs and 1 cat.", DOGS),  # a part counts what is asked
        ("1. Dog at 0:03\n2. Dog at 0:05\n3. Dog at 0:08\nTotal: 2 dogs", DOGS),
        ("Reasoning: I hear 3 distinct barks from 2 dogs.\nAnswer: 2", DOGS),
    ],
)
def test_a_commitment_the_rest_of_the_reply_contradicts_or_doubts_is_not_read(raw, question):
    assert read_number(raw, question).option is None


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("There are 2 dogs in the first 10 seconds.", "2"),
        ("Two dogs, barking at 0:03 and 0:07 respectively.", "2"),
        ("At 3.5 s a dog starts barking; in total 2 dogs bark.", "2"),
        ("I hear 3 dogs. The first one barks at 0:01, the second at 0:04, and the third at 0:09.", "3"),
        ("I hear 3 dogs barking, one of them a puppy.", "3"),
        ("Two dogs bark; the louder one is closer to the microphone.", "2"),
        ("I hear 2 dogs barking. Dog 1 has a deep bark; Dog 2 is higher-pitched.", "2"),
        ("One dog barks 3 times.", "1"),
        ("一只狗叫了三声。", "1"),
        ("1匹の犬が3回吠えています。", "1"),
        ("在0:03和0:07有两只狗在叫。", "2"),
        ("В первые 10 секунд лают две собаки.", "2"),
        ("처음 10초 동안 두 마리가 짖습니다.", "2"),
        ("Deux chiens aboient dans les 10 premières secondes.", "2"),
        ("I'm 100% sure: two dogs.", "2"),
        ("How many dogs bark in the first 10 seconds? Two.", "2"),
    ],
)
def test_numbers_that_are_no_count_do_not_compete_where_the_question_is_known(raw, want):
    assert read_number(raw, DOGS) == Reading(want)


@pytest.mark.parametrize(
    ("raw", "question"),
    [
        ("There are 2 dogs in the first 10 seconds.", None),  # the question may ask for seconds
        ("Two dogs, barking at 0:03 and 0:07 respectively.", None),
        ("One dog barks 3 times.", None),
        ("One dog barks 3 times.", "How many times does the dog bark?"),
        ("Two dogs bark, the first at 0:03.", "At what second does the dog first bark?"),
        ("The 2 dogs bark for 10 seconds.", "How long does the dog bark, in seconds?"),
        ("The silence lasts from 0:02 to 0:05, so 3 seconds.", "How many seconds does the silence last?"),
        ("Dog 2 barks first.", "Which dog barks first, dog 1 or dog 2?"),
        ("I hear 3 dogs barking, one of them a puppy.", "How many puppies are there?"),
        ("I hear 2 dogs barking. Dog 1 has a deep bark; Dog 3 is higher-pitched.", DOGS),
    ],
)
def test_numbers_that_may_be_what_the_question_asks_still_compete(raw, question):
    assert read_number(raw, question).option is None


@pytest.mark.parametrize(
    ("raw", "question", "want"),
    [
        ("In total 3 birds (2 sparrows, 1 crow).", None, "3"),
        ("3 birds in total: 2 sparrows and 1 crow.", BIRDS, "3"),
        ("There are 2 sparrows and 1 crow, so 3 birds altogether.", BIRDS, "3"),
        ("One man and one woman, two people in total.", PEOPLE, "2"),
        ("总共有三只狗：两只大狗和一只小狗。", DOGS, "3"),
        ("Всего три собаки: две большие и одна маленькая.", DOGS, "3"),
        ("In totale tre cani: due grandi e uno piccolo.", DOGS, "3"),
        ("There are 2 sparrows and 1 crow, so 3 birds altogether.", None, None),  # the total does not lead
        ("In total 3 birds (2 sparrows, 1 crow).", "How many sparrows can be heard?", None),
        ("In total 3 birds: 2 sparrows and 2 crows.", BIRDS, None),
        ("2 dogs bark, 1 cat meows: 3 animals in total.", DOGS, None),
        ("3 dogs in total: 2 dogs bark, 1 dog sleeps", DOGS, None),
        ("Hay tres perros: dos grandes y uno pequeño.", DOGS, None),  # no total stated
    ],
)
def test_a_total_is_read_only_where_its_breakdown_sums_to_it(raw, question, want):
    assert read_number(raw, question).option == want


@pytest.mark.parametrize(
    ("raw", "question", "want"),
    [
        ("No dogs bark.", DOGS, "0"),
        ("There are no dogs barking in the audio.", DOGS, "0"),
        ("I don't hear any dogs barking.", DOGS, "0"),
        ("There aren't any dogs.", DOGS, "0"),
        ("None of the dogs bark.", DOGS, "0"),
        ("No barking dogs.", DOGS, "0"),
        ("Nobody speaks.", PEOPLE, "0"),
        ("No one speaks in the video.", PEOPLE, "0"),
        ("None.", None, "0"),
        ("Ninguno.", None, "0"),
        ("Никого.", None, "0"),
        ("没有。", None, "0"),
        ("いません。", None, "0"),
        ("없습니다.", None, "0"),
        ("None", None, None),  # also what a broken pipeline writes
        ("No.", DOGS, None),
        ("No dogs bark.", None, None),  # what it asks about is unknown
        ("No audio was attached.", DOGS, None),
        ("No other dogs bark.", DOGS, None),
        ("No dogs bark until the end.", DOGS, None),
        ("There are no dogs visible.", DOGS, None),
        ("No dogs bark, except one at the very end.", DOGS, None),
        ("Nobody speaks.", DOGS, None),
        ("No one can tell from the audio.", PEOPLE, None),
        ("Not a single dog barks.", DOGS, None),
        ("No dogs bark anymore.", DOGS, None),
        ("没有狗在叫。", DOGS, None),
        ("犬は一匹も吠えていません。", DOGS, None),
        ("개가 한 마리도 없습니다.", DOGS, None),
    ],
)
def test_zero_is_read_only_from_a_plain_statement_that_there_is_none(raw, question, want):
    assert read_number(raw, question).option == want


@pytest.mark.parametrize(
    "raw",
    [
        "2 or 3 dogs.",
        "Two or three dogs.",
        "2–3",
        "Dos o tres perros.",
        "Zwei bis drei Hunde.",
        "2 à 3 chiens.",
        "De dois a três cães.",
        "due o tre cani",
        "Da due a tre cani.",
        "Две-три собаки.",
        "От двух до трёх собак.",
        "两三只狗。",
        "两到三只。",
        "三到4只",
        "二、三匹。",
        "2〜3匹の犬。",
        "2匹か3匹です。",
        "두세 마리",
        "2~3마리",
        "한두 마리",
        "More than 2 dogs.",
        "3+ dogs",
        "3 dogs at least.",
        "≈2 dogs",
        "Unos tres perros.",
        "Etwa drei Hunde.",
        "À peu près trois chiens.",
        "Cerca de três cães.",
        "Circa tre cani.",
        "Около трёх собак.",
        "大约三只。",
        "三只左右。",
        "二十多只狗。",
        "3匹くらいです。",
        "세 마리 정도",
        "Maybe 3.",
        "My best guess is 2.",
        "Tal vez tres perros.",
        "Vielleicht zwei.",
        "Peut-être deux.",
        "Talvez dois.",
        "Forse due.",
        "Наверное, две собаки.",
        "可能是两只。",
        "たぶん2匹です。",
        "아마 두 마리",
        "Is it 3?",
        "Two dogs?",
        "Лают собак пять.",  # the noun first: "about five"
    ],
)
def test_ranges_bounds_doubt_and_questions_are_not_read_in_any_language(raw):
    assert read_number(raw, DOGS).option is None


@pytest.mark.parametrize(
    "raw",
    [
        "One man and one woman speak.",
        "1 dog barks, and 1 dog howls.",
        "一只大狗和一只小狗在叫。",
        "男性1人と女性1人が話しています。",
        "남자 한 명과 여자 한 명이 대화합니다.",
        "There are two dogs: one barks and the other growls.",
        "There are 3 dogs, but only 2 of them bark.",
        "Two dogs bark, then another dog joins.",
        "Two dogs bark, and a third joins at 8 seconds.",
        "两只狗在叫，第三只狗后来加入。",
        "Две собаки, а потом третья присоединяется.",
        "Two dogs and a puppy bark.",
        "Two dogs bark in the first half of the clip, and two more in the second half.",
        "There are two dogs, but they are not barking.",
        "视频里有两只狗，但是它们都没有叫。",
        "개가 두 마리 있지만 짖지 않습니다.",
        "Dois cães latem, mas não aparecem no vídeo.",
        "Two dogs are shown but none of them bark.",
        "Not three, but two dogs.",
        "不是两只，是三只。",
        "Two dogs, not three.",
        "The two dogs and the man bark.",  # normalize drops "the": still one more thing
        "Three gunshots, although the third one might be an echo.",
    ],
)
def test_several_counts_one_more_thing_or_a_negation_leave_the_count_unread(raw):
    assert read_number(raw, DOGS).option is None


def test_chinese_and_japanese_numerals_are_read_in_their_standard_form_only():
    assert [cjk_value(r) for r in ("三", "十二", "二十一", "一百零五", "两百", "两三", "一一")] == [
        3,
        12,
        21,
        105,
        200,
        None,
        None,
    ]
    assert spell_digits("两三只") == "2-3只" and spell_digits("一起") == "一起"


def test_the_labelled_phrasings_are_never_misread_and_most_stated_counts_are_read():
    rows = [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines() if line.strip()]
    readings = [read_number(r["reply"], r["question"]).option for r in rows]
    misread = [
        (r["reply"], got) for r, got in zip(rows, readings, strict=True) if got is not None and got != r["expected"]
    ]
    stated = [got == r["expected"] for r, got in zip(rows, readings, strict=True) if r["expected"] is not None]
    assert len(rows) >= 800 and {r["language"] for r in rows} >= {
        "en",
        "es",
        "de",
        "fr",
        "pt",
        "it",
        "ru",
        "zh",
        "ja",
        "ko",
    }
    assert misread == []
    assert sum(stated) / len(stated) >= 0.97


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("Yes, a dog barks in the background.", "yes"),
        ("No.", "no"),
        ("There is no barking.", "no"),  # a statement of absence (omniaudit.runners.yes_no)
        ("No audio was attached.", None),  # "no" as a determiner, not the answer
        ("It's not the case that there is no barking.", None),  # two negations: left to the judge
        ("Maybe?", None),
    ],
)
def test_yes_or_no_is_read_as_a_label(raw, want):
    assert read_yes_no(raw).option == want


def test_the_question_tells_the_closed_reading_what_is_counted():
    reply = "Two dogs, barking at 0:03 and 0:07."
    assert closed_reading(reply, "2") is None
    assert closed_reading(reply, "2", DOGS) == "2"
    assert closed_reading("No dogs bark.", "0", DOGS) == "0"


def test_closed_items_are_graded_without_the_judge_and_the_rest_are_left_to_it():
    assert [closed_kind(a) for a in ("3", "three", "Yes", "a red car")] == ["number", "number", "yes_no", None]
    samples = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d", "e"],
            "template_name": "t",
            "category": "c",
            "tier": 1,
            "question": "q?",
            "answer": ["3", "3", "Yes", "Yes", "a red car"],
        }
    )
    predictions = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d", "e"],
            "prediction": [
                "There are three dogs.",
                "I count 4 dogs.",
                "Yes, one barks.",
                "Maybe, hard to say.",
                "A red car.",
            ],
        }
    )
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
    samples = pd.DataFrame(
        {
            "id": ["a", "b"],
            "template_name": "t",
            "category": "c",
            "tier": 1,
            "question": "q?",
            "answer": ["a red car", "a blue bus"],
        }
    )
    graded = grade(
        samples,
        pd.DataFrame({"id": ["a", "b"], "prediction": ["crimson car", "bus"]}),
        "openai:j@x",
        progress=heard.append,
    )
    assert heard == ["2/2"] and graded["correct"].all()
