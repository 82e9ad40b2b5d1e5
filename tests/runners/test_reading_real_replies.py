"""What real models write, read as they mean it or left unread with a reason: per-option scores and comparisons,
reasoning traces, every script, and the hedges that must stay unread."""

import json
from pathlib import Path

import pytest

from omniaudit.answer_language import language, unreadable
from omniaudit.runners.reading import REASONS, Reading, read_answer
from omniaudit.runners.reasoning import split_reasoning

AB, N12 = ["A", "B"], ["1", "2"]
EMOTIONS = ["neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"]
LANGUAGES = ["English", "French", "German", "Japanese", "Spanish", "Italian", "Portuguese", "Russian",
             "Mandarin Chinese", "Korean"]
DEV_SETS = [Path(__file__).parents[2] / "benchmarks" / "data" / f"replies-{name}.jsonl"
            for name in ("dev-3", "dev-3b", "dev-3c", "dev-3d")]


@pytest.mark.parametrize(("raw", "options", "want"), [
    ("A: 6/10, B: 9/10", AB, "B"),
    ("A: 9/10, B: 6/10", AB, "A"),
    ("A: incorrect, B: correct", AB, "B"),
    ("A ✗ B ✓", AB, "B"),
    ("Audio 1 - 3/5, Audio 2 - 4/5", N12, "2"),
    ("Response 1: 4/5\nResponse 2: 2/5", AB, "A"),
    ("1: 2/5\n2: 5/5", N12, "2"),
    ("B is wrong, A is right.", AB, "A"),
    ('{"score_A": 6, "score_B": 9}', AB, "B"),
    ('{"scores": {"1": 8, "2": 3}}', N12, "1"),
    ("happy: 0.2, sad: 0.7, angry: 0.1", EMOTIONS, "sad"),
    ("| | A | B |\n|---|---|---|\n| Noise | low | high |\n| Score | 8 | 3 |", AB, "A"),
    ("Scores: A 6/10, B 9/10. So B is better.", AB, "B"),
    ("Response 2 > Response 1", AB, "B"),
    ("Response 1 is worse than Response 2.", AB, "B"),
    ("A < B", AB, "B"),
    ("I'd rank B above A.", AB, "B"),
])
def test_scores_and_comparisons_read_as_the_higher_option_not_the_first_named(raw, options, want):
    assert read_answer(raw, options) == Reading(want)


@pytest.mark.parametrize(("raw", "options", "reason"), [
    ("A: 4, B: 4", AB, "tie"),
    ("happy 0.45 / surprised 0.45 / neutral 0.10", EMOTIONS, "tie"),
    ("A: 9/10, B: 6/10. Final answer: B", AB, "conflict"),  # a verdict that contradicts the scores
    ("A: 6/10 ... after relistening, A: 8/10, B: 7/10", AB, "conflict"),  # one option scored twice
    ("A > B?", AB, "conflict"),
    ('{"answer": "A", "answer": "B"}', AB, "conflict"),  # a repeated key is not its last value
])
def test_scores_that_decide_nothing_are_left_unread(raw, options, reason):
    assert read_answer(raw, options) == Reading(None, reason)


def test_a_quantity_is_not_a_score():
    assert read_answer("A: 2 seconds of hiss, B: 3 seconds of hiss. B.", AB) == Reading("B")
    assert read_answer("A: 3 hisses, B: 1 hiss", AB).option is None


@pytest.mark.parametrize(("raw", "want"), [
    ("<think>The answer is A.</think>\nNeither description is faithful.", Reading(None, "tie")),
    ("<think>I'd go with A.</think>\nB matches the trembling voice. Answer: B", Reading("B")),
    ("<think>A is cleaner... no wait, B.</think>\n\nB", Reading("B")),
    ("<think>A is cleaner, so A.</think>", Reading(None, "reasoning-only")),
    ("<think>A is cleaner, so A.</think>\nThe clips differ in noise.", Reading(None, "reasoning-only")),
    ("<think>Let me compare the two clips. A has", Reading(None, "reasoning-only")),  # cut off by the token limit
    ("Comparing the clips, A has less hiss.\n</think>\n\nAnswer: A", Reading("A")),  # the template opened it
    ("<reasoning>B, clearly.</reasoning>Final answer: A", Reading("A")),
])
def test_a_reasoning_trace_is_never_read_as_the_answer(raw, want):
    assert read_answer(raw, AB) == want


