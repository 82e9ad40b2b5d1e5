"""Bad input to ``omniaudit build preference``.

Every rejected file ends with exit status 2 and one message on stderr that names the file, the row (1-based data
row), the column and the value found; the output folder is not created (or, when it existed, is left untouched) and
no temporary folder is left beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import pandas as pd
import pytest
from huggingface_hub import constants

from omniaudit.cli import main
from omniaudit.data_builders.hub import HubUnavailable
from omniaudit.data_builders.preference import build_preference_dataset
from omniaudit.data_builders.preference.read import COLUMNS
from omniaudit.errors import InputError

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A generic layout: every canonical column renamed, so only --columns makes the file readable.
GENERIC = {"name": "clip", "model1": "gen_a", "a1": "text_a", "model2": "gen_b", "a2": "text_b",
           "preference": "label"}
GENERIC_ARGS = ["--columns", *(f"{canon}={col}" for canon, col in GENERIC.items())]


# --------------------------------------------------------------------------------------------------------- helpers
def unwrap(text: str) -> str:
    """The CLI prints through a rich Console that hard-wraps at the console width (80 when not a terminal) and may
    colour; undo both so messages can be matched as one line."""
    return ANSI.sub("", text).replace("\n", "")


def build(capsys, data: Path | str, out: Path, *extra: str) -> tuple[int, str, str]:
    """Run ``omniaudit build preference`` in-process: (exit status, stdout, unwrapped stderr)."""
    rc = main(["build", "preference", "--data", str(data), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return rc, captured.out, unwrap(captured.err)


def leftovers(folder: Path) -> list[str]:
    """Hidden entries (the atomic writer's ``.NAME.tmp-*`` / ``.NAME.old-*`` folders) left in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def assert_rejected(rc: int, err: str, out: Path, *fragments: str) -> None:
    assert rc == 2
    assert err.startswith("error: ")
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert not out.exists()
    assert leftovers(out.parent) == []


def write_csv(tmp_path: Path, df: pd.DataFrame, name: str = "bad.csv") -> Path:
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def with_value(df: pd.DataFrame, row: int, column: str, value: object) -> pd.DataFrame:
    """A copy of ``df`` with data row ``row`` (1-based) of ``column`` set to ``value``."""
    df = df.copy()
    df.loc[df.index[row - 1], column] = value
    return df


# --------------------------------------------------------------------------------------------------------- CSV rows
@pytest.mark.parametrize("row", [1, 7, 600])
def test_bad_preference_value_names_file_row_column_value(capsys, tmp_path, small_raw, row):
    path = write_csv(tmp_path, with_value(small_raw, row, "preference", "b"))
    out = tmp_path / "out"
    rc, stdout, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), f"row {row}:", "column 'preference'", "expected one of a1, a2, same",
                    "(found 'b')")
    assert stdout == ""


@pytest.mark.parametrize("value", ["", "   "])
def test_empty_a2_names_file_row_column_value(capsys, tmp_path, small_raw, value):
    path = write_csv(tmp_path, with_value(small_raw, 42, "a2", value))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "row 42:", "column 'a2'", "expected a non-empty string",
                    f"(found {value!r})")


def test_first_bad_row_is_reported(capsys, tmp_path, small_raw):
    df = with_value(with_value(small_raw, 30, "model1", ""), 12, "preference", "tie")
    out = tmp_path / "out"
    rc, _, err = build(capsys, write_csv(tmp_path, df), out)
    assert_rejected(rc, err, out, "row 12:", "column 'preference'", "(found 'tie')")
    assert "row 30" not in err


@pytest.mark.parametrize("column", ["model2", "preference"])
def test_missing_column_is_listed(capsys, tmp_path, small_raw, column):
    path = write_csv(tmp_path, small_raw.drop(columns=[column]))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), f"missing column(s) {column};", "the file has [")


def test_header_only_csv_has_no_rows(capsys, tmp_path):
    path = tmp_path / "header.csv"
    path.write_text(",".join(COLUMNS) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "no rows")


def test_file_not_found(capsys, tmp_path):
    path = tmp_path / "nowhere.csv"
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "file not found")


def test_unsupported_extension(capsys, tmp_path, small_raw):
    path = write_csv(tmp_path, small_raw, "pairs.txt")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "unsupported file type", "(found '.txt')")


