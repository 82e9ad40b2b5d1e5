"""The ``omniaudit`` command: help of every subcommand, the installed console script, an end-to-end preference audit
and external judge files (good and bad) given through the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import datasets
import pandas as pd
import pytest

from omniaudit.cli import main

ANSI = re.compile(r"\x1b\[[0-9;]*m")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SLICES = ("full", "length_matched", "counter_stereotypical")
PROBES = ("length_lr", "generator_lr", "length_generator_lr", "winrate_rule")
FAST = ["--n-resamples", "200", "--no-source-classifier", "--no-controls"]


# --------------------------------------------------------------------------------------------------------- helpers
def unwrap(text: str) -> str:
    """Undo the rich Console's hard wrap (80 columns when not a terminal) and any colour codes."""
    return ANSI.sub("", text).replace("\n", "")


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def audit(capsys, data: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    """Run ``omniaudit audit preference`` in-process: (exit status, stdout, unwrapped stderr)."""
    rc = main(["audit", "preference", "--data", str(data), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return rc, captured.out, unwrap(captured.err)


def binary_pairs(raw: pd.DataFrame) -> pd.DataFrame:
    return raw[raw["preference"] != "same"].reset_index(drop=True)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def oracle_records(raw: pd.DataFrame) -> list[dict]:
    """Both orders of every binary pair, P(a1) copied from the gold label (already mapped to a1 for order ba)."""
    binary = binary_pairs(raw)
    return [{"name": name, "order": order, "p_a1": 1.0 if pref == "a1" else 0.0}
            for name, pref in zip(binary["name"], binary["preference"], strict=True) for order in ("ab", "ba")]


def load_audit(out: Path) -> dict:
    return json.loads((out / "audit.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------------------------ help
@pytest.mark.parametrize("argv, usage, options", [
    (["--help"], "usage: omniaudit", ["build", "audit", "push", "--version"]),
    (["build", "--help"], "usage: omniaudit build", ["preference"]),
    (["build", "preference", "--help"], "usage: omniaudit build preference",
     ["--data", "--columns", "--out", "--dual-order", "--push-to-hub"]),
    (["audit", "--help"], "usage: omniaudit audit", ["preference"]),
    (["audit", "preference", "--help"], "usage: omniaudit audit preference",
     ["--data", "--judges", "--n-resamples", "--no-source-classifier", "--no-controls", "--out"]),
    (["push", "--help"], "usage: omniaudit push", ["folder", "repo", "--private"]),
    (["build", "interventions", "--help"], "usage: omniaudit build interventions",
     ["--manifest", "--shift", "--seed", "--audio-codec", "--num-proc", "--shard", "--skip-invalid", "--push-to-hub"]),
    (["audit", "interventions", "--help"], "usage: omniaudit audit interventions",
     ["--dataset", "--predictions", "--n-resamples", "--out"]),
    (["merge", "--help"], "usage: omniaudit merge", ["shards", "--out"]),
])
def test_help_exits_0_and_prints_usage(capsys, argv, usage, options):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(usage)
    for option in options:
        assert option in out


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert re.fullmatch(r"omniaudit \d+\.\d+\.\d+\S*\n", capsys.readouterr().out)


@pytest.mark.parametrize("argv", [[], ["build"], ["audit"], ["build", "preference"], ["audit", "preference"],
                                  ["build", "interventions"], ["audit", "interventions", "--out", "x"],
                                  ["build", "interventions", "--out", "x", "--shard", "2/2"]])
def test_missing_command_or_required_option_is_a_usage_error(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "usage: omniaudit" in capsys.readouterr().err


def test_console_script_help():
    script = Path(sys.executable).parent / "omniaudit"
    assert script.is_file(), f"console script not installed next to {sys.executable}"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: omniaudit")
    assert "build" in proc.stdout and "audit" in proc.stdout


def test_python_dash_m_omniaudit_is_the_command():
    proc = subprocess.run([sys.executable, "-m", "omniaudit", "--help"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: omniaudit"), proc.stderr


# ---------------------------------------------------------------------------------------------- end-to-end audit
def test_audit_preference_end_to_end(capsys, tmp_path, emoprefer_csv, small_raw):
    out = tmp_path / "audit"
    rc, stdout, err = audit(capsys, emoprefer_csv, out, "--n-resamples", "200")
    assert rc == 0, err
    assert f"report: {out / 'report.md'}" in stdout
    assert f"metrics: {out / 'audit.json'}" in stdout
    assert leftovers(tmp_path) == []

    result = load_audit(out)
    binary = binary_pairs(small_raw)
    ds = result["dataset"]
    assert ds["n_pairs"] == len(small_raw)
    assert ds["n_binary"] == len(binary)
    assert ds["n_same"] == int((small_raw["preference"] == "same").sum())
    assert ds["n_binary"] + ds["n_same"] == ds["n_pairs"]
    generators = sorted(set(small_raw["model1"]) | set(small_raw["model2"]))
    assert ds["generators"] == generators
    assert sorted(ds["win_rates"]) == generators
    assert all(0.0 <= v <= 1.0 for v in ds["win_rates"].values())

    assert set(result["slices"]) == set(SLICES)
    assert result["slices"]["full"]["n"] == len(binary)
    for s in SLICES[1:]:
        assert 0 < result["slices"][s]["n"] <= len(binary)
        assert result["slices"][s]["n"] == ds["slices"][s]

    assert set(PROBES) <= set(result["predictors"])
    for name in PROBES:
        for s in SLICES:
            entry = result["predictors"][name][s]
            assert {"waf", "ci", "n", "prior_following"} <= set(entry), (name, s)
            lo, hi = entry["ci"]
            assert lo <= entry["waf"] <= hi, (name, s, entry)
            assert lo >= 0.0 and hi <= 100.0
            assert entry["n"] == result["slices"][s]["n"]
            assert 0.0 <= entry["prior_following"] <= 1.0
    # Counter-stereotypical labels contradict the training-fold prior: the win-rate rule is 0 there by construction.
    rule = result["predictors"]["winrate_rule"]["counter_stereotypical"]
    assert rule["waf"] == 0.0
    assert rule["prior_following"] == 1.0
    assert result["bootstrap"]["n_resamples"] == 200
    assert "source_classifier" in result and "controls" in result
    assert result["judges"] == {}

    report = (out / "report.md").read_text(encoding="utf-8")
    lines = report.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("| Predictor |") and "Full (n=" in line)
    assert f"Full (n={len(binary)})" in lines[header]
    assert "Counter-stereo." in lines[header]
    assert re.fullmatch(r"\|( :?---:? \|)+", lines[header + 1])

    pngs = sorted(out.glob("*.png"))
    assert [p.name for p in pngs] == sorted(result["figures"].values())
    assert len(pngs) == 2
    for png in pngs:
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert f"]({png.name})" in report  # linked from the report

    predictions = pd.read_csv(out / "predictions.csv")
    assert len(predictions) == len(binary)
    assert predictions["name"].tolist() == binary["name"].tolist()
    for name in PROBES:
        assert set(predictions[f"pred__{name}"]) <= {"a1", "a2"}
        assert predictions[f"p_a1__{name}"].between(0, 1).all()

    assert (out / "dataset" / "README.md").is_file()
    pairs = datasets.load_dataset(str(out / "dataset"), "pairs", split="train")
    assert pairs.num_rows == len(small_raw)


def test_failing_audit_leaves_no_out_folder(capsys, tmp_path, small_raw):
    bad = small_raw.copy()
    bad.loc[bad.index[2], "preference"] = "b"
    path = tmp_path / "bad.csv"
    bad.to_csv(path, index=False)
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, path, out, *FAST)
    assert rc == 2
    assert str(path) in err and "row 3:" in err and "(found 'b')" in err
    assert not out.exists()
    assert leftovers(tmp_path) == []


# ----------------------------------------------------------------------------------------------- judge files
def test_oracle_judge_scores_100_everywhere(capsys, tmp_path, emoprefer_csv, small_raw):
    judge = write_jsonl(tmp_path / "oracle.jsonl", oracle_records(small_raw))
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 0, err
    result = load_audit(out)
    n_binary = len(binary_pairs(small_raw))
    oracle = result["predictors"]["oracle"]
    for s in SLICES:
        assert oracle[s]["waf"] == 100.0, s
        assert oracle[s]["ci"] == [100.0, 100.0], s
        assert oracle[s]["accuracy"] == 1.0, s
        assert oracle[s]["n"] == result["slices"][s]["n"]
    assert oracle["counter_stereotypical"]["prior_following"] == 0.0
    entry = result["judges"]["oracle"]
    assert {k: entry[k] for k in ("file", "n_two_orders", "n_one_order", "order_agreement", "n_ties")} == {
        "file": judge.name, "n_two_orders": n_binary, "n_one_order": 0, "order_agreement": 1.0, "n_ties": 0}
    bias = entry["position_bias"]  # an oracle is right in both orders, with no gap between them
    assert bias["orders"]["ab"]["full"]["waf"] == bias["orders"]["ba"]["full"]["waf"] == 100.0
    assert bias["ab_minus_ba"]["full"]["value"] == 0.0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "judge: oracle" in report
    predictions = pd.read_csv(out / "predictions.csv")
    assert (predictions["pred__oracle"] == predictions["preference"]).all()


def test_position_locked_judge_has_zero_order_agreement(capsys, tmp_path, emoprefer_csv, small_raw):
    """An "always picks slot A" judge given as labels: a1 when shown in order ab, a2 when shown in order ba."""
    names = binary_pairs(small_raw)["name"]
    rows = pd.DataFrame({"name": names.repeat(2).to_numpy(), "order": ["ab", "ba"] * len(names),
                         "label": ["a1", "a2"] * len(names)})
    judge = tmp_path / "slot_a.csv"
    rows.to_csv(judge, index=False)
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 0, err
    result = load_audit(out)
    meta = result["judges"]["slot_a"]
    assert meta["order_agreement"] == 0.0
    assert meta["n_two_orders"] == len(names) and meta["n_one_order"] == 0
    assert "## Judges: order consistency" in (out / "report.md").read_text(encoding="utf-8")


def test_judge_rows_for_same_pairs_are_ignored(capsys, tmp_path, emoprefer_csv, small_raw):
    same = small_raw.loc[small_raw["preference"] == "same", "name"]
    extra = [{"name": n, "order": "ab", "p_a1": 0.5} for n in same]
    judge = write_jsonl(tmp_path / "oracle.jsonl", oracle_records(small_raw) + extra)
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 0, err
    assert load_audit(out)["predictors"]["oracle"]["full"]["waf"] == 100.0


def _drop_pair(records: list[dict], raw: pd.DataFrame) -> tuple[list[dict], list[str]]:
    victim = binary_pairs(raw)["name"][10]
    return [r for r in records if r["name"] != victim], ["no prediction for 1 audited pair(s)", victim]


def _unknown_name(records: list[dict], raw: pd.DataFrame) -> tuple[list[dict], list[str]]:
    return records + [{"name": "clip_99999", "order": "ab", "p_a1": 0.2}], ["not in the dataset", "clip_99999"]


def _bad_order(records: list[dict], raw: pd.DataFrame) -> tuple[list[dict], list[str]]:
    records = [dict(r) for r in records]
    records[6]["order"] = "xy"
    return records, ["row 7:", "column 'order'", "expected order ab or ba", "(found 'xy')"]


def _bad_probability(records: list[dict], raw: pd.DataFrame) -> tuple[list[dict], list[str]]:
    records = [dict(r) for r in records]
    records[12]["p_a1"] = 1.5
    return records, ["row 13:", "column 'p_a1'", "expected a probability in [0, 1]", "(found 1.5)"]


def _duplicate_row(records: list[dict], raw: pd.DataFrame) -> tuple[list[dict], list[str]]:
    return records + [dict(records[0])], ["row 1:", "more than one row for order 'ab'", records[0]["name"]]


def _no_order_column(records: list[dict], raw: pd.DataFrame) -> tuple[list[dict], list[str]]:
    return [{k: v for k, v in r.items() if k != "order"} for r in records], ["expected columns name (or id), order"]


@pytest.mark.parametrize("corrupt", [_drop_pair, _unknown_name, _bad_order, _bad_probability, _duplicate_row,
                                     _no_order_column])
def test_bad_judge_file_is_rejected(capsys, tmp_path, emoprefer_csv, small_raw, corrupt):
    records, fragments = corrupt(oracle_records(small_raw), small_raw)
    judge = write_jsonl(tmp_path / "judge.jsonl", records)
    out = tmp_path / "audit"
    rc, stdout, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 2
    assert err.startswith("error: ")
    assert str(judge) in err
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert "report:" not in stdout
    assert not out.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("label", ["b", "a3", ""])
def test_bad_judge_label_is_rejected(capsys, tmp_path, emoprefer_csv, small_raw, label):
    names = binary_pairs(small_raw)["name"]
    rows = pd.DataFrame({"name": names.to_numpy(), "order": "ab", "label": "a1"})
    rows.loc[4, "label"] = label
    judge = tmp_path / "judge.csv"
    rows.to_csv(judge, index=False)
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 2
    for fragment in (str(judge), "row 5:", "column 'label'", "expected label a1 or a2", f"(found {label!r})"):
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert not out.exists()


def test_judge_labels_and_orders_are_case_and_space_insensitive(capsys, tmp_path, emoprefer_csv, small_raw):
    binary = binary_pairs(small_raw)
    rows = pd.DataFrame({"name": binary["name"], "order": " AB", "label": binary["preference"].str.upper() + " "})
    judge = tmp_path / "upper.csv"
    rows.to_csv(judge, index=False)
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 0, err
    result = load_audit(out)
    assert result["predictors"]["upper"]["full"]["waf"] == 100.0
    assert result["judges"]["upper"]["n_one_order"] == len(binary)


def test_judge_file_not_found(capsys, tmp_path, emoprefer_csv):
    judge = tmp_path / "missing.jsonl"
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 2
    assert str(judge) in err and "judge file not found" in err
    assert not out.exists()


@pytest.mark.parametrize("content", ["", 'name,order,p_a1\n"clip_00000,ab,1\n'])
def test_unreadable_judge_csv_is_an_input_error(capsys, tmp_path, emoprefer_csv, content):
    judge = tmp_path / "judge.csv"
    judge.write_text(content, encoding="utf-8")
    out = tmp_path / "audit"
    rc, _, err = audit(capsys, emoprefer_csv, out, *FAST, "--judges", str(judge))
    assert rc == 2
    assert str(judge) in err
    assert not out.exists()


def test_audit_reads_a_built_dataset_and_its_remedy_configs(capsys, tmp_path, emoprefer_csv):
    built = tmp_path / "built"
    assert main(["build", "preference", "--data", str(emoprefer_csv), "--out", str(built), "--dual-order"]) == 0
    for config, factor in (("pairs", 1), ("dual_order", 2)):
        out = tmp_path / f"audit_{config}"
        rc, _, err = audit(capsys, built, out, "--config", config, "--n-resamples", "100", "--no-source-classifier")
        assert rc == 0, err
        assert load_audit(out)["slices"]["full"]["n"] == factor * load_audit(tmp_path / "audit_pairs")["slices"][
            "full"]["n"]
        assert not (out / "dataset").exists()  # nothing was built, so nothing is copied


@pytest.mark.parametrize("target", ["folder_without_data", "unknown_config", "someone/emoprefer-v2.1"])
def test_audit_of_an_unloadable_dataset_is_an_input_error(capsys, tmp_path, emoprefer_csv, target):
    extra = []
    if target == "folder_without_data":
        data = tmp_path / "empty"
        data.mkdir()
    elif target == "unknown_config":
        data = tmp_path / "built"
        assert main(["build", "preference", "--data", str(emoprefer_csv), "--out", str(data)]) == 0
        extra = ["--config", "nope"]
    else:
        data = target  # a Hub repo id: unreachable offline
    out = tmp_path / "out"
    rc, _, err = audit(capsys, data, out, *extra)
    expected = "no config 'nope' in this dataset" if target == "unknown_config" else "cannot load config"
    assert rc == 2 and str(data) in err and expected in err
    assert not out.exists()


# ---------------------------------------------------------------------------------------------------- interventions
def test_build_interventions_shards_merge_and_manifest_errors(capsys, tmp_path):
    small = ["--clips", "2"]
    for i in range(2):
        assert main(["build", "interventions", "--out", str(tmp_path / f"s{i}"), "--shard", f"{i}/2", *small]) == 0
    out = capsys.readouterr().out
    assert "clips: 2 used, 0 rejected" in out and "datasets.load_dataset" in out
    assert main(["merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "all")]) == 0
    assert len(datasets.load_dataset(str(tmp_path / "all"), "diagnostic", split="train")) == 2 * 7
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"id": "a", "video": "missing.mp4"}) + "\n")
    assert main(["build", "interventions", "--manifest", str(manifest), "--out", str(tmp_path / "bad")]) == 2
    err = unwrap(capsys.readouterr().err)
    assert "m.jsonl:row 1: column 'video': video file not found (found 'missing.mp4')" in err
    assert not (tmp_path / "bad").exists()
    assert main(["merge", str(tmp_path / "s0"), "--out", str(tmp_path / "half")]) == 2
    assert "incomplete" in unwrap(capsys.readouterr().err)


# ------------------------------------------------------------------------------------------------ output folders
def user_folder(path: Path) -> Path:
    """A folder of a user's own files (what `--out victim` used to wipe)."""
    (path / "src").mkdir(parents=True)
    (path / "notes.txt").write_text("mine", encoding="utf-8")
    (path / "src" / "main.py").write_text("print('mine')", encoding="utf-8")
    return path


def untouched(path: Path) -> bool:
    return (sorted(p.name for p in path.iterdir()) == ["notes.txt", "src"]
            and (path / "src" / "main.py").read_text(encoding="utf-8") == "print('mine')")


@pytest.mark.parametrize("argv", [
    ["build", "preference"], ["build", "interventions"], ["build", "protocols"], ["build", "composition"],
    ["audit", "preference"], ["audit", "interventions", "--dataset", "d", "--predictions", "p"],
    ["audit", "protocols", "--dataset", "d", "--predictions", "p"],
    ["audit", "composition", "--dataset", "d", "--predictions", "p"], ["merge", "s0", "s1"]])
def test_out_on_a_users_folder_is_refused_before_any_work(capsys, tmp_path, argv):
    victim = user_folder(tmp_path / "victim")
    assert main([*argv, "--out", str(victim)]) == 2
    err = unwrap(capsys.readouterr().err)
    assert err.startswith(f"error: {victim}: the output folder is not empty and is not an omniaudit output")
    assert "notes.txt, src/" in err and "Pass --overwrite" in err
    assert untouched(victim) and leftovers(tmp_path) == []


def test_overwrite_rerun_and_another_commands_output(capsys, tmp_path, emoprefer_csv):
    victim = user_folder(tmp_path / "victim")
    build = ["build", "preference", "--data", str(emoprefer_csv), "--out", str(victim)]
    assert main(build) == 2 and untouched(victim)
    assert main([*build, "--overwrite"]) == 0  # asked for: the folder is replaced
    assert not (victim / "notes.txt").exists() and (victim / "README.md").is_file()
    marker = json.loads((victim / ".omniaudit.json").read_text(encoding="utf-8"))
    assert marker["command"] == "omniaudit build preference"
    assert "pairs/train-00000-of-00001.parquet" in marker["files"]
    assert main(build) == 0  # its own earlier output: no --overwrite needed
    capsys.readouterr()
    assert main(["audit", "preference", "--data", str(victim), *FAST, "--out", str(victim)]) == 2
    assert "holds the output of `omniaudit build preference`, not of `omniaudit audit preference`" in unwrap(
        capsys.readouterr().err)
    assert datasets.load_dataset(str(victim), "pairs", split="train").num_rows > 0  # the dataset survived


def test_out_dot_and_trailing_slash(capsys, tmp_path, emoprefer_csv, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    for _ in range(2):  # the second run replaces its own earlier output
        assert main(["build", "preference", "--data", str(emoprefer_csv), "--out", "."]) == 0
        assert f"dataset written to {here} " in capsys.readouterr().out
    assert Path.cwd() == here and (here / "README.md").is_file()
    assert datasets.load_dataset(str(here), "pairs", split="train").num_rows > 0
    assert main(["build", "preference", "--data", str(emoprefer_csv), "--out", "./sub/"]) == 0
    assert (here / "sub" / "README.md").is_file()
    assert leftovers(here) == [".omniaudit.json"] and leftovers(tmp_path) == []
    assert main(["build", "preference", "--data", str(emoprefer_csv), "--out", ".."]) == 2
    assert "contains the current folder" in unwrap(capsys.readouterr().err)


def test_judge_out_file_is_never_put_over_a_users_file(capsys, tmp_path, protocol_dataset):
    mine = tmp_path / "results.jsonl"
    mine.write_text("my own results\n", encoding="utf-8")
    judge = ["judge", "--dataset", str(protocol_dataset), "--config", "reference", "--judge", "scripted:oracle",
             "--conditions", "wrong", "--out"]
    assert main([*judge, str(mine)]) == 2
    assert f"error: {mine}: the output file exists and was not written by omniaudit" in unwrap(
        capsys.readouterr().err)
    assert mine.read_text(encoding="utf-8") == "my own results\n"
    assert main([*judge, str(tmp_path)]) == 2 and "is a folder" in unwrap(capsys.readouterr().err)
    preds = tmp_path / "preds.jsonl"
    assert main([*judge, str(preds)]) == 0 and main([*judge, str(preds)]) == 0  # a rerun replaces its own file
    assert main([*judge, str(mine), "--overwrite"]) == 0
    assert mine.read_text(encoding="utf-8") == preds.read_text(encoding="utf-8")


def test_tiny_models_refuses_a_users_subfolder_before_building(capsys, tmp_path):
    user_folder(tmp_path / "runs" / "omni")
    assert main(["tiny-models", "--out", str(tmp_path / "runs")]) == 2
    assert str(tmp_path / "runs" / "omni") in unwrap(capsys.readouterr().err)
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["omni"] and untouched(tmp_path / "runs" / "omni")
