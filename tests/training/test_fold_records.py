"""The held-out selection record of a cross-fitted judge (dataset fingerprint, held-out pair ids) and the fold checks
that refuse a fold judge without it, of another build, or answering pairs it trained on."""

from __future__ import annotations

import json

import pytest

from omniaudit.errors import InputError
from omniaudit.runners.folds import (
    check_fold_judge,
    check_fold_record,
    check_judge_folds,
    merge_fold_predictions,
    pair_of,
)

FP = "sha256:aaaa"


def record(fold=0, pairs=("p1", "p2"), fingerprint=FP) -> dict:
    return {"heldout_fold": fold, "train_folds": [1], "heldout_pair_ids": list(pairs),
            "dataset": {"name": "ds", "config": "judge_sft", "fingerprint": "sha256:sft",
                        "fingerprints": {"judge": fingerprint, "judge_sft": "sha256:sft"}}}


def test_a_record_of_this_build_holding_out_exactly_the_answered_pairs_passes():
    check_fold_record(0, record(), "judge", FP, ["p2", "p1", "p1"])


def test_a_fold_judge_without_a_record_is_refused_naming_fold_and_file():
    with pytest.raises(InputError, match=r"fold 3: cv/fold3/heldout_selection.json: .*no held-out selection record"):
        check_fold_record(3, None, "judge", FP, ["p1"], "cv/fold3/heldout_selection.json")


def test_a_record_of_another_build_is_refused():
    with pytest.raises(InputError, match=r"fold 0: .*fingerprint sha256:old, not sha256:aaaa"):
        check_fold_record(0, record(fingerprint="sha256:old"), "judge", FP, ["p1", "p2"])
    old = record()
    del old["dataset"]  # a record written before the fingerprint was kept
    with pytest.raises(InputError, match="fold 0: .*fingerprint None"):
        check_fold_record(0, old, "judge", FP, ["p1", "p2"])


def test_answering_pairs_the_judge_trained_on_is_refused():
    """A rebuilt dataset whose fold assignment changed: fold 0 now holds p9, a pair judge 0 trained on."""
    with pytest.raises(InputError, match=r"fold 0: .*answers 1 pair\(s\) it trained on \(e.g. 'p9'\)"):
        check_fold_record(0, record(), "judge", FP, ["p1", "p9"])
    with pytest.raises(InputError, match=r"does not answer 1 of its 2 held-out pair"):
        check_fold_record(0, record(), "judge", FP, ["p1"])
    no_ids = record()
    del no_ids["heldout_pair_ids"]
    with pytest.raises(InputError, match="no heldout_pair_ids"):
        check_fold_record(0, no_ids, "judge", FP, ["p1", "p2"])
    with pytest.raises(InputError, match="trained without fold 1, not fold 0"):
        check_fold_record(0, record(fold=1), "judge", FP, ["p1", "p2"])


def test_pair_of_strips_the_order():
    assert pair_of("clip_1/ab", "ab") == "clip_1" and pair_of("a/b/ba", None) == "a/b"


