"""Option probabilities and the answer text must agree, and the text wins: a logprob-returning server whose text
names no option, or the other one, never has its probabilities read as the model's answer."""

from __future__ import annotations

import json

import pytest
from chat_server import ChatServer

from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset
from omniaudit.evaluation.preference.judge_files import read_judge_file
from omniaudit.runners.reading import agreeing_probs
from omniaudit.runners.run import run_judge

TEXTS = ["A or B? Neither is accurate.", "B", "Description B is more faithful.", "A"]


def _reply(body: dict) -> str:
    """The four kinds of answer in turn, by the pair's number: none named, B, B in prose, A."""
    text = body["messages"][-1]["content"]
    text = text if isinstance(text, str) else text[-1]["text"]
    return TEXTS[sum(map(ord, text)) % 4]


def _always_a(body: dict, answer: str) -> dict[str, float]:
    return {"A": 0.993, "B": 0.007}


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return build_preference_dataset(tmp_path_factory.mktemp("pref") / "d", spec=SyntheticSpec(n_pairs=20, seed=3))


def test_the_text_wins_over_probabilities_it_contradicts(pairs, tmp_path):
    out = tmp_path / "pred.jsonl"
    with ChatServer(answer=_reply, probs=_always_a) as server:
        counts = run_judge(pairs, "judge", f"openai:m@{server.url}", out, cache_dir=tmp_path / "c", min_usable=0)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    for r in rows:
        if r["label"] is None:  # the text names no option: no answer, whatever the probabilities say
            assert r["option_probs"] is None and "probs_dropped" not in r or r["probs_dropped"].startswith("unread")
        elif r["label"] == "B":  # the text names B: never read as A
            assert r["option_probs"] is None and r.get("probs_dropped", "conflict").startswith("conflict")
        else:
            assert r["option_probs"]["A"] == pytest.approx(0.993)
    assert {r["label"] for r in rows} == {None, "A", "B"}
    assert counts["probs_dropped"] == sum("probs_dropped" in r for r in rows) > 0  # the bare "B": flagged
    assert counts["with_probs"] == sum(r["label"] == "A" for r in rows)
    table = read_judge_file(out, dataset=pairs)
    by_id = {r["id"]: r for r in rows}
    for key, order, p_a1 in table[["key", "order", "p_a1"]].itertuples(index=False):
        r = by_id[f"{key}/{order}"]
        a_is_a1 = order == "ab"
        if r["label"] is None:
            assert p_a1 == 0.5  # no preference for that order
        else:
            assert (p_a1 > 0.5) == ((r["label"] == "A") == a_is_a1)


def test_agreeing_probs_keeps_scored_options_and_agreeing_text():
    probs = {"A": 0.9, "B": 0.1}
    assert agreeing_probs("", "A", probs) == (probs, None)  # scored without text
    assert agreeing_probs("a", "A", probs) == (probs, None)  # the text is just the option
    assert agreeing_probs("I pick A.", "A", probs) == (probs, None)
    assert agreeing_probs("I pick B.", "B", probs)[0] is None
    assert agreeing_probs("Neither.", None, probs)[1].startswith("unread")
    assert agreeing_probs("Neither.", None, None) == (None, None)


def test_an_outside_file_whose_text_contradicts_its_probabilities_is_read_by_its_text(pairs, tmp_path):
    """A predictions file from elsewhere (probabilities and text disagreeing) is read the same way."""
    from omniaudit.data_builders.hub import load_config

    items = load_config(pairs, "judge", columns=["id", "order"])
    path = tmp_path / "outside.jsonl"
    path.write_text("".join(json.dumps({"id": i, "order": o, "raw": "B is better", "label": "B", "parsed": True,
                                        "option_probs": {"A": 0.99, "B": 0.01}}) + "\n"
                            for i, o in zip(items["id"], items["order"], strict=True)))
    table = read_judge_file(path)
    assert set(table["source"]) == {"label"}
    assert ((table["order"] == "ab") == (table["p_a1"] < 0.5)).all()  # B: a2 in ab, a1 in ba
