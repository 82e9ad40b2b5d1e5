"""An answer left unread is no evidence for or against a shortcut (left out of the measure, never scored as its null
or as half a pick); a declared tie is an answer, half a pick of each slot."""

import numpy as np
import pandas as pd

from omniaudit.evaluation.scorecard.rules import cue_measures, lock_measures


def _pairwise(answer) -> pd.DataFrame:
    """Pairwise protocol trials in both formats and orders; ``answer(gold_first)`` -> "A" / "B" / "tie" / None."""
    rng = np.random.default_rng(0)
    rows = []
    for fmt in ("concat", "native"):
        for t in range(80):
            gold_in_a = bool(rng.integers(2))  # in order AB; BA shows the other slot
            for order, first in (("AB", gold_in_a), ("BA", not gold_in_a)):
                said = answer(first)
                rows.append({"config": "pairwise", "task": "quality", "format": fmt, "trial": f"clip{t % 20}/{fmt}{t}",
                             "run": 0, "order": order, "label": said if said in ("A", "B") else None,
                             "tie": said == "tie"})
    return pd.DataFrame(rows)


def _by_key(tested):
    return {(t.spec.key, t.stratum): t for t in tested}


def test_a_judge_that_ties_whenever_the_gold_is_in_slot_b_leans_to_slot_a():
    measures = _by_key(lock_measures(_pairwise(lambda gold_first: "A" if gold_first else "tie")))
    for fmt in ("concat", "native"):
        slot_a = measures[("pairwise_slot_a", fmt)].contrast
        assert slot_a is not None and slot_a.value == 0.75 and slot_a.n == 80


def test_a_correct_judge_whose_slot_b_answers_go_unread_is_not_measured_for_position():
    measures = _by_key(lock_measures(_pairwise(lambda gold_first: "A" if gold_first else None)))
    for fmt in ("concat", "native"):
        assert measures[("pairwise_slot_a", fmt)].contrast is None
        assert measures[("lock", fmt)].contrast is None


def _cue_items(answer_with_label) -> pd.DataFrame:
    """Reference items showing a wrong label and the same clips' no-label items (k = 4 options)."""
    rows = []
    for clip in range(60):
        gold, cue = "happy", "sad"
        rows.append({"clip_id": f"c{clip}", "config": "reference", "condition": "wrong", "cue": cue, "gold": gold,
                     "k": 4, "label": answer_with_label(clip)})
        rows.append({"clip_id": f"c{clip}", "config": "cue_conflict", "condition": "none", "cue": None, "gold": gold,
                     "k": 4, "label": gold})
    return pd.DataFrame(rows)


def test_label_items_left_unread_are_left_out_not_scored_as_the_null():
    every_unread = _by_key(cue_measures(_cue_items(lambda clip: None)))
    assert every_unread[("cue", "reference")].contrast is None  # not "clear 0.00 [0.00, 0.00]"
    half = _by_key(cue_measures(_cue_items(lambda clip: "sad" if clip % 2 else None)))[("cue",
                                                                                      "reference")].contrast
    assert half is not None and half.value == 1.0  # the read half copy the label every time