def test_a_servers_separate_trace_only_says_reasoning_only():
    assert read_answer("", AB, reasoning="A is better.") == Reading(None, "reasoning-only")
    assert read_answer("B", AB, reasoning="I'd pick A.") == Reading("B")
    assert split_reasoning("<think>x</think> B") == ("B", "x", False)


@pytest.mark.parametrize("text", ["Ответ: второй вариант.", "두 번째 오디오가 더 자연스럽습니다.",
                                  "Η απάντηση είναι το δεύτερο.", "الإجابة هي الثانية", "התשובה היא השנייה",
                                  "คำตอบคือตัวที่สอง", "दूसरा बेहतर है"])
def test_no_script_is_noise(text):
    assert not unreadable(text)


def test_token_noise_across_scripts_is_still_noise():
    assert unreadable("ardeн的ক্ষ fooбар Ωxyz的 ক্ষq")


@pytest.mark.parametrize(("raw", "options", "want"), [
    ("Я выбираю B.", AB, "B"),
    ("Второе аудио звучит естественнее.", N12, "2"),
    ("Эмоция — грусть.", EMOTIONS, "sad"),
    ("Bを選びます。", AB, "B"),
    ("感情は怒りです。", EMOTIONS, "angry"),
    ("B를 선택합니다.", AB, "B"),
    ("이 언어는 스페인어입니다.", LANGUAGES, "Spanish"),
    ("Escolho a B.", AB, "B"),
    ("O idioma falado é o russo.", LANGUAGES, "Russian"),
    ("Scelgo la B.", AB, "B"),
    ("Il secondo audio è più naturale.", N12, "2"),
    ("Je dirais B, le son est plus propre.", AB, "B"),
    ("Audio 1 klingt unnatürlicher als Audio 2.", N12, "2"),
    ("彼女は悲しんでいます。", EMOTIONS, "sad"),
    ("Direi la A, la voce appare più naturale.", AB, "A"),
    ("声が悲しそうに聞こえる。", EMOTIONS, "sad"),
    ("1番の音声のほうが自然です。", N12, "1"),  # audio no. 1
    ("2번 오디오가 더 자연스러워요.", N12, "2"),
])
def test_answers_in_the_glossed_languages_are_read(raw, options, want):
    assert read_answer(raw, options, "Which clip sounds more natural? Answer with A or B only.") == Reading(want)


@pytest.mark.parametrize(("raw", "options", "reason"), [
    ("Не A.", AB, "negated"),
    ("Aではありません。", AB, "negated"),
    ("Talvez seja a B, não tenho certeza.", AB, "hedged"),
    ("Forse A, ma è difficile dirlo.", AB, "hedged"),
    ("Το δεύτερο ηχητικό ακούγεται πιο φυσικό.", N12, "language"),
    ("المقطع الصوتي الثاني أكثر طبيعية.", N12, "language"),
    ("Wybieram drugie nagranie, brzmi bardziej naturalnie.", N12, "language"),
    ("İkinci ses kaydı daha doğal geliyor.", N12, "language"),  # Turkish, not German for its ü and ö
])
def test_doubt_and_unglossed_languages_are_left_unread_with_a_reason(raw, options, reason):
    assert read_answer(raw, options) == Reading(None, reason)
    assert reason in REASONS


def test_the_languages_are_told_apart_by_script_and_words():
    got = [language(t) for t in ("Я выбираю B", "Bを選びます", "B를 선택합니다", "我选B", "Escolho a B, não a A",
                                 "Scelgo la B, è più naturale", "Ich wähle B", "Je choisis la B")]
    assert got == ["ru", "ja", "ko", "zh", "pt", "it", "de", "fr"]


@pytest.mark.parametrize(("raw", "options", "want"), [
    ("Could be sad.", EMOTIONS, Reading(None, "hedged")),
    ("It could be happy or surprised.", EMOTIONS, Reading(None, "conflict")),
    ("could be", ["A", "B", "C", "D"], Reading(None, "hedged")),  # "be" is not the stem of the label "B"
    ("It's not the case that there is no barking.", ["yes", "no"], Reading(None, "negated")),  # two negations
    ("No, there is no barking.", ["yes", "no"], Reading("no")),
    ("Choice: (b)", AB, Reading("B")),
    ("answer: b", AB, Reading("B")),
    ("A. Actually no, B.", AB, Reading("B")),
    ("{'answer': 'B'}", AB, Reading("B")),
    ('{"answer": "A",}', AB, Reading("A")),
    ("Clip A has some hiss in the background, and clip B has a faint hum. Both are fairly clean; A's hiss is more "
     "noticeable over the speech, whereas the hum in B sits lower. Weighing both, B.", AB, Reading("B")),
])
def test_plain_phrasings_hedges_and_stems(raw, options, want):
    assert read_answer(raw, options) == want


