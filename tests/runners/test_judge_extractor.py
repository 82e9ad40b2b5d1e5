"""`omniaudit judge --extractor`: a model reads only the closed replies the rules did not understand."""

import json

from omniaudit.runners.items import JudgeItem, Sampling
from omniaudit.runners.rescue import extraction_item, rescue_unread
from omniaudit.runners.rows import prediction_row

ITEM = JudgeItem(id="p/ab", order="ab", prompt="Two clips follow. Which clip sounds more natural? Answer A or B.",
                 options=["A", "B"])


class Extractor:
    """Answers every extraction question with its scripted reply; records what it was asked."""

    def __init__(self, replies):
        self.replies, self.asked = replies, []

    def answer(self, items, progress=None):
        self.asked += items
        return [self.replies[i] for i in range(len(items))]


def test_only_replies_the_rules_did_not_understand_are_put_to_the_extractor(monkeypatch):
    rows = [prediction_row(ITEM, raw, Sampling(), None) for raw in (
        "B.",                                   # read by the rules
        "Mir gefällt Nummer zwei.",             # German the rules do not read: none
        "Το δεύτερο.",                          # Greek: language
        "Perhaps A.",                           # doubt: never put to the extractor
        "Hmm, the clips.")]                     # none: the extractor says none
    assert [r.get("unread") for r in rows] == [None, "none", "language", "hedged", "none"]
    extractor = Extractor(["B", "Answer: B", "none"])
    monkeypatch.setattr("omniaudit.runners.factory.make_judge", lambda spec, **kw: extractor)
    assert rescue_unread([(r, ITEM) for r in rows], "openai:reader@http://127.0.0.1:1/v1") == 2
    assert [r["label"] for r in rows] == ["B", "B", "B", None, None]
    assert [r.get("read_by") for r in rows] == [None, "extractor", "extractor", None, None]
    assert rows[1]["unread_by_rules"] == "none" and "unread" not in rows[1] and rows[4]["unread"] == "none"
    assert [i.options for i in extractor.asked] == [["A", "B", "none"]] * 3
    assert "Which clip sounds more natural?" in extractor.asked[0].prompt
    assert "Το δεύτερο." in extractor.asked[1].prompt
    json.dumps(rows)  # the rows stay JSON


def test_the_extraction_question_carries_the_reply_and_none():
    item = extraction_item(ITEM, "Die zweite.", "k")
    assert item.options == ["A", "B", "none"] and "<<<\nDie zweite.\n>>>" in item.prompt


def test_a_reply_that_is_deliberation_only_is_read_from_its_trace_only_when_asked():
    from omniaudit.runners.items import Answer
    from omniaudit.runners.rescue import read_traces

    concluded = "<think>The first clip clips at the peaks; the second is clean. Final answer: B.</think>"
    rows = [prediction_row(ITEM, raw, Sampling(), None, provenance={}, finish_reason=finish) for raw, finish in (
        (concluded, "stop"),                                                    # read: B
        ("<think>A is better.</think>\nThe clips differ in loudness.", "stop"),  # a visible answer: not overruled
        ("<think>Comparing them, A is", "length"),                              # cut off: never concluded
        ("<think>Maybe A, maybe B; hard to say.</think>", "stop"),              # the trace itself hedges
        (Answer("", reasoning="Both are fine but B is cleaner. B."), "stop"),   # the server's trace: read
        (Answer("", reasoning="A is cleaner, so the answer is"), "length"))]    # the server cut it off
    assert {r.get("unread") for r in rows} == {"reasoning-only"}
    assert rows[4]["reasoning"] == "Both are fine but B is cleaner. B."  # kept apart from raw
    assert read_traces([(r, ITEM) for r in rows]) == 2
    assert [r["label"] for r in rows] == ["B", None, None, None, "B", None]
    assert [r.get("read_by") for r in rows] == ["reasoning", None, None, None, "reasoning", None]
    assert rows[0]["unread_by_rules"] == "reasoning-only" and rows[0]["parsed"] is True