def test_api_raises_located_input_error_and_cli_prints_it(capsys, tmp_path, small_raw):
    """The Python API raises the same located error the CLI prints (file, row, column, value as attributes)."""
    path = write_csv(tmp_path, with_value(small_raw, 9, "preference", "b"))
    out = tmp_path / "out"
    with pytest.raises(InputError) as info:
        build_preference_dataset(out, path)
    exc = info.value
    assert (Path(exc.file), exc.row, exc.column, exc.value) == (path, 9, "preference", "b")
    assert str(exc) == f"{path}:row 9: column 'preference': expected one of a1, a2, same (found 'b')"
    assert not out.exists()
    assert leftovers(tmp_path) == []

    rc, _, err = build(capsys, path, out)
    assert rc == 2
    assert err.strip() == f"error: {exc}"


# ------------------------------------------------------------------------------------------------------------ JSONL
@pytest.mark.parametrize("line", [1, 5, 600])
def test_invalid_json_line_is_reported(capsys, tmp_path, small_raw, line):
    path = write_jsonl(tmp_path / "pairs.jsonl", small_raw.to_dict("records"))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[line - 1] = lines[line - 1][:40] + "\n"  # truncated object
    path.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), f"row {line}:", "invalid JSON")


def test_jsonl_line_that_is_not_an_object(capsys, tmp_path, small_raw):
    records = small_raw.head(20).to_dict("records")
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join((json.dumps(r) if i != 2 else "[1, 2]") + "\n" for i, r in enumerate(records)),
                    encoding="utf-8")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "row 3:", "expected a JSON object per line", "(found [1, 2])")


def test_generic_jsonl_with_column_mapping_builds(capsys, tmp_path, small_raw):
    path = write_jsonl(tmp_path / "generic.jsonl", small_raw.rename(columns=GENERIC).to_dict("records"))
    out = tmp_path / "out"
    rc, stdout, err = build(capsys, path, out, *GENERIC_ARGS)
    assert rc == 0, err
    assert f"dataset written to {out}" in stdout
    assert leftovers(tmp_path) == []
    ds = datasets.load_dataset(str(out), "pairs", split="train")
    assert ds.num_rows == len(small_raw)
    assert set(COLUMNS) <= set(ds.column_names)
    assert not set(GENERIC.values()) & set(ds.column_names)
    assert ds["name"] == small_raw["name"].tolist()
    assert ds["preference"] == small_raw["preference"].tolist()


def test_generic_file_without_mapping_lists_every_missing_column(capsys, tmp_path, small_raw):
    path = write_jsonl(tmp_path / "generic.jsonl", small_raw.rename(columns=GENERIC).head(10).to_dict("records"))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "missing column(s) name, model1, a1, model2, a2, preference;")


def test_mapping_to_a_missing_column(capsys, tmp_path, small_raw):
    path = write_jsonl(tmp_path / "generic.jsonl", small_raw.rename(columns=GENERIC).head(10).to_dict("records"))
    out = tmp_path / "out"
    args = [a for a in GENERIC_ARGS if a != "preference=label"] + ["preference=verdict"]
    rc, _, err = build(capsys, path, out, *args)
    assert_rejected(rc, err, out, str(path), "missing column(s) preference (mapped to 'verdict')", "'label'")


def test_bad_value_in_mapped_column_names_the_files_column(capsys, tmp_path, small_raw):
    df = with_value(small_raw.rename(columns=GENERIC), 3, "label", "b")
    path = write_jsonl(tmp_path / "generic.jsonl", df.to_dict("records"))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out, *GENERIC_ARGS)
    assert_rejected(rc, err, out, str(path), "row 3:", "column 'label'", "(found 'b')")


@pytest.mark.parametrize("item", ["model1", "model1=", "=gen_a", "winner=label"])
def test_malformed_column_mapping(capsys, tmp_path, small_raw, item):
    path = write_csv(tmp_path, small_raw.head(10), "pairs.csv")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out, "--columns", item)
    assert_rejected(rc, err, out, "column mapping must look like CANONICAL=COLUMN", f"(found {item!r})")


# ---------------------------------------------------------------------------------------------------------- Parquet
def test_parquet_input_builds(capsys, tmp_path, small_raw):
    path = tmp_path / "pairs.parquet"
    small_raw.to_parquet(path, index=False)
    out = tmp_path / "out"
    rc, stdout, err = build(capsys, path, out)
    assert rc == 0, err
    assert f"dataset written to {out}" in stdout
    ds = datasets.load_dataset(str(out), "pairs", split="train")
    assert ds.num_rows == len(small_raw)
    assert ds["a2"] == small_raw["a2"].tolist()
    assert leftovers(tmp_path) == []


def test_parquet_null_cell_names_row_and_column(capsys, tmp_path, small_raw):
    path = tmp_path / "pairs.parquet"
    with_value(small_raw, 17, "a1", None).to_parquet(path, index=False)
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "row 17:", "column 'a1'", "expected a non-empty string")


