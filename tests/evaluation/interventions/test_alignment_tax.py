"""Alignment tax from lmms-eval ``--log_samples`` files: hand-written samples, hand-counted accuracies."""

import json

import numpy as np
import pytest

from omniaudit.errors import InputError
from omniaudit.evaluation.interventions.alignment_tax import alignment_tax, find_sample_files, read_samples
from omniaudit.evaluation.stats import resample_indices

# Video-MME style: 3 questions per video, the metric a dict (lmms-eval's videomme_process_results)
BASE_VMME = [("v1", "A", "A"), ("v1", "B", "C"), ("v1", "", "D"), ("v2", "A", "A"), ("v2", "B", "B"),
             ("v2", "C", "D"), ("v3", "a", "A"), ("v3", "B", "B"), ("v3", "C", "C")]  # 6 of 9 ("a" == "A")
OURS_VMME = [("v1", "A", "A"), ("v1", "C", "C"), ("v1", "D", "D"), ("v2", "A", "A"), ("v2", "B", "B"),
             ("v2", "A", "D"), ("v3", "B", "A"), ("v3", "B", "B"), ("v3", "C", "C")]  # 7 of 9
BASE_LVB = [True, False, False, True, True, False, True, False]  # 4 of 8
OURS_LVB = [True, True, False, True, True, True, True, False]  # 6 of 8


def write_run(folder, vmme, lvb, date="2026-01-01T00-00-00"):
    model = folder / "qwen2_5_omni"
    model.mkdir(parents=True)
    with (model / f"{date}_samples_videomme.jsonl").open("w") as fh:
        for i, (video, pred, gold) in enumerate(vmme):
            fh.write(json.dumps({"doc_id": i, "target": gold, "filtered_resps": [f"({pred})"], "doc_hash": "h",
                                 "input": "question", "videomme_perception_score": {
                                     "question_id": f"q{i}", "duration": "short", "category": "x",
                                     "task_category": "y", "pred_answer": pred, "answer": gold, "videoID": video}})
                     + "\n")
    with (model / f"{date}_samples_lvbench.jsonl").open("w") as fh:
        for i, ok in enumerate(lvb):
            fh.write(json.dumps({"doc_id": i, "target": "A", "filtered_resps": ["A"], "doc_hash": "h",
                                 "lvbench_score": ok}) + "\n")
    results = model / f"{date}_results.json"
    results.write_text("{}")
    return folder


@pytest.fixture
def runs(tmp_path):
    return {"base": write_run(tmp_path / "base", BASE_VMME, BASE_LVB),
            "ours": write_run(tmp_path / "ours", OURS_VMME, OURS_LVB)}


def loop_cluster_bootstrap(correct, clusters, n_resamples=2000, seed=0):
    """Reference: a Python loop over resamples of clusters (same draws as the vectorised code)."""
    keys = list(dict.fromkeys(clusters))
    sums = np.array([sum(c for c, k in zip(correct, clusters, strict=True) if k == key) for key in keys])
    counts = np.array([sum(k == key for k in clusters) for key in keys])
    out = []
    for idx in resample_indices(len(keys), n_resamples, seed):
        out.append(100 * sums[idx].sum() / counts[idx].sum())
    return np.percentile(out, [2.5, 97.5])


def test_accuracies_cis_and_paired_deltas_match_hand_counts(runs):
    r = alignment_tax([f"base={runs['base']}", f"ours={runs['ours']}"])
    base, ours = r["runs"]["base"]["tasks"], r["runs"]["ours"]["tasks"]
    assert base["videomme"]["value"] == pytest.approx(100 * 6 / 9) and ours["videomme"]["value"] == pytest.approx(
        100 * 7 / 9)
    assert base["lvbench"]["value"] == 50.0 and ours["lvbench"]["value"] == 75.0
    assert base["videomme"]["n"] == 9 and base["videomme"]["clusters"] == 3
    assert base["videomme"]["cluster_key"] == "videoID" and base["lvbench"]["cluster_key"] == "doc_id"
    assert base["videomme"]["metric"] == "videomme_perception_score" and base["lvbench"]["metric"] == "lvbench_score"
    correct = [float(p.upper() == g) for _, p, g in BASE_VMME]
    assert base["videomme"]["ci"] == pytest.approx(list(loop_cluster_bootstrap(correct, [v for v, _, _ in BASE_VMME])))
    assert base["lvbench"]["ci"] == pytest.approx(list(loop_cluster_bootstrap(
        [float(x) for x in BASE_LVB], list(range(8)))))
    # Table 2's Avg.: the mean of per-task accuracies
    assert r["average"]["base"]["value"] == pytest.approx((100 * 6 / 9 + 50) / 2)
    assert r["average"]["ours"]["value"] == pytest.approx((100 * 7 / 9 + 75) / 2)
    d = r["deltas"]["ours"]
    assert d["videomme"]["value"] == pytest.approx(100 / 9) and d["lvbench"]["value"] == 25.0
    assert d["average"]["value"] == pytest.approx((100 / 9 + 25) / 2)
    # McNemar by hand. Video-MME: only ours right on q1 (C) and q2 (D); only base right on q6 ("a" == "A")
    base_ok = np.array(correct) == 1
    ours_ok = np.array([p == g for _, p, g in OURS_VMME])
    assert (int(np.sum(ours_ok & ~base_ok)), int(np.sum(~ours_ok & base_ok))) == (2, 1)
    assert d["videomme"]["mcnemar"] == {"b": 2, "c": 1, "p": 1.0}  # min(1, 2 * P[Bin(3, 1/2) <= 1]) = 1
    assert d["lvbench"]["mcnemar"] == {"b": 2, "c": 0, "p": 0.5}  # binomial(2, 1/2): 2 * 0.25 = 0.5
    # the paired CI is the CI of the difference over resamples of the shared clusters
    lo, hi = d["lvbench"]["ci"]
    assert lo <= 25.0 <= hi and d["lvbench"]["only_in_base"] == d["lvbench"]["only_in_run"] == 0


