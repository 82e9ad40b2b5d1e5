"""A predictions row whose own fields contradict its run's provenance, or each other, is refused naming the row."""

import json

import pandas as pd
import pytest

from omniaudit.errors import InputError
from omniaudit.predictions import check_predictions
from omniaudit.runners.run import run_judge


@pytest.fixture(scope="module")
def rows(protocol_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("rows") / "p.jsonl"
    run_judge(protocol_dataset, "reference", "scripted:random", out, runs=2, temperature=0.7, seed=5)
    return [json.loads(line) for line in out.read_text().splitlines()]


def _check(rows, protocol_dataset):
    return check_predictions(pd.DataFrame(rows), "p.jsonl", protocol_dataset, ("reference",))


def test_a_whole_run_passes(rows, protocol_dataset):
    assert _check(rows, protocol_dataset).known


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"temperature": 0.0}, "temperature", "contradicts the run's provenance"),
    ({"top_p": 0.5}, "top_p", "contradicts the run's provenance"),
    ({"run": 2}, "run", "is not one of the run's 2 runs"),
    ({"run": -1}, "run", "is not one of the run's 2 runs"),
    ({"seed": 99}, "seed", "seed 5 \\+ run"),
    ({"label": None, "parsed": True}, "parsed", "contradicts label"),
])
def test_a_contradicting_row_is_refused_naming_it(rows, protocol_dataset, change, field, message):
    edited = [dict(r) for r in rows]
    edited[3].update(change)
    with pytest.raises(InputError, match=message) as err:
        _check(edited, protocol_dataset)
    assert "row 4" in str(err.value) and field in str(err.value)


def test_an_unparsed_row_keeps_its_null_label(rows, protocol_dataset):
    edited = [dict(r) for r in rows]
    edited[0].update(label="A" if edited[0]["label"] is None else edited[0]["label"], parsed=False)
    with pytest.raises(InputError, match="parsed False contradicts label"):
        _check(edited, protocol_dataset)
