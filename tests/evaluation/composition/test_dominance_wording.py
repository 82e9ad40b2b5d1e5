"""The red team's cases, through the scorecard's own path (run_composition_audit, then the composition entry's
``measures`` and ``coverage``, as the scorecard runner calls them, and the card's family decision): a correct model
that words its right answers otherwise than the bare gold is never flagged for modality_dominance, and what the
readers cannot grade is counted as unparsed and named in the measure's note.

Before (default build, no judge): "It is red." / "Answer: red" / "красный" / "<think>...</think>\\nred" for gold
"red" read as wrong; the wrong answer did not move under ``text_only`` (the model says the same), so it read as text
dominance: FLAGGED 1.00 [0.85, 1.00] "mostly text", with the card's composition "parsed 100%"; a correct model half
of whose replies are cut-off <think> traces: FLAGGED 0.80 [0.67, 0.93], no warning.
"""

import hashlib
import json

import numpy as np
import pytest

from omniaudit.audits import get
from omniaudit.data_builders.composition import build_composition_dataset
from omniaudit.data_builders.hub import load_config
from omniaudit.evaluation.composition.audit import run_composition_audit
from omniaudit.evaluation.composition.entry import PARAMS
from omniaudit.evaluation.scorecard.rules import decide_family
from omniaudit.evaluation.scorecard.simulate import card_family
from omniaudit.evaluation.scorecard.simulate_dominance import answer_runs, dominance_structure
from omniaudit.results import AuditRun

RUSSIAN = {"red": "красный", "blue": "синий", "green": "зелёный"}  # no reader glosses them yet: ungraded


def _share(key: str) -> float:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 2 ** 32


WORDINGS = {
    "sentence": lambda gold, item: f"It is {gold}.",
    "answer": lambda gold, item: f"Answer: {gold}",
    "trace": lambda gold, item: f"<think>The square looks {gold}, or is it another colour?</think>\n{gold}",
    "mixed": lambda gold, item: [f"It is {gold}.", f"**Answer:** {gold}", RUSSIAN.get(gold, gold),
                                 f"<think>hm</think>\n{gold}"][int(4 * _share(item))],
    "half_cut": lambda gold, item: (f"<think>I see it.</think>\n{gold}" if _share(item) < 0.5 else
                                    "<think>Let me look at the picture. The square in the middle seems to be"),
}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = build_composition_dataset(tmp_path_factory.mktemp("wording") / "ds",
                                    n_synthetic=PARAMS["small"]["n_synthetic"])
    samples = load_config(out, "samples", columns=["id", "answer"])
    ablations = load_config(out, "ablations", columns=["id", "sample_id"])
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    items = {**gold, **{a: gold[s] for a, s in zip(ablations["id"], ablations["sample_id"], strict=True)}}
    return out, items


def _audit(folder, dataset, name: str, answers: list[dict]):
    """Two runs of ``answers`` (item id -> reply) audited as the scorecard audits a model: the audit, the card's
    modality_dominance record, the runner's parse share (``coverage``) and audit.json."""
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"id": i, "raw": a, "run": r}) + "\n"
                            for r, run in enumerate(answers) for i, a in run.items()))
    out = run_composition_audit(folder / name, dataset, [f"{name}={path}"])
    entry = get("composition")
    measures = entry.measures(AuditRun("ran", out, dataset, {}, name))[0]
    record = decide_family(measures, family=card_family())["modality_dominance"][0]
    return record, entry.coverage(out), json.loads((out / "audit.json").read_text())


@pytest.mark.parametrize("wording", ["sentence", "answer", "trace"])
def test_a_correct_model_wording_its_answers_is_not_flagged(dataset, tmp_path, wording):
    ds, items = dataset
    run = {i: WORDINGS[wording](gold, i) for i, gold in items.items()}
    record, coverage, audit = _audit(tmp_path, ds, wording, [run, run])
    assert audit["accuracy"]["overall"]["mean"] == 100.0 and audit["failure_modes"]["overall"]["n_failures"] == 0
    assert record["verdict"] is None and not record["flagged"] and not record["measured"]  # no failure to decompose
    assert coverage == 1.0 and audit["grading"]["note"] is None  # every answer read: parsed 100%, rightly


def test_what_no_reader_reads_is_ungraded_counted_and_named(dataset, tmp_path):
    ds, items = dataset
    runs = {name: {i: WORDINGS[name](gold, i) for i, gold in items.items()} for name in ("mixed", "half_cut")}
    for name, run in runs.items():
        record, coverage, audit = _audit(tmp_path, ds, name, [run, run])
        unread = 2 * sum(a in RUSSIAN.values() or "</think>" not in a and a.startswith("<think>")
                         for a in run.values())
        grading = audit["grading"]
        assert grading["n_ungraded"] == unread > 0 and grading["n_rows"] == 2 * len(items)
        # the card's parse share counts them unparsed, so its low-parse warning (and --min-usable) sees them
        assert coverage == pytest.approx(1 - unread / (2 * len(items)))
        assert audit["accuracy"]["overall"]["mean"] == 100.0  # of the graded answers; none read as wrong
        assert audit["failure_modes"]["overall"]["n_failures"] == 0 and not record["flagged"]
        assert f"{unread} of {2 * len(items)} rows ungraded" in record["note"]
        # a grader reads what the readers cannot, not a cut-off trace (no hint where only traces are unread)
        assert record["note"].endswith("no grader; pass --grader SPEC") == (name == "mixed")
        assert (" only a reasoning trace" in record["note"]) == (name == "half_cut")


def test_a_planted_dominance_reads_the_same_in_sentences(dataset, tmp_path):
    """The readers read a sentence as its bare answer: a model whose failures the audio decides gives the same
    measure, value, null and clusters, bare or worded, so reading sentences costs the verdict no power."""
    ds, _ = dataset
    structure = dominance_structure(ds)
    tables = answer_runs(structure, "per_input", np.random.default_rng(3), {"modality": "audio", "effect": 0.5})
    bare = [dict(zip(t["id"], t["prediction"], strict=True)) for t in tables]
    worded = [{i: f"The answer is {a}." for i, a in run.items()} for run in bare]
    found = {name: _audit(tmp_path, ds, name, runs) for name, runs in (("bare", bare), ("worded", worded))}
    (b, _, audit_b), (w, coverage, audit_w) = found["bare"], found["worded"]
    assert audit_b["failure_modes"]["overall"]["n_failures"] > 0 and "mostly audio" in b["note"]
    assert coverage == 1.0 and audit_w["grading"]["n_ungraded"] == 0
    assert (w["value"], w["null"], w["clusters"], w["counts"], w["verdict"], w["note"]) == (
        b["value"], b["null"], b["clusters"], b["counts"], b["verdict"], b["note"])