# --------------------------------------------------------------------------------------------- existing out folder
def test_failing_build_leaves_existing_out_folder_untouched(capsys, tmp_path, small_raw):
    out = tmp_path / "out"
    out.mkdir()
    (out / "marker.txt").write_text("keep me", encoding="utf-8")
    path = write_csv(tmp_path, with_value(small_raw, 5, "preference", "b"))
    rc, _, err = build(capsys, path, out, "--overwrite")  # even allowed to replace it, a failed build keeps it
    assert rc == 2
    assert "row 5:" in err
    assert sorted(p.name for p in out.iterdir()) == ["marker.txt"]
    assert (out / "marker.txt").read_text(encoding="utf-8") == "keep me"
    assert leftovers(tmp_path) == []


def test_successful_build_replaces_existing_out_folder(capsys, tmp_path, emoprefer_csv):
    out = tmp_path / "out"
    out.mkdir()
    (out / "marker.txt").write_text("stale", encoding="utf-8")
    rc, _, err = build(capsys, emoprefer_csv, out, "--overwrite")  # without it, a foreign folder is refused
    assert rc == 0, err
    assert not (out / "marker.txt").exists()
    assert (out / "README.md").is_file()
    assert (out / "pairs" / "train-00000-of-00001.parquet").is_file()
    assert leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------------------------ Hub push
def test_push_to_hub_offline_fails_fast_after_writing_the_dataset(capsys, tmp_path, emoprefer_csv, small_raw):
    """build.py writes the dataset first, then pushes: offline, the push fails with rc 2 and a message naming
    HF_HUB_OFFLINE, while the complete dataset stays in the out folder (the message says how to push it later)."""
    assert constants.HF_HUB_OFFLINE  # conftest sets HF_HUB_OFFLINE=1 before huggingface_hub is imported
    out = tmp_path / "out"
    rc, stdout, err = build(capsys, emoprefer_csv, out, "--push-to-hub", "user/repo")
    assert rc == 2
    assert "HF_HUB_OFFLINE" in err
    assert "cannot push to 'user/repo'" in err
    assert f"The dataset is complete in {out}" in err
    assert f"omniaudit push {out} user/repo" in err
    assert "pushed to" not in stdout
    assert (out / "README.md").is_file()
    ds = datasets.load_dataset(str(out), "pairs", split="train")
    assert ds.num_rows == len(small_raw)
    assert leftovers(tmp_path) == []


def test_push_to_hub_offline_python_api(tmp_path, emoprefer_csv):
    out = tmp_path / "out"
    with pytest.raises(HubUnavailable, match="HF_HUB_OFFLINE"):
        build_preference_dataset(out, emoprefer_csv, push_repo="user/repo")
    assert (out / "pairs" / "train-00000-of-00001.parquet").is_file()


def test_push_to_hub_with_bad_data_writes_nothing(capsys, tmp_path, small_raw):
    path = write_csv(tmp_path, with_value(small_raw, 2, "preference", "b"))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out, "--push-to-hub", "user/repo")
    assert_rejected(rc, err, out, "row 2:", "(found 'b')")
    assert "HF_HUB_OFFLINE" not in err


# ------------------------------------------------------------------------------ robustness: unusual files and values
def test_empty_csv_file_is_an_input_error(capsys, tmp_path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path))


def test_corrupt_parquet_is_an_input_error(capsys, tmp_path):
    path = tmp_path / "pairs.parquet"
    path.write_bytes(b"not a parquet file")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path))


def test_non_utf8_jsonl_is_an_input_error(capsys, tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_bytes(b'{"name": "caf\xe9"}\n')
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path))


def test_fewer_rows_than_folds_is_an_input_error(capsys, tmp_path, small_raw):
    path = write_csv(tmp_path, small_raw.head(3), "few.csv")
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path))


def test_jsonl_rows_are_lines_after_a_blank_line(capsys, tmp_path, small_raw):
    records = with_value(small_raw.head(10), 6, "preference", "b").to_dict("records")
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n" + "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")  # record 6 = line 7
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, "row 7:", "(found 'b')")


def test_value_that_looks_like_closing_markup(capsys, tmp_path, small_raw):
    path = write_csv(tmp_path, with_value(small_raw, 4, "preference", "[/b]"))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, "row 4:", "(found '[/b]')")


@pytest.mark.parametrize("folder, value", [("data", "[bold]b"), ("runs[v2]", "b")])
def test_brackets_in_value_or_path_are_printed_verbatim(capsys, tmp_path, small_raw, folder, value):
    (tmp_path / folder).mkdir()
    path = write_csv(tmp_path / folder, with_value(small_raw, 4, "preference", value))
    out = tmp_path / "out"
    rc, _, err = build(capsys, path, out)
    assert_rejected(rc, err, out, str(path), "row 4:", f"(found {value!r})")
