"""Bookkeeping: judge modes (§V-D) need a judge that answers. The inputs that showed it: a judge that
parsed 0 of its answers, or always gives one label, was labelled "engaged" (it "follows" no wrong label)."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.evaluation.protocols import modes as pm


def _judge(dataset, tmp_path, spec, name):
    out = tmp_path / f"{name}.jsonl"
    assert main(["judge", "--dataset", str(dataset), "--config", "reference", "--judge", spec, "--out",
                 str(out)]) == 0
    return out


def test_a_judge_that_parses_nothing_or_gives_one_label_gets_no_mode(protocol_dataset, tmp_path):
    always = _judge(protocol_dataset, tmp_path, "scripted:always-a", "always")
    oracle = _judge(protocol_dataset, tmp_path, "scripted:copy-reference", "copier")
    rows = [json.loads(line) for line in always.read_text().splitlines()]
    silent = tmp_path / "silent.jsonl"  # the same run, every answer unparsed (0 of N parsed)
    silent.write_text("".join(json.dumps({**r, "raw": "I cannot tell.", "label": None, "parsed": False}) + "\n"
                              for r in rows))
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", f"always={always}",
                 f"silent={silent}", f"copier={oracle}", "--n-resamples", "50", "--out", str(tmp_path / "a")]) == 0
    result = json.loads((tmp_path / "a" / "audit.json").read_text())
    modes = result["modes"]
    attributes = sorted(modes["always"]["labels"])
    assert attributes
    for attribute in attributes:
        # before: both "engaged" (a wrong label followed at rate 0)
        assert modes["silent"]["labels"][attribute]["mode"] == pm.NOT_ANSWERING
        assert modes["silent"]["labels"][attribute]["answers"]["parse_rate"] == 0.0
        assert modes["always"]["labels"][attribute]["mode"] == pm.CONSTANT
        assert modes["always"]["labels"][attribute]["answers"]["entropy"] == 0.0
        assert modes["always"]["labels"][attribute]["answers"]["top_share"] == 1.0
        # a judge that answers with varied labels is read as before (copy-reference follows the wrong reference)
        assert modes["copier"]["labels"][attribute]["mode"] == "label-following"
    assert modes["always"]["thresholds"] == {"min_parse_rate": pm.MIN_PARSE_RATE,
                                             "min_label_entropy": pm.MIN_LABEL_ENTROPY}
    report = (tmp_path / "a" / "report.md").read_text()
    assert f"a parse rate of at least {pm.MIN_PARSE_RATE} (else not answering)" in report
    assert "parse rate 0.00" in report and "label entropy 0.00" in report


def _items():
    rows = []
    for c, gold in enumerate(["angry", "happy", "sad", "angry"]):
        rows.append({"id": f"cc/{c}", "config": "cue_conflict", "attribute": "emotion", "task": None,
                     "options": ["angry", "happy", "sad"], "k": 3, "gold": gold})
    for t in range(4):
        for order in ("AB", "BA"):
            rows.append({"id": f"pw/{t}/{order}", "config": "pairwise", "attribute": None, "task": "cleanness",
                         "format": "concat", "options": ["A", "B"], "k": 2, "gold": "A"})
    return pd.DataFrame(rows)


def test_profile_and_gates_by_hand():
    items = _items()
    labels = {"cc/0": "angry", "cc/1": "angry", "cc/2": "angry", "cc/3": "happy"}
    labels |= {f"pw/{t}/{o}": ("A" if t < 1 else None) for t in range(4) for o in ("AB", "BA")}
    profile = pm.answer_profile(items, pd.DataFrame({"id": list(labels), "label": list(labels.values())}))
    emotion = profile["labels"]["emotion"]
    p = np.array([3, 1]) / 4
    assert emotion["entropy"] == pytest.approx(-(p * np.log2(p)).sum() / np.log2(3))  # 0.51: not constant
    assert (emotion["parse_rate"], emotion["top_label"], emotion["top_share"]) == (1.0, "angry", 0.75)
    assert profile["pairwise"]["concat"]["cleanness"] == {"n": 8, "parse_rate": 0.25}
    assert pm.gate(emotion) is None and pm.gate({"parse_rate": 0.49}) == pm.NOT_ANSWERING
    assert pm.gate({"parse_rate": 1.0, "entropy": 0.19}) == pm.CONSTANT
    assert pm.gate({"parse_rate": 1.0, "entropy": 0.0}, with_entropy=False) is None  # one slot: the lock reads it
    res = {"lock": {"concat": {"cleanness": {"value": 1.0}}},
           "gold_aligned": {"concat": {"cleanness": {"value": 0.5}}}}
    modes = pm.judge_modes(res, {"emotion": 3}, profile)
    assert modes["pairwise"]["concat"] == {"tasks": {"cleanness": pm.NOT_ANSWERING}, "mode": pm.NOT_ANSWERING}
    assert pm.judge_modes(res, {"emotion": 3})["pairwise"]["concat"]["mode"] == "fully locked"  # no profile: no gate
