"""Flags spelled the same across the four audits, and the old spellings: each still works (same value, same dest)
and leaves one deprecation warning on stderr; the new spellings, and the builders' `--source`, warn about nothing.
Also `omniaudit audits` (the registry)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from omniaudit.audits import AUDITS
from omniaudit.cli import build_parser, main
from omniaudit.cli.common import DEPRECATED

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FAST = ["--n-resamples", "100", "--no-source-classifier", "--no-controls"]


def unwrap(text: str) -> str:
    return ANSI.sub("", text).replace("\n", "")


def warnings_in(err: str) -> list[tuple[str, str]]:
    """(old, new) of each deprecation warning; each is one line (printed without hard wrapping)."""
    return re.findall(r"^warning: (--[\w-]+) is deprecated; use (--[\w-]+)", ANSI.sub("", err), re.MULTILINE)


# (command, old spelling, new spelling, dest, value)
RENAMED = [
    (["audit", "preference"], "--judges", "--predictions", "predictions", ["a.jsonl", "B=b.csv"]),
    (["audit", "preference"], "--seed", "--bootstrap-seed", "bootstrap_seed", ["7"]),
    (["audit", "interventions", "--dataset", "d", "--predictions", "p"], "--seed", "--bootstrap-seed",
     "bootstrap_seed", ["7"]),
    (["audit", "protocols", "--dataset", "d", "--predictions", "p"], "--seed", "--bootstrap-seed", "bootstrap_seed",
     ["7"]),
    (["audit", "composition", "--dataset", "d", "--predictions", "p"], "--judge", "--grader", "grader",
     ["scripted:oracle"]),
    (["report", "alignment-tax", "base=a"], "--seed", "--bootstrap-seed", "bootstrap_seed", ["7"]),
    (["run-protocols", "--dataset", "d"], "--judges", "--models", "models", ["scripted:oracle", "x=hf:m"]),
]


@pytest.mark.parametrize("command, old, new, dest, value", RENAMED,
                         ids=[f"{' '.join(r[0][:2])} {r[1]}" for r in RENAMED])
def test_old_spelling_parses_as_the_new_one_and_is_noted(command, old, new, dest, value):
    parser = build_parser()
    old_args = parser.parse_args([*command, old, *value, "--out", "o"])
    new_args = parser.parse_args([*command, new, *value, "--out", "o"])
    expected = int(value[0]) if dest == "bootstrap_seed" else value[0] if dest == "grader" else value
    assert getattr(old_args, dest) == getattr(new_args, dest) == expected
    assert getattr(old_args, DEPRECATED) == {old: f"{old} is deprecated; use {new}"}
    assert not hasattr(new_args, DEPRECATED)
    assert vars(old_args).keys() - {DEPRECATED} == vars(new_args).keys()  # no dest of the old name


def test_builders_seed_and_judge_sampling_seed_keep_their_names():
    parser = build_parser()
    for argv in (["build", "preference"], ["build", "interventions"], ["build", "protocols"],
                 ["build", "composition"], ["judge", "--dataset", "d", "--config", "c", "--judge", "scripted:oracle"],
                 ["run-protocols", "--dataset", "d", "--models", "scripted:oracle"]):
        args = parser.parse_args([*argv, "--seed", "5", "--out", "o"])
        assert args.seed == 5 and not hasattr(args, DEPRECATED), argv
    with pytest.raises(SystemExit):  # run-protocols' --seed samples; its bootstrap seed never had the old name
        parser.parse_args(["run-protocols", "--dataset", "d", "--models", "m", "--bootstrap-seed", "x", "--out", "o"])


@pytest.mark.parametrize("builder, dest", [("preference", "data"), ("interventions", "manifest"),
                                           ("protocols", "clips"), ("composition", "samples")])
def test_builders_take_source_and_their_own_spelling_without_warning(builder, dest):
    parser = build_parser()
    old = {"preference": "--data", "interventions": "--manifest", "protocols": "--clips",
           "composition": "--samples"}[builder]
    for flag in ("--source", old):
        args = parser.parse_args(["build", builder, flag, "in.jsonl", "--out", "o"])
        assert getattr(args, dest) == "in.jsonl" and not hasattr(args, DEPRECATED)


def test_audit_preference_data_dataset_and_source_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as info:
        main(["audit", "preference", "--dataset", "d", "--source", "s.csv", "--out", "o"])
    assert info.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------- through main()
def oracle_judge(path: Path, raw: pd.DataFrame) -> Path:
    binary = raw[raw["preference"] != "same"]
    path.write_text("".join(json.dumps({"name": n, "order": o, "p_a1": float(p == "a1")}) + "\n"
                            for n, p in zip(binary["name"], binary["preference"], strict=True) for o in ("ab", "ba")))
    return path


def test_audit_preference_old_and_new_spellings_give_the_same_audit(capsys, tmp_path, emoprefer_csv, small_raw):
    judge = oracle_judge(tmp_path / "oracle.jsonl", small_raw)
    old = ["--data", str(emoprefer_csv), "--judges", str(judge), "--seed", "3", "--seed", "4"]
    new = ["--source", str(emoprefer_csv), "--predictions", str(judge), "--bootstrap-seed", "4"]
    results = {}
    for name, flags in (("old", old), ("new", new)):
        assert main(["audit", "preference", *flags, *FAST, "--out", str(tmp_path / name)]) == 0
        captured = capsys.readouterr()
        assert "report:" in captured.out
        results[name] = (json.loads((tmp_path / name / "audit.json").read_text()), warnings_in(captured.err))
    (old_audit, old_warnings), (new_audit, new_warnings) = results["old"], results["new"]
    assert old_warnings == [("--data", "--dataset"), ("--judges", "--predictions"), ("--seed", "--bootstrap-seed")]
    assert new_warnings == []  # and "--seed" twice warned once
    assert old_audit["predictors"] == new_audit["predictors"] and old_audit["judges"] == new_audit["judges"]
    assert new_audit["predictors"]["oracle"]["full"]["waf"] == 100.0


def test_audit_preference_data_still_reads_a_built_folder(capsys, tmp_path, emoprefer_csv):
    built = tmp_path / "built"
    assert main(["build", "preference", "--source", str(emoprefer_csv), "--out", str(built)]) == 0
    for flag in ("--data", "--dataset"):
        out = tmp_path / flag.strip("-")
        assert main(["audit", "preference", flag, str(built), *FAST, "--out", str(out)]) == 0
        assert not (out / "dataset").exists()  # read as a built dataset, not rebuilt from a file
        assert len(warnings_in(capsys.readouterr().err)) == (flag == "--data")


@pytest.mark.parametrize("flag, target, expected", [
    ("--dataset", "file", "--dataset takes a built dataset folder or Hub repo id; a CSV/JSONL/Parquet file goes to "
                          "--source"),
    ("--dataset", "missing.csv", "a CSV/JSONL/Parquet file goes to --source"),
    ("--source", "folder", "--source takes a CSV/JSONL/Parquet file, and this is none; a built dataset folder or Hub "
                           "repo id goes to --dataset"),
    ("--source", "someone/repo", "goes to --dataset")])
def test_audit_preference_input_in_the_wrong_flag_is_refused(capsys, tmp_path, emoprefer_csv, flag, target,
                                                             expected):
    path = {"file": emoprefer_csv, "folder": tmp_path}.get(target, target)
    out = tmp_path / "out"
    assert main(["audit", "preference", flag, str(path), *FAST, "--out", str(out)]) == 2
    err = unwrap(capsys.readouterr().err)
    assert err.startswith(f"error: {path}: ") and expected in err and "deprecated" not in err
    assert not out.exists()


def test_run_protocols_judges_still_works_and_warns(capsys, tmp_path, protocol_dataset):
    base = ["run-protocols", "--dataset", str(protocol_dataset), "--conditions", "conf_spec", "--no-audit"]
    for flag in ("--judges", "--models"):
        out = tmp_path / flag.strip("-")
        assert main([*base, flag, "scripted:oracle", "--out", str(out)]) == 0
        assert [p.name for p in (out / "predictions").iterdir()] == ["oracle.cue_conflict.jsonl"]
        assert warnings_in(capsys.readouterr().err) == ([("--judges", "--models")] if flag == "--judges" else [])
    assert ((tmp_path / "judges" / "predictions" / "oracle.cue_conflict.jsonl").read_bytes()
            == (tmp_path / "models" / "predictions" / "oracle.cue_conflict.jsonl").read_bytes())


class _Yes:
    def answer(self, items, progress=None):
        return ["Yes"] * len(items)


def test_audit_composition_judge_still_grades_and_warns(capsys, tmp_path, monkeypatch):
    from omniaudit.data_builders.composition import build_composition_dataset

    ds = build_composition_dataset(tmp_path / "ds_alias", n_synthetic=6)
    ids = pd.read_parquet(next((ds / "samples").glob("*.parquet")), columns=["id"])["id"].tolist()
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"id": i, "prediction": "something else"}) + "\n" for i in ids))
    asked = []
    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: asked.append(spec) or _Yes())
    for flag in ("--judge", "--grader"):
        out = tmp_path / flag.strip("-")
        assert main(["audit", "composition", "--dataset", str(ds), "--predictions", str(run), flag, "fake:grader",
                     "--out", str(out)]) == 0
        captured = capsys.readouterr()
        assert f"judge verdicts: {len(ids)} asked" in captured.out
        assert json.loads((out / "audit.json").read_text())["accuracy"]["overall"]["mean"] == 100.0
        assert warnings_in(captured.err) == ([("--judge", "--grader")] if flag == "--judge" else [])
    assert asked == ["fake:grader", "fake:grader"]


def test_the_warning_comes_after_an_error_too(capsys, tmp_path):
    assert main(["audit", "protocols", "--dataset", str(tmp_path / "none"), "--predictions", "p.jsonl", "--seed", "1",
                 "--out", str(tmp_path / "out")]) == 2
    err = unwrap(capsys.readouterr().err)
    assert err.startswith("error: ") and err.endswith("warning: --seed is deprecated; use --bootstrap-seed")


def test_help_lists_new_spellings_and_names_the_old(capsys):
    for argv, new, old in ((["audit", "preference"], "--predictions [NAME=]FILE", "--judges"),
                           (["run-protocols"], "--models [NAME=]SPEC", "--judges"),
                           (["audit", "composition"], "--grader SPEC", "--judge"),
                           (["audit", "interventions"], "--bootstrap-seed BOOTSTRAP_SEED", "--seed")):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        raw = capsys.readouterr().out
        out = " ".join(raw.split())
        assert new in out and f"(old spelling {old}: deprecated)" in out
        assert not re.search(rf"^ +{old}[ ,]", raw, re.MULTILINE)  # not listed as a flag of its own


# ------------------------------------------------------------------------------------------------ omniaudit audits
def test_audits_lists_the_registry(capsys):
    assert main(["audits"]) == 0
    out = capsys.readouterr().out
    for audit in AUDITS.values():
        assert f"{audit.name}: {audit.title}" in out and audit.paper in out
        for config, modalities in audit.item_configs.items():
            assert f"{config} ({' '.join(modalities)})" in out
        assert all(metric in out for metric in audit.headline) and all(s in out for s in audit.shortcuts)
    assert main(["audits", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [a["name"] for a in listed] == list(AUDITS)
    assert listed[0]["item_configs"] == {k: list(v) for k, v in AUDITS[listed[0]["name"]].item_configs.items()}
