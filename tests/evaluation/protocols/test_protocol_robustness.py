"""Judge-protocol audit: judge modes against the paper's Tables III-IV, the §V-B stability table and majority vote,
paired cluster-bootstrap differences, Table IV n / parse cells, the LLM extractor and the one-command run."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.evaluation import stats
from omniaudit.evaluation.protocols import modes as pm
from omniaudit.evaluation.protocols.audit import (
    ProtocolAuditConfig,
    audit_judge,
    audit_protocols,
    read_judge_predictions,
)
from omniaudit.evaluation.protocols.report import protocols_report

FAST = ProtocolAuditConfig(n_resamples=300, seed=3)

# Table IV (concat): judge -> task -> (lock, g)
TABLE_IV = {
    "Gemini-3-Flash": {"cleanness": (0.05, 0.98), "emotion": (0.17, 0.92), "bvcc": (0.42, 0.69),
                       "speaker": (0.17, 0.88)},
    "GPT-Audio": {"cleanness": (0.97, 0.51), "emotion": (0.36, 0.54), "bvcc": (0.76, 0.52), "speaker": (0.82, 0.51)},
    "Qwen3-Omni-Instruct": {"cleanness": (0.38, 0.26), "emotion": (0.27, 0.87), "bvcc": (0.55, 0.58),
                            "speaker": (0.49, 0.64)},
    "Qwen3-Omni-Thinking": {t: (1.00, 0.50) for t in ("cleanness", "emotion", "bvcc", "speaker")},
    "Audio-Flamingo-3": {"cleanness": (1.00, 0.50), "emotion": (0.10, 0.95), "bvcc": (0.87, 0.53),
                         "speaker": (1.00, 0.50)},
    "Voxtral-Small-24B": {"cleanness": (0.60, 0.60), "emotion": (0.47, 0.60), "bvcc": (0.87, 0.48),
                          "speaker": (0.80, 0.51)},
}


def test_pairwise_modes_reproduce_the_papers_reading_of_table_iv():
    modes = {j: {t: pm.pairwise_mode(*v) for t, v in tasks.items()} for j, tasks in TABLE_IV.items()}
    # §V-D: Gemini engaged; Qwen3-Omni-Thinking fully locked; Audio-Flamingo-3 fully locked on Cleanness and
    # Speaker but g = 0.95 on Emotion; GPT-Audio locked on Cleanness, BVCC, Speaker; Voxtral locked on BVCC and
    # Speaker, not on Cleanness / Emotion (task-dependent); Qwen3-Omni-Instruct intermediate on Cleanness (g 0.26)
    assert set(modes["Gemini-3-Flash"].values()) == {"engaged"}
    assert set(modes["Qwen3-Omni-Thinking"].values()) == {"fully locked"}
    assert modes["Audio-Flamingo-3"] == {"cleanness": "fully locked", "emotion": "engaged", "bvcc": "locked",
                                         "speaker": "fully locked"}
    assert [modes["GPT-Audio"][t] for t in ("cleanness", "bvcc", "speaker")] == ["locked"] * 3
    assert modes["Voxtral-Small-24B"] == {"cleanness": "intermediate", "emotion": "intermediate", "bvcc": "locked",
                                          "speaker": "locked"}
    assert modes["Qwen3-Omni-Instruct"]["cleanness"] == "intermediate"
    overall = {j: pm.overall_mode(m) for j, m in modes.items()}
    assert overall == {"Gemini-3-Flash": "engaged", "GPT-Audio": "locked", "Qwen3-Omni-Instruct": "intermediate",
                       "Qwen3-Omni-Thinking": "fully locked", "Audio-Flamingo-3": "fully locked",
                       "Voxtral-Small-24B": "task-dependent"}
    assert pm.pairwise_mode(1.00, 0.50) == "fully locked" and pm.pairwise_mode(None, 0.5) is None


# Table III raw RF (before, after, system, rubric)
TABLE_III = {
    "emotion": {"Gemini-3-Flash": (0.68, 0.63, 0.85, 0.58), "GPT-Audio": (0.95, 0.45, 0.87, 0.99),
                "Qwen3-Omni-Instruct": (0.77, 0.87, 0.64, 0.97), "Qwen3-Omni-Thinking": (0.30, 0.49, 0.18, 0.57),
                "Audio-Flamingo-3": (0.16, 0.41, 0.27, 0.33), "Voxtral-Small-24B": (0.05, 0.25, 0.04, 0.09)},
    "language": {"Gemini-3-Flash": (0.0, 0.0, 0.0, 0.0), "GPT-Audio": (0.12, 0.10, 0.12, 0.27),
                 "Qwen3-Omni-Instruct": (0.0, 0.04, 0.0, 0.18), "Qwen3-Omni-Thinking": (0.15, 0.11, 0.09, 0.33),
                 "Audio-Flamingo-3": (0.07, 0.60, 0.34, 0.89), "Voxtral-Small-24B": (0.08, 0.08, 0.04, 0.11)},
}


def test_label_following_reproduces_the_papers_counts_on_table_iii():
    k = {"emotion": 8, "language": 4}
    following = {a: sorted(j for j, rf in judges.items() if pm.label_mode(max(rf), k[a]) == "label-following")
                 for a, judges in TABLE_III.items()}
    # §V-C: "five of six judges reach a chance-normalized rate above 0.30 in at least one placement" (emotion);
    # "on language, Audio-Flamingo-3 is the only judge whose reference-follow rate exceeds chance"
    assert len(following["emotion"]) == 5 and "Voxtral-Small-24B" not in following["emotion"]
    assert following["language"] == ["Audio-Flamingo-3"]
    assert pm.follow_normalized(0.75, 2) == 0.5  # K = 2: chance 1/2


def items_frame() -> pd.DataFrame:
    """A small protocol item set: cue conflict (3 clips, K = 3) and pairwise (2 trials x 2 formats x 2 orders)."""
    rows = []
    labels = ["angry", "happy", "sad"]
    for c, gold in enumerate(["angry", "happy", "sad"]):
        wrong = labels[(c + 1) % 3]
        for condition in ("none", "conf_spec", "conf_ref", "conf_both"):
            rows.append({"id": f"cc/{c}/{condition}", "config": "cue_conflict", "attribute": "emotion",
                         "condition": condition, "clip_id": f"clip{c}", "options": labels, "k": 3, "gold": gold,
                         "cue": wrong})
    for t in range(2):
        for fmt in ("concat", "native"):
            for order in ("AB", "BA"):
                gold = "A" if (order == "AB") == (t == 0) else "B"
                rows.append({"id": f"pw/{t}/{fmt}/{order}", "config": "pairwise", "task": "cleanness",
                             "trial": f"cleanness/{t:03d}/{fmt}", "order": order, "format": fmt,
                             "clip_id": f"c{t}|c{t}#noisy", "options": ["A", "B"], "k": 2, "gold": gold})
    frame = pd.DataFrame(rows).reindex(columns=["id", "config", "attribute", "task", "condition", "placement",
                                                "clip_id", "trial", "order", "format", "options", "k", "gold", "cue"])
    for col in ("task", "placement", "trial", "order", "format", "attribute", "condition", "cue"):
        frame[col] = frame[col].astype(object).where(frame[col].notna(), None)
    return frame


def preds(answers: dict[str, list]) -> pd.DataFrame:
    """id -> one label per run."""
    return pd.DataFrame([{"id": i, "label": lab, "run": r} for i, labs in answers.items()
                         for r, lab in enumerate(labs)])


def test_stability_table_and_majority_vote_by_hand():
    items = items_frame()
    cc = items[items["config"] == "cue_conflict"]
    # conf_spec: 3 runs; clip0 follows the cue (happy) in runs 0, 1; clip1 in run 2 only; clip2 never (unparsed once)
    answers = {i: [g, g, g] for i, g in zip(cc["id"], cc["gold"], strict=True)}
    answers["cc/0/conf_spec"] = ["happy", "happy", "angry"]
    answers["cc/1/conf_spec"] = ["happy", "happy", "sad"]
    answers["cc/2/conf_spec"] = [None, "sad", "sad"]
    pred = preds(answers)
    res = audit_protocols(items[items["config"] == "cue_conflict"], {"j": pred},
                          ProtocolAuditConfig(n_resamples=300, seed=3, min_stability_n=1))  # cells of 3 clips
    st = res["stability"]["j"]
    cell = st["cells"]["follow_cue/emotion/conf_spec"]
    # per run: run0 follows on clip0 (happy = cue of angry) -> 1/3; run1 1/3; run2 clip1 says sad = its cue -> 1/3
    assert cell["runs"] == pytest.approx([1 / 3, 1 / 3, 1 / 3]) and cell["range"] == pytest.approx(0)
    # majority: clip0 happy (follows), clip1 happy (gold, no), clip2 sad (gold) -> 1/3; pooled 3/9
    assert cell["majority"] == pytest.approx(1 / 3) and cell["shift"] == pytest.approx(0)
    acc = st["cells"]["accuracy/cue_conflict/emotion/conf_spec"]
    # gold answers per run: run0 clip1 (happy); run1 clip1, clip2; run2 clip0, clip2 -> 1/3, 2/3, 2/3
    assert acc["runs"] == pytest.approx([1 / 3, 2 / 3, 2 / 3]) and acc["range"] == pytest.approx(1 / 3)
    assert acc["pooled"] == pytest.approx(5 / 9) and acc["majority"] == pytest.approx(2 / 3)
    assert acc["shift"] == pytest.approx(2 / 3 - 5 / 9)
    assert st["max_range"]["value"] == pytest.approx(1 / 3) and st["runs"] == 3
    assert res["accuracy"]["j"]["cue_conflict"]["emotion"]["conf_spec"]["n"] == 3  # items, not item-runs
    # majority vote ties go to the earliest run; an unparsed answer is a vote
    mv = pm.majority_vote(preds({"a": [None, "x", None, "y"], "b": ["x", "y"], "c": ["y", None, None]}))
    assert dict(zip(mv["id"], mv["label"], strict=True)) == {"a": None, "b": "x", "c": None}


def test_paired_differences_share_one_resample_matrix():
    items = items_frame()
    answers = {}
    for i, cond, gold, cue in items[["id", "condition", "gold", "cue"]].itertuples(index=False):
        if i.startswith("cc/"):
            answers[i] = [cue if cond == "conf_spec" or (cond == "conf_ref" and i.startswith("cc/0")) else gold]
        else:  # trial 0 locked to A in concat only; everything else gold
            answers[i] = ["A" if i.startswith("pw/0/concat") else gold]
    res = audit_judge(items, preds(answers), FAST)
    d = res["spec_minus_ref"]["emotion"]
    assert d["value"] == pytest.approx(1 - 1 / 3)
    # reference: the same two ratios resampled by clip with the same seed, differenced resample by resample
    follow = np.zeros((2, 3))
    follow[0] = 1.0
    follow[1, 0] = 1.0
    point, samples = stats.cluster_ratio_resamples(follow, np.ones((2, 3)), FAST.n_resamples, FAST.seed)
    assert d["ci"] == pytest.approx(list(stats.percentile_ci(samples[:, 0] - samples[:, 1])))
    lock = res["concat_minus_native"]["lock"]["cleanness"]
    assert lock["value"] == pytest.approx(0.5 - 0.0)  # concat: trial 0 locked of 2; native: none
    assert res["lock"]["concat"]["cleanness"]["n"] == 2 and res["gold_aligned"]["native"]["cleanness"]["value"] == 1


def test_report_puts_n_and_parse_rate_beside_every_table_iv_cell_and_lists_modes():
    items = items_frame()
    answers = {i: ["A", None] if i.startswith("pw/1/native/BA") else ["A", "A"]
               for i in items.loc[items["config"] == "pairwise", "id"]}
    res = audit_protocols(items, {"always-a": preds(answers)}, FAST)
    report = protocols_report({"dataset": "d", **res})
    # native: trial 1 has BA unparsed in run 1, so lock counts 2 trials x 2 runs - 1 = 3 (trial, run) of 2 trials
    assert "1.00 [n=2, parse 1.00]" in report  # concat lock: 2 trials, every answer parsed
    assert "[n=4, parse 0.88]" in report  # native g: 4 ordered items, 7 of 8 answers parsed
    assert "## Judge modes" in report and "fully locked" in report and "## Run stability" in report


def test_llm_extractor_reads_free_text_answers(tmp_path):
    items = items_frame()
    rows = [{"id": i, "raw": "I would go with the first option." if k % 2 else "", "label": None, "parsed": False}
            for k, i in enumerate(items.loc[items["config"] == "cue_conflict", "id"])]
    path = tmp_path / "free.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = read_judge_predictions([f"j={path}"], items)["j"]
    assert got["label"].isna().all()
    got = read_judge_predictions([f"j={path}"], items, extractor="scripted:always-a")["j"]
    # always-a names the first option (angry) for the non-empty answers; empty answers stay unparsed
    assert list(got["label"]) == [("angry" if k % 2 else None) for k in range(len(rows))]
    assert got.attrs["extracted"] == len(rows) // 2


def test_run_protocols_judges_every_config_with_several_judges_and_runs(protocol_dataset, tmp_path, capsys):
    out = tmp_path / "study"
    assert main(["run-protocols", "--dataset", str(protocol_dataset), "--judges", "scripted:always-a",
                 "rnd=scripted:random", "--runs", "3", "--temperature", "0.7", "--seed", "5", "--n-resamples", "100",
                 "--out", str(out)]) == 0
    files = sorted(p.name for p in (out / "predictions").iterdir())
    assert files == sorted(f"{n}.{c}.jsonl" for n in ("always-a", "rnd")
                           for c in ("blueprint", "reference", "pairwise", "cue_conflict"))
    res = json.loads((out / "audit" / "audit.json").read_text())
    assert res["judges"] == ["always-a", "rnd"] and res["runs"] == {"always-a": 3, "rnd": 3}
    assert res["stability"]["always-a"]["max_range"]["value"] == 0  # a deterministic judge
    assert res["stability"]["rnd"]["max_range"]["value"] > 0
    assert res["sampling"]["rnd"]["temperature"] == 0.7 and res["sampling"]["rnd"]["seed"] == [5, 6, 7]
    assert res["modes"]["always-a"]["pairwise"]["concat"]["mode"] == "fully locked"
    assert "Run stability" in (out / "audit" / "report.md").read_text()
    assert main(["run-protocols", "--dataset", str(protocol_dataset), "--judges", "scripted:oracle",
                 "--conditions", "conf_spec", "--no-audit", "--out", str(tmp_path / "one")]) == 0
    assert [p.name for p in (tmp_path / "one" / "predictions").iterdir()] == ["oracle.cue_conflict.jsonl"]
