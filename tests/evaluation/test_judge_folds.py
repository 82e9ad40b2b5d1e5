"""`omniaudit judge --folds`: fold-filtered runs of cross-fitted judges, refused alone by the audit and joined by
`omniaudit merge-predictions` into one out-of-fold judge file that `audit preference` reads as one judge."""

import json

import numpy as np
import pytest

from omniaudit.cli import main
from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset
from omniaudit.errors import InputError
from omniaudit.evaluation.runners.items import load_items

FAST = ["--n-resamples", "20", "--no-source-classifier", "--no-controls", "--no-length-control"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_preference_dataset(tmp_path_factory.mktemp("folds") / "ds", spec=SyntheticSpec(n_pairs=60, seed=3))


@pytest.fixture(scope="module")
def items(built):
    return load_items(built, "judge")


def judge(built, out, spec: str, *extra: str) -> list[dict]:
    assert main(["judge", "--dataset", str(built), "--config", "judge", "--judge", spec, "--out", str(out),
                 *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def fold_of(built) -> dict[str, int]:
    from omniaudit.data_builders.hub import load_config

    table = load_config(built, "judge")
    return dict(zip(table["id"], table["fold"], strict=True))


def test_folds_select_the_items_of_those_folds_and_are_recorded(built, items, tmp_path):
    folds = fold_of(built)
    rows = judge(built, tmp_path / "f01.jsonl", "scripted:always-a", "--folds", "1,0")
    assert [r["id"] for r in rows] == [i.id for i in items if folds[i.id] in (0, 1)]
    selection = rows[0]["provenance"]["selection"]
    assert selection["conditions"] == ["fold=0", "fold=1"] and selection["items"] == len(rows)
    assert 0 < len(rows) < len(items)
    with pytest.raises(InputError, match=r"fold '7' is not in config 'judge'; its folds: 0, 1, 2, 3, 4"):
        load_items(built, "judge", ["fold=7"])
    with pytest.raises(SystemExit):  # argparse: not distinct
        main(["judge", "--dataset", str(built), "--config", "judge", "--judge", "scripted:oracle", "--out",
              str(tmp_path / "x.jsonl"), "--folds", "0,0"])
    # a bare "0" is never read as a fold
    with pytest.raises(InputError, match="valid values"):
        load_items(built, "judge", ["0"])


def test_out_of_fold_files_merge_into_one_judge_the_audit_scores(built, tmp_path, capsys):
    """Five 'cross-fitted judges' (scripted: the oracle on even folds, always-A on odd ones), one fold file each."""
    from sklearn.metrics import f1_score

    from omniaudit.data_builders.hub import load_config

    files = []
    for k in range(5):
        spec = "scripted:oracle" if k % 2 == 0 else "scripted:always-a"
        files.append(tmp_path / f"fold{k}.jsonl")
        judge(built, files[-1], spec, "--folds", str(k))
    # one fold file alone is not the whole judge
    code = main(["audit", "preference", "--dataset", str(built), "--predictions", f"j={files[0]}", "--out",
                 str(tmp_path / "a0"), *FAST])
    assert code != 0 and "answers fold(s) [0]" in capsys.readouterr().err
    merged = tmp_path / "oof.jsonl"
    assert main(["merge-predictions", *map(str, files[::-1]), "--out", str(merged)]) == 0
    rows = [json.loads(line) for line in merged.read_text().splitlines()]
    record = rows[0]["provenance"]
    assert all(r["provenance"] == record for r in rows)
    assert record["selection"]["folds"] == [0, 1, 2, 3, 4] and record["selection"]["conditions"] is None
    assert record["selection"]["out_of_fold"]["1"] == "scripted:always-a"
    assert record["judge"].startswith("out-of-fold:0=scripted:oracle,1=scripted:always-a")
    assert main(["audit", "preference", "--dataset", str(built), "--predictions", f"oof={merged}", "--out",
                 str(tmp_path / "audit"), *FAST]) == 0
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    # independent: oracle pairs are right; always-A answers a1 in order ab and a2 in ba: a tie (half credit each)
    pairs = load_config(built, "pairs")
    pairs = pairs[pairs["is_binary"]].reset_index(drop=True)
    y = (pairs["preference"] == "a1").to_numpy()
    odd = (pairs["fold"] % 2 == 1).to_numpy()
    w = np.where(odd, 0.5, 1.0)
    y2 = np.concatenate([y, y[odd]])  # a tie: once as each class, half weight
    pred = np.concatenate([np.where(odd, True, y), np.zeros(odd.sum(), bool)])
    weights = np.concatenate([w, np.full(odd.sum(), 0.5)])
    expect = 100 * f1_score(y2, pred, average="weighted", sample_weight=weights)
    assert audit["predictors"]["oof"]["full"]["waf"] == pytest.approx(expect, abs=1e-6)


def test_merge_refuses_fold_files_that_do_not_belong_together(built, tmp_path):
    f0 = tmp_path / "f0.jsonl"
    judge(built, f0, "scripted:oracle", "--folds", "0")
    again = tmp_path / "f0b.jsonl"
    judge(built, again, "scripted:always-b", "--folds", "0,1")
    with pytest.raises(InputError, match="fold 0 is answered by two files"):
        from omniaudit.evaluation.runners.folds import merge_fold_predictions

        merge_fold_predictions(tmp_path / "m.jsonl", [f0, again])
    hot = tmp_path / "f1.jsonl"
    judge(built, hot, "scripted:oracle", "--folds", "1", "--temperature", "0.7", "--seed", "1")
    with pytest.raises(InputError, match="sampling"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, hot])
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(hot.read_text().splitlines(keepends=True)[:-1]))
    fine = tmp_path / "f1ok.jsonl"
    judge(built, fine, "scripted:oracle", "--folds", "1")
    fine_cut = tmp_path / "f1cut.jsonl"
    fine_cut.write_text("".join(fine.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(InputError, match="incomplete"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, fine_cut])
    whole = tmp_path / "whole.jsonl"
    judge(built, whole, "scripted:oracle")
    with pytest.raises(InputError, match="not a fold-filtered run"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, whole])