def test_the_cli_writes_json_markdown_and_a_figure(runs, tmp_path, capsys):
    from omniaudit.cli import main

    assert main(["report", "alignment-tax", f"base={runs['base']}", f"ours={runs['ours']}", "--out",
                 str(tmp_path / "rep"), "--n-resamples", "500"]) == 0
    data = json.loads((tmp_path / "rep" / "alignment_tax.json").read_text())
    assert data["runs"]["ours"]["tasks"]["lvbench"]["value"] == 75.0 and data["n_resamples"] == 500
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| lvbench | 50.0 [" in md and "## `ours` − `base`" in md and "| lvbench | +25.0 [" in md
    assert (tmp_path / "rep" / "alignment_tax.png").read_bytes()[:4] == b"\x89PNG"
    assert "report:" in capsys.readouterr().out


def test_only_shared_documents_are_paired(tmp_path):
    base = write_run(tmp_path / "b", BASE_VMME, BASE_LVB)
    ours = write_run(tmp_path / "o", OURS_VMME, OURS_LVB[:6])  # the run stopped early: 6 lvbench docs
    d = alignment_tax({"base": base, "ours": ours})["deltas"]["ours"]["lvbench"]
    # shared docs 0-5: base 3/6, ours 5/6
    assert d["n"] == 6 and d["value"] == pytest.approx(100 * (5 - 3) / 6) and d["only_in_base"] == 2


def test_metric_selection_and_bad_samples(tmp_path):
    f = tmp_path / "x_samples_mytask.jsonl"
    f.write_text(json.dumps({"doc_id": 0, "acc": 1, "exact_match": 0}) + "\n")
    with pytest.raises(InputError, match=r"candidates: \['acc', 'exact_match'\]\); pass --metric mytask=KEY"):
        read_samples(f)
    assert read_samples(f, metric="acc").correct.tolist() == [1.0]
    assert alignment_tax([str(f)], ["mytask=exact_match"])["runs"]["x_samples_mytask"]["tasks"]["mytask"][
        "value"] == 0.0
    bad = tmp_path / "y_samples_t.jsonl"
    bad.write_text(json.dumps({"doc_id": 0, "score": 3.5}) + "\n")
    with pytest.raises(InputError, match="number in \\[0, 1\\]") as err:
        read_samples(bad)
    assert "row 1" in str(err.value) and "column 'score'" in str(err.value)
    dup = tmp_path / "z_samples_t.jsonl"
    dup.write_text(json.dumps({"doc_id": 0, "acc": 1}) + "\n" + json.dumps({"doc_id": 0, "acc": 0}) + "\n")
    with pytest.raises(InputError, match="duplicate doc_id") as err:
        read_samples(dup)
    assert "row 2" in str(err.value)
    nodict = tmp_path / "w_samples_t.jsonl"
    nodict.write_text(json.dumps({"doc_id": 0, "m": {"foo": 1}}) + "\n")
    with pytest.raises(InputError, match="without score, correct or a prediction/answer pair"):
        read_samples(nodict)
    notlog = tmp_path / "v_samples_t.jsonl"
    notlog.write_text(json.dumps({"id": 1}) + "\n")
    with pytest.raises(InputError, match="--log_samples"):
        read_samples(notlog)


def test_folders_are_searched_and_ambiguity_refused(runs, tmp_path):
    assert sorted(find_sample_files(runs["base"])) == ["lvbench", "videomme"]
    write_run(tmp_path / "two" / "a", BASE_VMME, BASE_LVB, date="2026-01-01")
    write_run(tmp_path / "two" / "b", BASE_VMME, BASE_LVB, date="2026-01-02")
    with pytest.raises(InputError, match="task 'lvbench' has 2 sample files"):
        find_sample_files(tmp_path / "two")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no \\*_samples_<task>.jsonl here"):
        find_sample_files(tmp_path / "empty")
    with pytest.raises(InputError, match="two runs would both be"):
        alignment_tax([f"a={runs['base']}", f"a={runs['ours']}"])
