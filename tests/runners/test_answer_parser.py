"""The free-form answer parser on a labelled table of pairwise (A/B) and closed-set answers.

Rules (evaluation/judges/items.py): an explicit choice names an option and the LAST explicit choice wins; comparatives
of the judged attribute describe and name nothing ("B is cleaner" reads exactly like "B is noisier" to a parser that
does not know the question); negated and coordinated mentions name nothing; ambiguous answers are unparsed (None).
"""

import pytest

from omniaudit.runners import parse_answer
from omniaudit.runners.reading import question_of

AB = ["A", "B"]
EMO = ["angry", "happy", "neutral", "sad"]
HS = ["happy", "sad"]

# (raw answer, options, expected option or None). Rows marked "issue" are the issue's examples; rows marked "was"
# give what the old parser returned where it differs (the bug each row guards against).
TABLE = [
    # the issue's examples
    ("Clip A is noisier than clip B, so B.", AB, "B"),  # issue; was A
    ("Clip A has more noise; clip B is cleaner.", AB, None),  # issue; was A (comparatives only describe)
    ("B is cleaner", AB, None),  # issue: a bare comparative names no choice, by rule (see module docstring)
    ("B is cleaner, so B.", AB, "B"),  # ... unless an explicit choice follows; was None
    ("happy/sad", HS, None),  # issue; was happy
    # bare answers and cues (kept from tests/evaluation/protocols/test_judges.py)
    ("B", AB, "B"),
    ("A.", AB, "A"),
    ("(B)", AB, "B"),
    ("**A**", AB, "A"),
    ("_A_", AB, "A"),
    ("Answer: B", AB, "B"),
    ("Answer: **B**", AB, "B"),
    ("I choose B.", AB, "B"),
    ("B - it has less hiss", AB, "B"),
    ("A, because its voice is steadier.", AB, "A"),
    ("I think clip B.", AB, "B"),
    ("Clip A has a constant hiss.\n\nB", AB, "B"),  # a final bare letter; was A
    ("My final answer is option A.", AB, "A"),
    ("The better clip is B.", AB, "B"),  # was None
    ("Clip B is better than clip A.", AB, "B"),  # "better" is attribute-free: a verdict
    ("Clip A is the better one.", AB, "A"),
    ("B wins.", AB, "B"),  # was None
    ("I prefer B over A.", AB, "B"),
    ("It's not A, it's B.", AB, "B"),  # was None
    ("Overall, clip A.", AB, "A"),
    # a final explicit choice wins over earlier ones
    ("Answer: A. Wait, listening again, the answer is B.", AB, "B"),  # was A
    ("I would not choose A; I choose B.", AB, "B"),  # was A
    ("A. Actually, on reflection, B is better.", AB, "B"),  # was A
    # comparatives, descriptions, ambiguity: unparsed
    ("Clip A is cleaner.", AB, None),  # was A (same construction as "Clip A is noisier.")
    ("Clip A is cleaner than clip B.", AB, None),  # was A
    ("Clip A is noisier than clip B.", AB, None),  # was A: the bug
    ("Candidate B sounds more like the reference.", AB, None),  # was B
    ("A is noisier than B.", AB, None),
    ("A, which has a constant hiss, is noisier than B.", AB, None),  # a subject, not a lead; was A
    ("A: noisy. B: clean.", AB, None),  # per-clip notes, no choice; was A
    ("A clip with less noise is better.", AB, None),
    ("The answer is a bit unclear.", AB, None),
    ("It depends on which clip a listener prefers.", AB, None),
    ("Clip A and clip B sound identical.", AB, None),
    ("Neither A nor B is better.", AB, None),  # coordinated, not "B is better"
    ("A or B", AB, None),
    ("A/B", AB, None),
    ("Both A and B are fine.", AB, None),
    ("I would not pick A.", AB, None),  # was A
    ("", AB, None),
    # closed label sets
    ("angry", EMO, "angry"),
    ("  Sad. ", EMO, "sad"),
    ("The speaker sounds angry to me.", EMO, "angry"),
    ("Angry, not sad.", EMO, "angry"),
    ("Answer: sad", EMO, "sad"),
    ("It sounds sad at first, but overall the emotion is angry.", EMO, "angry"),  # final choice; was None
    ("The voice is not angry; the speaker sounds sad.", EMO, "sad"),  # was None (the negated one counted)
    ("The speaker is not sad.", EMO, None),  # was sad: a negated label is no choice
    ("Either angry or sad.", EMO, None),
    ("angry or sad", EMO, None),  # was angry
    ("happy/sad", EMO, None),  # was happy
    ("Somewhere between neutral and sad.", EMO, None),
    ("I cannot tell.", EMO, None),
    ("audio_described", ["audio_described", "muted", "visual_only"], "audio_described"),
    ("I'd classify it as muted.", ["audio_described", "muted", "visual_only"], "muted"),
    # markup and the letter's case ("a bit" is not slot A)
    ("**Final answer:** `B`", AB, "B"),
    ("it is a tie, a toss-up", AB, None),
]


def test_table_is_large_and_covers_both_kinds():
    assert len(TABLE) >= 30
    assert sum(o == AB for _, o, _ in TABLE) >= 20 and sum(o != AB for _, o, _ in TABLE) >= 10
    assert {e for _, _, e in TABLE} >= {"A", "B", None}


@pytest.mark.parametrize(("raw", "options", "label"), TABLE)
def test_parse_answer_table(raw, options, label):
    assert parse_answer(raw, options) == label


