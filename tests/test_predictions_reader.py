"""One reader for every audit's predictions files: the records typed, row numbers true to the file, the same checks
and the same recorded sampling whichever audit reads them."""

import json

import pandas as pd
import pytest

from omniaudit.errors import InputError
from omniaudit.predictions import read_prediction_file
from omniaudit.runners.run import run_judge
from omniaudit.runs import merge_sampling, sampling_sentence


def _write(path, rows, blank_after=()):
    lines = []
    for i, row in enumerate(rows):
        lines.append(json.dumps(row))
        if i in blank_after:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_judge_run_is_read_typed(protocol_dataset, tmp_path):
    out = tmp_path / "p.jsonl"
    run_judge(protocol_dataset, "reference", "scripted:random", out, runs=2, temperature=0.7, seed=5)
    read = read_prediction_file(out, protocol_dataset, ("reference",), needs=("label", "raw"),
                                known=pd.read_json(out, lines=True)["id"].astype(str))
    n = len(read.records)
    assert read.key == "id" and read.provenance.known and read.answer_column == "raw"
    assert len(read.ids) == len(read.answers) == len(read.rows) == n and read.rows == list(range(1, n + 1))
    assert sorted(set(read.run_numbers())) == [0, 1] and set(read.runs) == {"0", "1"}
    assert read.sampling["temperature"] == 0.7 and read.sampling["seed"] == [5, 6]
    assert all(label is None or isinstance(label, str) for label in read.labels())


def test_row_numbers_are_the_lines_of_the_file(tmp_path):
    path = _write(tmp_path / "p.jsonl", [{"id": "a", "raw": "x"}, {"id": "b", "raw": "y"}, {"id": "zz", "raw": "z"}],
                  blank_after=(0, 1))
    read = read_prediction_file(path, None, ("c",))
    assert read.rows == [1, 3, 5]
    with pytest.raises(InputError, match=r"p\.jsonl:row 5: column 'id': id not in the dataset \(1 unknown id"):
        read_prediction_file(path, None, ("c",), known=["a", "b"])


@pytest.mark.parametrize(("rows", "match"), [
    ([{"answer": "x"}], "expected what the audit reads; the file has \\['answer'\\]"),
    ([{"id": "a", "answer": "x"}], "expected what the audit reads"),
    ([{"id": "a", "raw": "x", "run": None}], "row 1: column 'run': expected a run"),
])
def test_a_file_the_audit_cannot_read_is_refused_with_one_line(tmp_path, rows, match):
    path = _write(tmp_path / "p.jsonl", rows)
    with pytest.raises(InputError, match=match):
        read_prediction_file(path, None, ("c",), needs=("raw", "label"), expected="expected what the audit reads")


def test_a_run_that_is_no_index_is_refused_naming_its_row(tmp_path):
    path = _write(tmp_path / "p.jsonl", [{"id": "a", "raw": "x", "run": 0}, {"id": "a", "raw": "x", "run": "two"}])
    read = read_prediction_file(path, None, ("c",))
    with pytest.raises(InputError, match="row 2: column 'run': expected a run index"):
        read.run_numbers()


def test_labels_are_none_where_nothing_was_read(tmp_path):
    path = _write(tmp_path / "p.jsonl", [{"id": "a", "label": " Yes ", "parsed": True},
                                         {"id": "b", "label": "No", "parsed": False},
                                         {"id": "c", "label": None, "parsed": True},
                                         {"id": "d", "label": "", "parsed": True}])
    assert read_prediction_file(path, None, ("c",)).labels() == ["Yes", None, None, None]


def test_csv_and_jsonl_of_the_same_rows_read_alike(tmp_path):
    rows = [{"id": "a", "response": "yes", "temperature": 0.7, "seed": 1},
            {"id": "b", "response": "", "temperature": 0.7, "seed": 2}]
    jsonl = read_prediction_file(_write(tmp_path / "p.jsonl", rows), None, ("c",))
    pd.DataFrame(rows).to_csv(tmp_path / "p.csv", index=False)
    csv = read_prediction_file(tmp_path / "p.csv", None, ("c",))
    assert jsonl.answers == csv.answers == ["yes", ""] and list(jsonl.ids) == list(csv.ids) == ["a", "b"]
    assert jsonl.sampling == {"temperature": 0.7, "seed": [1, 2]}


def test_sampling_of_several_files_merges_into_one_record():
    merged = merge_sampling([{"temperature": 0.7, "seed": [0, 1]}, {"temperature": 0.7, "seed": 2}])
    assert merged == {"temperature": 0.7, "seed": [0, 1, 2]}
    assert merge_sampling([]) == {}
    assert sampling_sentence(merged) == "temperature 0.7, seed 0/1/2"