@pytest.mark.parametrize("path", DEV_SETS, ids=lambda p: p.stem)
def test_the_dev_reply_sets_are_read_without_a_misreading(path):
    """The blind dev sets (benchmarks/data/replies-dev-3*.jsonl): 0 misreadings, every reply in a language no reader
    glosses left unread for its language, and of the stated answers >= 95% read on the first set, >= 50% on the set
    written to be hard (dev-3b). (The held-out set is the benchmark's, never a test's.)"""
    import sys

    sys.path.insert(0, str(path.parents[1]))
    from extractor_accuracy import QUESTIONS

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    got = [read_answer(r["reply"], r["options"], QUESTIONS[r["question"]]) for r in rows]
    wrong = [(r["reply"], g) for r, g in zip(rows, got, strict=True) if g.option not in (None, r["expected"])]
    stated = [g.option == r["expected"] for r, g in zip(rows, got, strict=True) if r["expected"] is not None]
    assert wrong == [] and sum(stated) >= (0.5 if path.stem.endswith("3b") else 0.95) * len(stated)
    assert all(g.reason == "language" for r, g in zip(rows, got, strict=True) if r.get("reason") == "language")


def test_a_hand_truth_may_accept_several_readings(tmp_path):
    from omniaudit.evaluation.readings import agreement

    path = tmp_path / "readings.csv"
    path.write_text("id,raw,reading,truth\n1,B.,B,B\n2,Maybe A,none,A|none\n3,A or B,A,B|none\n4,Hm,none,A\n",
                    encoding="utf-8")
    result = agreement(path)
    assert result.n == 4 and result.accuracy == 0.5
    assert [m["id"] for m in result.misread] == ["3"] and [m["id"] for m in result.missed] == ["4"]


def test_a_repeated_key_keeps_no_constraint():
    from omniaudit.runners.payload import constrained_option

    assert constrained_option('{"answer": "A"}', AB) == "A"
    assert constrained_option('{"answer": "A", "answer": "B"}', AB) is None


@pytest.mark.parametrize(("reply", "options", "want"), [
    ("Word error rate, lower is better.\nResponse 1: 0.35\nResponse 2: 0.12", ["1", "2"], ("2", None)),
    ("Noise level\nA: 8\nB: 2", ["A", "B"], (None, "none")),  # a fault scored above its list: direction unknown
    ("A) 2/10  B) 8/10", ["A", "B"], ("B", None)),
    ("✓ A\n✗ B", ["A", "B"], ("A", None)),  # marks written before the options
    ("Answer 2 is better than Answer 1.", ["1", "2"], ("2", None)),  # answers judged, not the reply's answer
    ("Antwort 2 ist besser als Antwort 1.", ["1", "2"], ("2", None)),
    ("The first one... or the second.", ["A", "B"], (None, "hedged")),  # an alternative offered after a choice
    ("A, or B.", ["A", "B"], (None, "hedged")),
    ("A) Happy B) Sad", ["A", "B"], (None, "conflict")),  # the options listed back, not chosen
    ("A: 8/10 B: 2/10 answer B", ["A", "B"], (None, "conflict")),  # a verdict against its own scores
    ('{"cleaner": "B", "reason": "A hums"}', ["A", "B"], ("B", None)),  # the question's attribute as the key
    ('{"more_noise": "A"}', ["A", "B"], (None, "none")),  # the fault as the key: not guessed
    ('{"better_clip": "A", "why": "no hum"}', ["A", "B"], ("A", None)),
    ('{"preferred_option": "A", "chosen_option": "B"}', ["A", "B"], (None, "conflict")),
    ("B<|eot_id|>", ["A", "B"], ("B", None)),  # a chat template's end token left by the server
    ("Answer: 2</s>", ["1", "2"], ("2", None)),
    ("happy=0.12 fearful=0.71 sad=0.17", ["happy", "fearful", "sad"], ("fearful", None)),
    ("Top 2: angry (0.61), neutral (0.30)", ["angry", "neutral"], ("angry", None)),
    # a direction stated in the attribute's words: lower is more natural, so the lower score wins
    ("Robotic-ness (lower = more natural): audio 1 0.8, audio 2 0.3", ["1", "2"], ("2", None)),
    ("Hum level (lower = more hum): A 2, B 6", ["A", "B"], ("B", None)),
    ("Response 1: PASS (clear)\nResponse 2: FAIL (muffled)", ["1", "2"], ("1", None)),  # a verdict word, then why
    ("Clip A ⭐⭐⭐⭐\nClip B ⭐", ["A", "B"], ("A", None)),  # stars without empties: counted of five
    ("Clarity\nA ▇▇▇ 3\nB ▇▇▇▇▇▇▇▇ 8", ["A", "B"], ("B", None)),  # a bar drawn before the score
    ("Response A matches 1/5, response B matches 4/5.", ["A", "B"], ("B", None)),
    ("The 1st.", ["1", "2"], ("1", None)),
    ("After weighing both I settled on B.", ["A", "B"], ("B", None)),
    ("Option A is a better match for the trembling voice.", ["A", "B"], ("A", None)),
    ('{"verdict": "No doubt about it"}', ["A", "B"], (None, "none")),
    ('{"A": {"clean": 9}, "B": {"clean": 4}, "choice": "B"}', ["A", "B"], (None, "conflict")),
    ("Audio 1 scores 6/10 and Audio 2 scores 8/10 on prosody. Therefore, the answer is 1.", ["1", "2"],
     (None, "conflict")),
])
def test_scores_lists_and_alternatives_are_read_as_what_they_say(reply, options, want):
    assert tuple(read_answer(reply, options)) == want