def fold_file(path, judge, model, fold=0, ids=("p1", "p2"), fingerprint=FP):
    prov = {"omniaudit": "x", "dataset": {"name": "ds", "config": "judge", "fingerprint": fingerprint},
            "judge": judge, "model": model, "sampling": {"runs": 1},
            "selection": {"conditions": [f"fold={fold}"], "formats": None, "items": 2 * len(ids)}}
    rows = [{"id": f"{p}/{o}", "order": o, "provenance": prov} for p in ids for o in ("ab", "ba")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_merge_checks_each_hf_fold_judge_against_its_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for k, pairs in ((0, ("p1", "p2")), (1, ("p3", "p4"))):
        (tmp_path / f"cv/fold{k}").mkdir(parents=True)
        (tmp_path / f"cv/fold{k}/heldout_selection.json").write_text(json.dumps(record(k, pairs)))
    model = {"kind": "hf", "model": "fold{}", "revision": None}
    f0 = fold_file(tmp_path / "f0.jsonl", "hf:cv/fold0", {**model, "sha256": "a", "heldout_fold": 0})
    f1 = fold_file(tmp_path / "f1.jsonl", "hf:cv/fold1", {**model, "sha256": "b", "heldout_fold": 1}, 1, ("p3", "p4"))
    assert merge_fold_predictions(tmp_path / "m.jsonl", [f0, f1])["folds"] == [0, 1]
    # the rebuilt dataset: fold 1 now holds p1, which judge 1 trained on; and its fingerprint changed
    moved = fold_file(tmp_path / "r1.jsonl", "hf:cv/fold1", {**model, "sha256": "b", "heldout_fold": 1}, 1,
                      ("p3", "p1"))
    with pytest.raises(InputError, match=r"fold 1: cv/fold1/heldout_selection.json: .*trained on \(e.g. 'p1'\)"):
        merge_fold_predictions(tmp_path / "m2.jsonl", [f0, moved])
    rebuilt0 = fold_file(tmp_path / "b0.jsonl", "hf:cv/fold0", {**model, "sha256": "a", "heldout_fold": 0},
                         fingerprint="sha256:new")
    rebuilt1 = fold_file(tmp_path / "b1.jsonl", "hf:cv/fold1", {**model, "sha256": "b", "heldout_fold": 1}, 1,
                         ("p3", "p4"), "sha256:new")
    with pytest.raises(InputError, match="fold 0: cv/fold0/heldout_selection.json: .*not sha256:new"):
        merge_fold_predictions(tmp_path / "m3.jsonl", [rebuilt0, rebuilt1])
    bare = fold_file(tmp_path / "n1.jsonl", "hf:cv/plain", {**model, "sha256": "c"}, 1, ("p3", "p4"))
    with pytest.raises(InputError, match="fold 1: cv/plain/heldout_selection.json: .*had no held-out selection"):
        merge_fold_predictions(tmp_path / "m4.jsonl", [f0, bare])
    assert not any((tmp_path / f"m{k}.jsonl").exists() for k in (2, 3, 4))
    check_fold_judge(1, "scripted:oracle", {"kind": "scripted"}, {}, [], "x")  # untrained judges need no record


def test_judge_folds_checks_the_record_against_the_dataset_answered(tmp_path):
    from omniaudit.data_builders.fingerprint import fingerprint_of
    from omniaudit.data_builders.hub import load_config
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    built = build_preference_dataset(tmp_path / "ds", spec=SyntheticSpec(n_pairs=20, seed=3))
    table = load_config(built, "judge")
    pairs = sorted(set(table.loc[table["fold"] == 0, "pair_id"]))
    model = tmp_path / "cv" / "fold0"
    model.mkdir(parents=True)
    file = model / "heldout_selection.json"
    file.write_text(json.dumps(record(0, pairs, fingerprint_of(built, "judge"))))
    assert check_judge_folds(f"hf:{model}", [0], built, "judge") == 0
    file.write_text(json.dumps(record(0, [*pairs[1:], "elsewhere"], fingerprint_of(built, "judge"))))
    with pytest.raises(InputError, match=r"fold 0: .*fold0/heldout_selection.json: .*trained on"):
        check_judge_folds(f"hf:{model}", [0], built, "judge")
    file.unlink()
    assert check_judge_folds(f"hf:{model}", [0], built, "judge") is None  # no record: not known as a fold judge
    file.write_text(json.dumps(record(0, pairs, "sha256:old")))
    with pytest.raises(InputError, match="fold 0: .*not sha256:"):
        check_judge_folds(f"hf:{model}", [0], built, "judge")


def test_the_training_record_carries_the_build_fingerprints(tmp_path):
    from omniaudit.data_builders.fingerprint import fingerprint_of
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset
    from omniaudit.training.heldout import dataset_record

    built = build_preference_dataset(tmp_path / "ds", spec=SyntheticSpec(n_pairs=10, seed=3))
    got = dataset_record(str(built), "judge")
    assert got["fingerprint"] == fingerprint_of(built, "judge") == got["fingerprints"]["judge"]
    assert set(got["fingerprints"]) == {"judge", "pairs"} and got["name"] == "ds"
