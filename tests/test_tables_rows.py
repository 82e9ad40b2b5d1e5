"""Rows of input tables that are not what they claim: a JSONL line that is a list or a string instead of an object is
refused naming its file and row; rows of a preference pairs file that repeat an earlier row exactly are kept, with a
warning naming the file, how many and which rows."""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

from omniaudit.errors import InputError
from omniaudit.tables import read_records


@pytest.mark.parametrize(("line", "kind"), [("[1, 2]", "a list (JSON array)"), ('"text"', "a string"),
                                            ("3.5", "a number"), ("null", "null"), ("true", "true (a JSON boolean)")])
def test_a_json_list_row_is_refused_naming_the_row(tmp_path, line, kind):
    path = tmp_path / "predictions.jsonl"
    path.write_text('{"id": "a", "raw": "A"}\n\n' + line + '\n{"id": "b", "raw": "B"}\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_records(path)
    assert (info.value.file, info.value.row) == (path, 3)
    assert str(info.value).startswith(f"{path}:row 3: expected a JSON object per line, got {kind}")


def test_a_long_non_object_row_is_quoted_shortened(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(list(range(200))) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1: .*got a list \(JSON array\) \(found '\[0, 1, 2, .*\.\.\.'\)$"):
        read_records(path)


def test_a_json_list_row_of_a_preference_judge_file_is_refused_naming_the_row(tmp_path, capsys):
    from omniaudit.cli import main
    from omniaudit.evaluation.preference.judge_files import read_judge_file

    path = tmp_path / "judge.jsonl"
    path.write_text('{"name": "p1", "order": "ab", "p_a1": 0.5}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"judge.jsonl:row 2: expected a JSON object per line, got a list"):
        read_judge_file(path)
    assert main(["audit", "preference", "--pairs", "40", "--predictions", str(path), "--n-resamples", "20",
                 "--no-source-classifier", "--no-controls", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "row 2: expected a JSON object per line, got a list" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_duplicated_csv_rows_are_warned(tmp_path, small_raw):
    from omniaudit.data_builders.preference.read import read_preference_table

    raw = small_raw.head(30)
    copies = pd.concat([raw, raw.iloc[[4, 7]], raw.iloc[[4]]], ignore_index=True)  # rows 31, 32, 33 repeat 5, 8, 5
    path = tmp_path / "pairs.csv"
    copies.to_csv(path, index=False)
    with pytest.warns(UserWarning) as caught:
        pairs = read_preference_table(path)
    messages = [str(w.message) for w in caught if "repeat an earlier row" in str(w.message)]
    assert messages == [f"{path}: 3 row(s) repeat an earlier row exactly (row 31 = row 5, row 32 = row 8, row 33 = "
                        "row 5); each copy is kept as a pair of its own (id NAME#k), in the fold of its first copy "
                        "and resampled with it as one unit, and counted under 'Duplicate pairs' on the card; remove "
                        "the copies from the file if they are not meant to be there"]
    assert len(pairs) == 33  # kept, as the warning says

    raw.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_preference_table(path)  # no copies, no warning


def test_duplicated_jsonl_rows_are_warned_with_their_line_numbers(tmp_path, small_raw):
    from omniaudit.data_builders.preference.read import warn_repeated_rows

    records = small_raw.head(3).to_dict("records")
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n\n" for r in [*records, records[1]]), encoding="utf-8")
    raw, rows = read_records(path)
    with pytest.warns(UserWarning, match=r"1 row\(s\) repeat an earlier row exactly \(row 7 = row 3\)"):
        assert warn_repeated_rows(raw, rows, path) == 1
    nested = pd.DataFrame({"a": [{"x": [1]}, {"x": [1]}, {"x": [2]}]})  # unhashable cells are compared too
    with pytest.warns(UserWarning, match=r"\(row 2 = row 1\)"):
        assert warn_repeated_rows(nested, [1, 2, 3], path) == 1


def test_many_duplicated_rows_are_counted_and_the_first_five_named(tmp_path, small_raw):
    from omniaudit.data_builders.preference.read import warn_repeated_rows

    raw = pd.concat([small_raw.head(2)] * 5, ignore_index=True)
    with pytest.warns(UserWarning, match=r": 8 row\(s\) .*\(row 3 = row 1, row 4 = row 2, row 5 = row 1, row 6 = "
                                         r"row 2, row 7 = row 1 and 3 more\)"):
        assert warn_repeated_rows(raw, list(range(1, 11)), tmp_path / "x.csv") == 8
