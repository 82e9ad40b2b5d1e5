"""The free-form answer parser on a labelled table of pairwise (A/B) and closed-set answers.

Rules (evaluation/judges/items.py): an explicit choice names an option and the LAST explicit choice wins; comparatives
of the judged attribute describe and name nothing ("B is cleaner" reads exactly like "B is noisier" to a parser that
does not know the question); negated and coordinated mentions name nothing; ambiguous answers are unparsed (None).
"""

import pytest

from omniaudit.evaluation.judges import parse_answer

AB = ["A", "B"]
EMO = ["angry", "happy", "neutral", "sad"]
HS = ["happy", "sad"]

# (raw answer, options, expected option or None). Rows marked "issue" are the examples; rows marked "was"
# give what the old parser returned where it differs (the bug each row guards against).
TABLE = [
    # the examples
    ("Clip A is noisier than clip B, so B.", AB, "B"),  # issue; was A
    ("Clip A has more noise; clip B is cleaner.", AB, None),  # issue; was A (comparatives only describe)
    ("B is cleaner", AB, None),  # issue: a bare comparative names no choice, by rule (see module docstring)
    ("B is cleaner, so B.", AB, "B"),  # ... unless an explicit choice follows; was None
    ("happy/sad", HS, None),  # issue; was happy
    # bare answers and cues (kept from tests/evaluation/test_judges.py)
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