CLEAN = "Which clip has cleaner audio, with less background noise? Answer A or B."
NATURAL = "Which audio sounds more natural? Answer 1 or 2."


@pytest.mark.parametrize(("reply", "options", "question", "want"), [
    ("A is noisier than B.", ["A", "B"], CLEAN, ("B", None)),  # the attribute's opposite, between two options
    ("Clip B has a lot more background noise than clip A.", ["A", "B"], CLEAN, ("A", None)),
    ("Clip B has noticeably more background noise.", ["A", "B"], CLEAN, ("A", None)),
    ("Audio 2 is less natural.", ["1", "2"], NATURAL, ("1", None)),
    ("Audio 2 sounds more synthetic than audio 1.", ["1", "2"], NATURAL, ("1", None)),
    ("Clip A is the noisier one, so the cleaner one is B.", ["A", "B"], CLEAN, ("B", None)),
    ("I would not say A is noisier than B.", ["A", "B"], CLEAN, (None, "negated")),
    ("A is more natural in the first half, B in the second half. Overall I can't pick.", ["A", "B"],
     "Which clip sounds more natural? Answer A or B.", (None, "conflict")),  # qualified comparisons, then doubt
    ("Not A. B is cleaner.", ["A", "B"], CLEAN, ("B", None)),
    ("B B B B B B", ["A", "B"], None, ("B", None)),  # a degenerate repetition of one option
    ("A B A B", ["A", "B"], None, (None, "conflict")),
    ("Definitely clip B — clip A has a hum.", ["A", "B"], CLEAN, ("B", None)),
    ("A is wrong, B is wrong, D is wrong — so it must be C.", ["A", "B", "C", "D"], None, ("C", None)),
    ("A=0.1 B=0.2 C=0.6 D=0.1", ["A", "B", "C", "D"], None, ("C", None)),
    ("Clip 1: 2.8 MOS; Clip 2: 2.1 MOS", ["1", "2"], None, ("1", None)),  # 2.8 is never read as 2
    ("| Clip | Noise score (lower is better) |\n|---|---|\n| A | 6 |\n| B | 2 |", ["A", "B"], CLEAN, ("B", None)),
    ("Scores: A=6, B=8 (higher = noisier)", ["A", "B"], CLEAN, ("A", None)),  # the direction said after
    ("Scores (lower = more artifacts): 1 → 4.2, 2 → 2.0. Audio 2 sounds more natural.", ["1", "2"], NATURAL,
     (None, "conflict")),
    ("Ranking: 1st — clip B, 2nd — clip A", ["A", "B"], CLEAN, ("B", None)),
    ("Rank 1: B\nRank 2: A", ["A", "B"], CLEAN, ("B", None)),
    ("Probability that clip 1 is the more natural one: 0.12", ["1", "2"], NATURAL, (None, "hedged")),
    ("I prefer A for clarity but B for faithfulness.", ["A", "B"], None, (None, "conflict")),
    ("The first is more natural, but the second has better pauses, so I'd say the second... no, the first. Hard to "
     "call.", ["A", "B"], None, (None, "hedged")),
    ("Не знаю, может быть, A, а может, B.", ["A", "B"], CLEAN, (None, "hedged")),
    ("Не A, а B.", ["A", "B"], CLEAN, ("B", None)),
    ("not A, but B.", ["A", "B"], CLEAN, ("B", None)),
    ("La seconda descrizione è quella giusta.", ["A", "B"], None, ("B", None)),
    # a scale or a direction the reply states where its reading did not look: the scores are not guessed
    ("A: 7/10, B: 4/10. Note: on this scale 10 = worst.", ["A", "B"], None, ("B", None)),  # 10, the top, is worst
    ("A: 7, B: 4. Note: 7 = worst.", ["A", "B"], None, (None, "none")),  # an end that is no end of a stated range
    # a scale whose ends are described in words the reader knows decides the direction
    ("Noise rating (0 = silent background, 10 = very noisy): A 4, B 8.", ["A", "B"], CLEAN, ("A", None)),
    ("Naturalness, 1 = completely natural and 7 = very robotic: clip A 6, clip B 3", ["A", "B"], None, ("B", None)),
    ("Scale: 0 = no noise, 5 = heavy noise. A: 1, B: 4", ["A", "B"], CLEAN, ("A", None)),
    ("Distortion index (higher = more distortion): A = 0.2, B = 0.6", ["A", "B"], None, ("A", None)),
    ("Hiss: clip A 0.7, clip B 0.1 (lower is better)", ["A", "B"], CLEAN, ("B", None)),  # said after the scores
    ("Die Aufnahme B ist geräuschärmer.", ["A", "B"], CLEAN, ("B", None)),
    # one end of a scale said, where the reply gives its range
    ("Rated on a 1-10 scale (10 = heaviest noise): clip A 3, clip B 7.", ["A", "B"], CLEAN, ("A", None)),
    ("Out of 5, where 5 = least natural: audio 1 = 2, audio 2 = 4.", ["1", "2"], None, ("1", None)),
    ("Out of 5 (1 = least natural): audio 1 = 2, audio 2 = 4.", ["1", "2"], None, ("2", None)),
    ("Audio 1 = 1, audio 2 = 2.", ["1", "2"], None, ("2", None)),  # a slot's value of 1 is a score, not slot A
    ("Predicted MOS: clip A 4.2, clip B 2.9", ["A", "B"], None, ("A", None)),
    ("Je pense que le clip B est plus bruité que le clip A.", ["A", "B"], CLEAN, ("A", None)),
    ("Audio 2 wirkt künstlicher als Audio 1.", ["1", "2"], "Which audio sounds more natural?", ("1", None)),
    ("Запись B звучит более искусственно, чем A.", ["A", "B"], "Which clip sounds more natural?", ("A", None)),
    ("Score 1: 3 ★★★☆☆\nScore 2: 5 ★★★★★", ["1", "2"], None, ("2", None)),  # stars after the number
    ("Faithfulness:\n- A (sad and tired): 0.2\n- B (angry and tense): 0.9", ["A", "B"], None, ("B", None)),
    ("Clip B gets a 9 and clip A gets a 4 from me.", ["A", "B"], None, ("B", None)),
    ("neutral — 3/10 likelihood\nfearful — 9/10 likelihood", ["neutral", "fearful"], None, ("fearful", None)),
    # conditions, each with its own option: no overall choice
    ("If you care about clarity, B; if you care about warmth, A.", ["A", "B"], None, (None, "conflict")),
    ("If the question is about tone, sad; if about words, neutral.", ["sad", "neutral"], None, (None, "conflict")),
    ("If I had to choose, B.", ["A", "B"], None, ("B", None)),  # one condition is a forced choice
    ("ans: b", ["A", "B"], None, ("B", None)),
    ("Letter: B", ["A", "B"], None, ("B", None)),
    ("B (clip B)", ["A", "B"], None, ("B", None)),
    ("Description B (tense and angry) is more faithful.", ["A", "B"], "Which description is more faithful?",
     ("B", None)),
    ("A (or maybe B) is more faithful.", ["A", "B"], "Which description is more faithful?", (None, "conflict")),
    ("Of the pair, clip B has the more natural rhythm.", ["A", "B"], "Which clip sounds more natural?", ("B", None)),
    ("Clip A is robotic; clip B is natural.", ["A", "B"], "Which clip sounds more natural?", ("B", None)),
    ("Cleaner → A (B hisses)", ["A", "B"], CLEAN, ("A", None)),
    ("Me parece más limpio el clip B.", ["A", "B"], CLEAN, ("B", None)),
    ("I'd say B, the timbre is warmer.", ["A", "B"], None, ("B", None)),
    ("The supplied label says angry, but what I hear is fearful.", ["angry", "fearful"], None, ("fearful", None)),
    ("Between calm and sad... I'll say sad.", ["calm", "sad"], None, ("sad", None)),
    ("A: 7/10, B: 4/10", ["A", "B"], None, ("A", None)),
    ("The more faithful description is A.", ["A", "B"], "Which description is more faithful? Answer A or B.",
     ("A", None)),
    ("B is worse.", ["A", "B"], None, ("A", None)),
    ("B is not worse.", ["A", "B"], None, (None, "none")),
    ("There's way more background noise in A than in B.", ["A", "B"], CLEAN, ("B", None)),
    ("I hear more hiss on the first recording.", ["A", "B"], CLEAN, ("B", None)),
    ("My initial pick was clip B, but after listening again I'm changing my answer to A.", ["A", "B"], None,
     ("A", None)),
    ("After going back and forth: A. That's my final answer.", ["A", "B"], None, ("A", None)),
    ("Clip 'B'.", ["A", "B"], None, ("B", None)),
    ("The 2nd one", ["1", "2"], None, ("2", None)),
    ("Ответ: А", ["A", "B"], None, ("A", None)),  # a Cyrillic А, not the Russian "а" (but)
    ("Less noise: B.", ["A", "B"], CLEAN, ("B", None)),  # the attribute as a heading
    ("More natural: clip B (A has audible glitching).", ["A", "B"], "Which clip sounds more natural?", ("B", None)),
    ("The more natural-sounding one is B.", ["A", "B"], "Which clip sounds more natural?", ("B", None)),
    ("Naturalness\n  A ........ 62/100\n  B ........ 88/100\nI prefer A.", ["A", "B"], None, (None, "conflict")),
])
def test_comparisons_in_the_attributes_opposite_decide_between_two_options(reply, options, question, want):
    assert tuple(read_answer(reply, options, question)) == want


