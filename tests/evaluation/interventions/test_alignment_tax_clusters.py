"""Video-MME's video id sits in the sample's ``doc`` (lmms-eval ``--log_samples``), not in the metric
dict; the alignment-tax CIs must resample videos, not questions."""

import json

import numpy as np
import pytest

from omniaudit.evaluation.interventions.alignment_tax import alignment_tax, read_samples
from omniaudit.evaluation.stats import percentile_ci, resample_indices

N_VIDEOS, PER_VIDEO = 12, 3


def outcomes(seed):
    """Correctness per (video, question): strongly shared within a video (easy and hard videos)."""
    rng = np.random.default_rng(seed)
    easy = rng.random(N_VIDEOS) < 0.5
    return np.array([[float(rng.random() < (0.9 if e else 0.2)) for _ in range(PER_VIDEO)] for e in easy])


def write_videomme(path, ok, doc_keys=("videoID", "video_id", "question_id"), metric_question_id=True):
    """lmms-eval's record: doc_id, doc (the dataset row: videoID, video_id, question_id, ...), target, resps, and
    videomme_process_results' dict (question_id, duration, category, ..., pred_answer, answer; no video id)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        doc_id = 0
        for v in range(N_VIDEOS):
            for q in range(PER_VIDEO):
                qid = f"{v + 1:03d}-{q + 1}"
                doc = {"videoID": f"yt{v:05d}xyz", "video_id": f"{v + 1:03d}", "question_id": qid,
                       "duration": "short", "domain": "x", "question": "?", "options": ["A. a", "B. b"],
                       "answer": "A"}
                doc = {k: val for k, val in doc.items() if k in doc_keys or k not in ("videoID", "video_id",
                                                                                        "question_id")}
                score = {"duration": "short", "category": "x", "sub_category": "y", "task_category": "z",
                         "pred_answer": "A" if ok[v, q] else "B", "answer": "A"}
                if metric_question_id:
                    score["question_id"] = qid
                fh.write(json.dumps({"doc_id": doc_id, "doc": doc, "target": "A", "arguments": [],
                                     "resps": [["A"]], "filtered_resps": ["A"], "doc_hash": "h",
                                     "videomme_perception_score": score}) + "\n")
                doc_id += 1
    return path


def video_bootstrap(values, n_resamples=2000, seed=0):
    """Reference loop: resample videos, each with its three questions."""
    sums, counts = values.sum(axis=1), np.full(N_VIDEOS, PER_VIDEO)
    stats = [100 * sums[i].sum() / counts[i].sum() for i in resample_indices(N_VIDEOS, n_resamples, seed)]
    return list(np.percentile(stats, [2.5, 97.5]))


def test_videomme_records_cluster_by_the_docs_video_id(tmp_path):
    base, ours = outcomes(0), outcomes(1)
    fb = write_videomme(tmp_path / "base/m/2026_samples_videomme.jsonl", base)
    fo = write_videomme(tmp_path / "ours/m/2026_samples_videomme.jsonl", ours)
    s = read_samples(fb)
    assert s.cluster_key == "videoID" and len(set(s.clusters)) == N_VIDEOS  # was doc_id: 36 "clusters"
    r = alignment_tax([f"base={fb.parent.parent}", f"ours={fo.parent.parent}"])
    task = r["runs"]["base"]["tasks"]["videomme"]
    assert task["clusters"] == N_VIDEOS and task["cluster_key"] == "videoID"
    assert task["ci"] == pytest.approx(video_bootstrap(base))
    # the paired difference resamples videos too (both runs' questions of a drawn video)
    diff = ours - base
    # paired on shared doc ids, which come sorted as strings ("0", "1", "10", ...): videos in that first-seen order
    order = list(dict.fromkeys(int(d) // PER_VIDEO for d in sorted(map(str, range(N_VIDEOS * PER_VIDEO)))))
    diff = diff[order]
    draws = resample_indices(N_VIDEOS, 2000, 0)
    ref = percentile_ci(np.array([100 * diff[i].sum() / (PER_VIDEO * N_VIDEOS) for i in draws])[:, None])
    d = r["deltas"]["ours"]["videomme"]
    assert d["ci"] == pytest.approx([ref[0][0], ref[1][0]])
    # questions of one video are not independent: the per-question CI was too narrow
    by_question = percentile_ci(np.array([100 * diff.ravel()[i].mean() for i in
                                          resample_indices(diff.size, 2000, 0)])[:, None])
    assert d["ci"][1] - d["ci"][0] > 1.2 * (by_question[1][0] - by_question[0][0])


def test_fallbacks_question_id_prefix_then_doc_id(tmp_path):
    ok = outcomes(2)
    # no video id anywhere, but Video-MME question ids "001-2": clustered by their video part
    f = write_videomme(tmp_path / "a/x_samples_videomme.jsonl", ok, doc_keys=("question_id",))
    s = read_samples(f)
    assert s.cluster_key == "question_id prefix" and sorted(set(s.clusters))[:2] == ["001", "002"]
    # video_id in the doc only
    f = write_videomme(tmp_path / "b/x_samples_videomme.jsonl", ok, doc_keys=("video_id",), metric_question_id=False)
    s = read_samples(f)
    assert s.cluster_key == "video_id" and len(set(s.clusters)) == N_VIDEOS
    # nothing names a video: one cluster per document
    f = write_videomme(tmp_path / "c/x_samples_videomme.jsonl", ok, doc_keys=(), metric_question_id=False)
    s = read_samples(f)
    assert s.cluster_key == "doc_id" and len(set(s.clusters)) == N_VIDEOS * PER_VIDEO
