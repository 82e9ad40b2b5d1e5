"""`omniaudit judge --folds`: fold-filtered runs of cross-fitted judges, refused alone by the audit and joined by
`omniaudit merge-predictions` into one out-of-fold judge file that `audit preference` reads as one judge."""

import json

import numpy as np
import pytest

from omniaudit.cli import main
from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset
from omniaudit.errors import InputError
from omniaudit.runners.items import load_items

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
    """Five 'cross-fitted judges', one per fold file (a judge answers one file): on preference items the oracle,
    deaf and label-follower answer the gold on even folds, always-a and position-locked slot A on odd ones."""
    from sklearn.metrics import f1_score

    from omniaudit.data_builders.hub import load_config

    files = []
    specs = ["scripted:oracle", "scripted:always-a", "scripted:deaf", "scripted:position-locked",
             "scripted:label-follower"]
    for k, spec in enumerate(specs):
        files.append(tmp_path / f"fold{k}.jsonl")
        judge(built, files[-1], spec, "--folds", str(k))
    # one fold file alone is not the whole judge
    code = main(["audit", "preference", "--dataset", str(built), "--predictions", f"j={files[0]}", "--out",
                 str(tmp_path / "a0"), *FAST])
    assert code != 0 and "answers fold(s) [0]" in capsys.readouterr().err
    # a merge that lacks two folds' files: the audit names them
    assert main(["merge-predictions", *map(str, files[:3]), "--out", str(tmp_path / "part.jsonl")]) == 0
    code = main(["audit", "preference", "--dataset", str(built), "--predictions", f"j={tmp_path / 'part.jsonl'}",
                 "--out", str(tmp_path / "a1"), *FAST])
    assert code != 0 and "no answer at all for fold(s) [3, 4]" in capsys.readouterr().err
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
    from omniaudit.runners.folds import merge_fold_predictions

    f0 = tmp_path / "f0.jsonl"
    judge(built, f0, "scripted:oracle", "--folds", "0")
    again = tmp_path / "f0b.jsonl"
    judge(built, again, "scripted:always-b", "--folds", "0")
    with pytest.raises(InputError, match="fold 0 is answered by two files"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, again])
    hot = tmp_path / "f1.jsonl"
    judge(built, hot, "scripted:always-a", "--folds", "1", "--temperature", "0.7", "--seed", "1")
    with pytest.raises(InputError, match="sampling"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, hot])
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(hot.read_text().splitlines(keepends=True)[:-1]))
    fine = tmp_path / "f1ok.jsonl"
    judge(built, fine, "scripted:always-a", "--folds", "1")
    fine_cut = tmp_path / "f1cut.jsonl"
    fine_cut.write_text("".join(fine.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(InputError, match="incomplete"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, fine_cut])
    whole = tmp_path / "whole.jsonl"
    judge(built, whole, "scripted:oracle")
    with pytest.raises(InputError, match="not a fold-filtered run"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, whole])


def as_trained_judge(src, out, name: str, sha: str, heldout: int | None):
    """The fold file ``src`` as if a local model ``name`` (weights hash ``sha``, trained without fold ``heldout``)
    had answered it: its provenance's judge and model rewritten."""
    rows = [json.loads(line) for line in src.read_text().splitlines()]
    model = {"kind": "hf", "model": name, "revision": None, "sha256": sha}
    if heldout is not None:
        model["heldout_fold"] = heldout
    for row in rows:
        row["provenance"] = {**row["provenance"], "judge": f"hf:cv/{name}", "model": model}
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_merge_refuses_a_judge_answering_a_fold_it_trained_on(built, tmp_path, capsys):
    """The review's repro: one judge answering two folds, a file of two folds, a trained judge on another fold."""
    from omniaudit.runners.folds import merge_fold_predictions

    f0, f1, f2 = (tmp_path / f"f{k}.jsonl" for k in range(3))
    judge(built, f0, "scripted:oracle", "--folds", "0")
    judge(built, f1, "scripted:oracle", "--folds", "1")
    code = main(["merge-predictions", str(f0), str(f1), "--out", str(tmp_path / "m.jsonl")])
    assert code != 0 and "answers this file too" in capsys.readouterr().err
    assert not (tmp_path / "m.jsonl").exists()
    two = tmp_path / "f12.jsonl"
    judge(built, two, "scripted:always-a", "--folds", "1,2")
    with pytest.raises(InputError, match=r"answers folds \[1, 2\]"):
        merge_fold_predictions(tmp_path / "m.jsonl", [f0, two])
    judge(built, f2, "scripted:always-b", "--folds", "2")
    # local models: each names the fold it was held out from (heldout_selection.json, in its identity)
    ok0 = as_trained_judge(f0, tmp_path / "h0.jsonl", "fold0", "aa", 0)
    ok2 = as_trained_judge(f2, tmp_path / "h2.jsonl", "fold2", "bb", 2)
    assert merge_fold_predictions(tmp_path / "m.jsonl", [ok0, ok2])["folds"] == [0, 2]
    swapped = as_trained_judge(f2, tmp_path / "s2.jsonl", "fold0", "aa", 0)  # `--judge hf:cv/fold0 --folds 2`
    with pytest.raises(InputError, match="trained without fold 0 .* trained on fold 2"):
        merge_fold_predictions(tmp_path / "m.jsonl", [ok0, swapped])
    copied = as_trained_judge(f2, tmp_path / "c2.jsonl", "copy_of_fold0", "aa", None)  # same weights, renamed
    with pytest.raises(InputError, match="the model of .*h0.jsonl answers this file too"):
        merge_fold_predictions(tmp_path / "m.jsonl", [ok0, copied])


def test_judge_folds_refuses_a_cross_fitted_model_on_another_fold_before_loading_it(built, tmp_path, capsys):
    """`omniaudit judge --judge hf:cv/fold0 --folds 1`: refused from heldout_selection.json alone (the folder
    holds no model, so getting past the check would fail otherwise); the identity records the fold."""
    from omniaudit.runners.folds import check_judge_folds
    from omniaudit.runners.identity import heldout_fold, local_model_identity

    model = tmp_path / "cv" / "fold0"
    model.mkdir(parents=True)
    (model / "heldout_selection.json").write_text(json.dumps({"heldout_fold": 0, "train_folds": [1, 2, 3, 4]}))
    out = tmp_path / "p.jsonl"
    for folds in ("1", "0,1"):
        code = main(["judge", "--dataset", str(built), "--config", "judge", "--judge", f"hf:{model}", "--out",
                     str(out), "--folds", folds])
        err = capsys.readouterr().err
        assert code != 0 and not out.exists()
        assert ("trained without fold 0" in err) if folds == "1" else ("answers folds [0, 1]" in err)
    assert check_judge_folds(f"hf:{model}", None) == 0  # a run over every fold: judge warns, in-sample but one
    assert check_judge_folds(f"hf:{model}", [0]) == 0 and check_judge_folds("scripted:oracle", [1, 2]) is None
    assert local_model_identity(str(model))["heldout_fold"] == 0
    assert "heldout_fold" not in local_model_identity(str(tmp_path))
    (model / "heldout_selection.json").write_text("[1]")
    with pytest.raises(InputError, match="heldout_selection.json"):
        heldout_fold(model)