@pytest.mark.parametrize(("reply", "want"), [
    ("Hiss (0 = none, 10 = severe): A 7, B 2", "B"), ("Static (1 = faint, 5 = constant):\nA = 1\nB = 4", "A"),
    ("Quality (1 = low, 5 = high): A 4, B 2", None),  # an amount is an end only on a fault's scale
])
def test_a_faults_scale_whose_ends_are_amounts(reply, want):
    assert read_answer(reply, AB).option == want


@pytest.mark.parametrize(("reply", "want"), [
    ("sad (as per the reference label)", "sad"), ("Based on the provided label: happy.", "happy"),
    ("Per the label, sad.", "sad"), ("The label says happy.", None),  # reported, not answered
    ("The reference label is happy, but I hear sadness.", "sad"),
])
def test_a_label_given_as_the_answer_with_its_source_is_read(reply, want):
    assert read_answer(reply, ["neutral", "happy", "sad"]).option == want


@pytest.mark.parametrize(("reply", "want", "reason"), [
    ("<|channel|>analysis<|message|>A hums; B clean.<|end|><|start|>assistant<|channel|>final<|message|>B<|return|>",
     "B", None),
    # the analysis names another option than the final: the final is the answer
    ("<|channel|>analysis<|message|>B is better.<|end|><|start|>assistant<|channel|>final<|message|>A<|return|>",
     "A", None),
    ("<|channel|>analysis<|message|>A hums, so B. Hmm, let me", None, "reasoning-only"),  # no final channel: cut
])
def test_gpt_oss_harmony_channels_split_the_trace_from_the_answer(reply, want, reason):
    assert read_answer(reply, AB) == (want, reason)