# ------------------------------------------------------------------------------------ reading answers
N12 = ["1", "2"]
EMO8 = ["neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised"]
LANGS = ["English", "French", "German", "Japanese", "Spanish", "Mandarin Chinese", "Korean"]
Q_CLEAN = ("The first audio is clip A and the second audio is clip B. Which clip has cleaner audio, with less "
           "background noise? Answer with A or B only.")

# (answer, options, expected): the issue's misses, ordinal references, other languages, stems and aliases
ISSUE_17 = [
    ("Audio 2 is better.", AB, "B"),
    ("The second one.", AB, "B"),
    ("Respuesta: B", AB, "B"),
    ("答案是A", AB, "A"),
    ("Option (B) is better.", AB, "B"),
    ("Both are similar, but if forced: A.", AB, "A"),
    ("Surprise.", EMO8, "surprised"),
    ("This is Mandarin.", LANGS, "Mandarin Chinese"),
    ("Es español.", LANGS, "Spanish"),
    ("the first clip", AB, "A"),
    ("Clip 1.", AB, "A"),
    ("Description B is better.", AB, "B"),
    ("The latter.", AB, "B"),
    ("la segunda", AB, "B"),
    ("第二个", AB, "B"),
    ("Ｂ", AB, "B"),  # full-width
    ("2", N12, "2"),
    ("The first one.", N12, "1"),
    ("I choose audio 2.", N12, "2"),
    ("答案：2", N12, "2"),
    ("Happiness.", EMO8, "happy"),
    ("The emotion is fear.", EMO8, "fearful"),
    ("中文", LANGS, "Mandarin Chinese"),
    # no choice: never a wrong option
    ("Audio 1 has a lot of noise at 2 seconds.", N12, None),  # "2 seconds" is no option 2
    ("1 or 2", N12, None),
    ("The first and second clips are equally noisy.", AB, None),
    ("I can't decide between the first and the second.", AB, None),
    ("Sadly, I cannot tell.", EMO8, None),  # "sadly" is no "sad"
    ("No es inglés.", LANGS, None),
    ("A或B", AB, None),
    ("Chinese or Japanese?", LANGS, None),
]


@pytest.mark.parametrize(("raw", "options", "label"), ISSUE_17)
def test_answers_from_an_earlier_outside_set(raw, options, label):
    assert parse_answer(raw, options) == label


def test_a_statement_in_the_questions_own_comparative_words_answers_it():
    assert parse_answer("The first clip has less background noise.", AB, question=Q_CLEAN) == "A"
    assert parse_answer("Clip B is cleaner.", AB, question=Q_CLEAN) == "B"
    assert parse_answer("El clip B tiene menos ruido de fondo.", AB, question=Q_CLEAN) == "B"
    # without the question it is a description
    assert parse_answer("The first clip has less background noise.", AB) is None
    # between two options the attribute's opposite answers it too (the other one), a denial does not
    assert parse_answer("Clip A has more background noise.", AB, question=Q_CLEAN) == "B"
    assert parse_answer("Clip A is noisier than clip B.", AB, question=Q_CLEAN) == "B"
    assert parse_answer("Clip A has more background noise.", AB) is None
    assert parse_answer("Neither clip A nor clip B is cleaner.", AB, question=Q_CLEAN) is None


def test_only_the_prompts_question_sentence_is_read_never_its_candidate_texts():
    prompt = ("Two descriptions of the speaker follow.\n\nDescription A: a calm voice\n\nDescription B: an angry "
              "voice, faithful to the voice\n\nWhich description is more faithful to the emotion heard? Answer "
              "with A or B.")
    assert question_of(prompt) == "Which description is more faithful to the emotion heard?"
    assert parse_answer("B is more faithful to the voice.", AB, question=prompt) is None  # "voice": candidates' word
    assert parse_answer("B is more faithful to the emotion heard.", AB, question=prompt) == "B"
    assert parse_answer("Description A is better. Wait, no: B is more faithful to the emotion heard.", AB,
                        question=prompt) == "B"  # taken back, then answered in the question's own words
    assert parse_answer("Description A is better. Wait, no: B is more faithful to the voice.", AB,
                        question=prompt) is None  # taken back, and no new answer


ECHOES = {"AB": Q_CLEAN, "12": "Which audio sounds more natural? Answer with 1 or 2 only.",
          "emotion": "Listen to the audio clip. Which emotion does the speaker express? Answer with exactly one of: "
                     + ", ".join(EMO8) + ".",
          "language": "Which language is spoken? Answer with exactly one of: " + ", ".join(LANGS) + "."}
SETS = {"AB": AB, "12": N12, "emotion": EMO8, "language": LANGS}


@pytest.mark.parametrize("kind", list(SETS))
@pytest.mark.parametrize("answer", ["", "   ", "Audio", "Audio Audio Audio", "Emotion", "asdkj qwpeo zmxn",
                                    "<unk><unk><unk>", "<|endoftext|>Audio", "The capital of France is Paris.",
                                    "I cannot tell.", "Lo siento, no puedo ayudar.", "我无法判断。"])
def test_degenerate_answers_name_no_option(kind, answer):
    assert parse_answer(answer, SETS[kind]) is None


@pytest.mark.parametrize("kind", list(SETS))
def test_the_question_echoed_back_names_no_option(kind):
    assert parse_answer(ECHOES[kind], SETS[kind]) is None


def test_parse_answer_stays_importable_where_it_was():
    from omniaudit.runners.items import parse_answer as from_items

    assert from_items("B", AB) == "B" and from_items is parse_answer
