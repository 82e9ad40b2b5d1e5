"""lmms-eval ``--log_samples`` files as predictions for every audit: a log written in lmms-eval's exact format (through
the exported task's own utils.py) audits to the same numbers as the `omniaudit judge` file with the same answers;
degenerate answers read as no answer; another task's, config's or build's log, or a partial one, is refused."""

import json

import numpy as np
import pandas as pd
import pytest
from lmms_eval_samples import write_log_samples
from scipy.special import softmax

from omniaudit.cli import main
from omniaudit.data_builders.interventions.diagnostic_answers import read_predictions
from omniaudit.errors import InputError
from omniaudit.evaluation.audit_outputs import audit_metrics
from omniaudit.evaluation.interventions.audit import load_diagnostic
from omniaudit.evaluation.lmms_eval import read_log_samples
from omniaudit.evaluation.lmms_eval_export import ExportOptions, export_lmms_eval
from omniaudit.runners import run_judge
from omniaudit.runners.items import load_items

# audit -> (planted scripted model, the audit command's flags for the dataset, its fast flags, NAME= per file)
AUDITS = {"preference": ("verbose", "--data", ["--n-resamples", "30", "--no-source-classifier", "--no-controls"]),
          "interventions": ("deaf", "--dataset", ["--n-resamples", "30"]),
          "protocols": ("label-follower", "--dataset", ["--n-resamples", "30"]),
          "composition": ("audio-dominant", "--dataset", [])}


@pytest.fixture(scope="module")
def datasets_(tmp_path_factory, intervention_dataset, protocol_dataset):
    from omniaudit.data_builders.composition import build_composition_dataset
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    root = tmp_path_factory.mktemp("lmms-ds")
    return {"preference": build_preference_dataset(root / "pref", spec=SyntheticSpec(n_pairs=40, seed=2)),
            "interventions": intervention_dataset, "protocols": protocol_dataset,
            "composition": build_composition_dataset(root / "comp", n_synthetic=12)}


def _audit(kind, dataset, files, out):
    _, flag, fast = AUDITS[kind]
    preds = [f"m={f}" for f in files] if kind != "interventions" else [str(files[0])]
    assert main(["audit", kind, flag, str(dataset), "--predictions", *preds, *fast, "--out", str(out)]) == 0
    return json.loads((out / "audit.json").read_text())


@pytest.mark.parametrize("kind", list(AUDITS))
def test_log_samples_audit_as_the_same_answers_from_omniaudit_judge(kind, datasets_, tmp_path):
    from omniaudit.audits import get

    dataset, model = datasets_[kind], AUDITS[kind][0]
    tasks = export_lmms_eval(dataset, tmp_path / "tasks", audit=kind)
    judged, logged = [], []
    for task in tasks:
        pred = tmp_path / f"{task.config}.jsonl"
        run_judge(dataset, task.config, f"scripted:{model}", pred)
        answers = {r["id"]: r["raw"] for r in map(json.loads, pred.read_text().splitlines())}
        judged.append(pred)
        logged.append(write_log_samples(tmp_path / "tasks" / task.task, tmp_path / "logs",
                                        lambda d, answers=answers: answers[d["id"]]))
    assert [t.config for t in tasks] == list(get(kind).item_configs)
    ours, theirs = (_audit(kind, dataset, f, tmp_path / n) for f, n in ((judged, "a"), (logged, "b")))
    numbers = audit_metrics(kind, ours)
    assert numbers and audit_metrics(kind, theirs) == numbers
    report = (tmp_path / "b" / "report.md").read_text()
    assert "lmms-eval:qwen2_5_omni" in report and f"task {tasks[0].task}, --log_samples" in report
    assert "/models/ckpt" not in report  # model_args' local paths are not published
    # the task's own metrics (lmms-eval's aggregate of each) show the planted model's shortcut
    results = json.loads(next((tmp_path / "logs").glob("*_results.json")).read_text())["results"]
    shown = {(t.config, m): results[t.task].get(f"{m},none") for t in tasks for m in ("accuracy", *SHORTCUT_METRICS)}
    assert {k: v for k, v in shown.items() if v is not None} == pytest.approx(PLANTED_SHOWS[kind])


SHORTCUT_METRICS = ("slot_a", "lock", "longer", "follow_cue", "cue_following", "avg_gap")
# audit -> its planted scripted model's (AUDITS) task metrics: the shortcut it takes in full, the oracle elsewhere
# (blueprint: the specialist's label is also the answer on 1 in 64 items that do not show it)
PLANTED_SHOWS = {
    "preference": {("judge", "accuracy"): 16 / 29, ("judge", "longer"): 1.0, ("judge", "lock"): 0.0,
                   ("judge", "slot_a"): 0.5},
    "interventions": {("diagnostic", "accuracy"): 3 / 7, ("diagnostic", "avg_gap"): 100.0},
    "protocols": {("blueprint", "accuracy"): 123 / 224, ("blueprint", "follow_cue"): 1.0,
                  ("blueprint", "cue_following"): 0.984375, ("reference", "accuracy"): 0.5,
                  ("reference", "follow_cue"): 1.0, ("reference", "cue_following"): 1.0,
                  ("pairwise", "accuracy"): 1.0, ("pairwise", "lock"): 0.0, ("pairwise", "slot_a"): 0.5,
                  ("cue_conflict", "accuracy"): 0.25, ("cue_conflict", "follow_cue"): 1.0,
                  ("cue_conflict", "cue_following"): 1.0},
    "composition": {("samples", "accuracy"): 0.0, ("ablations", "accuracy"): 2 / 3}}


@pytest.fixture(scope="module")
def diagnostic_task(intervention_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("lmms-iv") / "tasks"
    [task] = export_lmms_eval(intervention_dataset, out, ["diagnostic"], "interventions")
    return out / task.task


REPLIES = {"constant": lambda doc: "Audio", "empty": lambda doc: "  ", "echo": lambda doc: doc["prompt"]}


@pytest.mark.parametrize("kind", list(REPLIES))
def test_degenerate_replies_read_as_no_answer(kind, diagnostic_task, intervention_dataset, tmp_path):
    log = write_log_samples(diagnostic_task, tmp_path / "logs", REPLIES[kind], model=None)
    raw, _, note = read_log_samples(log)
    assert "provenance unknown" in note and raw["label"].isna().all() and raw["parsed"].isna().all()
    audit = _audit("interventions", intervention_dataset, [log], tmp_path / "r")
    assert audit["avg_gap"] in (0.0, None) and not any(audit["failure_modes"].values())


def test_multiple_choice_log_likelihoods_are_option_probabilities(protocol_dataset, tmp_path):
    [task] = export_lmms_eval(protocol_dataset, tmp_path / "tasks", ["pairwise"],
                              options=ExportOptions(output_type="multiple_choice"))
    rng = np.random.default_rng(0)
    logliks = {}

    def score(doc):
        logliks[doc["id"]] = rng.normal(-5, 2, size=len(doc["options"])).round(3).tolist()
        if len(logliks) == 1:  # the first document scores its options alike: no answer
            logliks[doc["id"]] = [-1.5] * len(doc["options"])
        return logliks[doc["id"]]

    log = write_log_samples(tmp_path / "tasks" / task.task, tmp_path / "logs", score)
    raw, _, _ = read_log_samples(log)
    items = {i.id: i for i in load_items(protocol_dataset, "pairwise")}
    for _, row in raw.iterrows():
        options = items[row["id"]].options
        if len(set(logliks[row["id"]])) == 1:
            assert row["option_probs"] is None and pd.isna(row["label"]) and row["parsed"] is False
            continue
        expected = softmax(logliks[row["id"]])
        assert np.allclose([row["option_probs"][o] for o in options], expected)
        assert row["label"] == options[int(np.argmax(expected))] and row["parsed"] is True and row["raw"] == ""


def test_foreign_partial_and_mislabelled_logs_are_refused(diagnostic_task, intervention_dataset, protocol_dataset,
                                                          tmp_path):
    other = tmp_path / "20260101_000000_samples_videomme.jsonl"  # a standard benchmark's log
    other.write_text(json.dumps({"doc_id": 0, "target": "A", "filtered_resps": "A", "doc_hash": "x",
                                 "videomme_perception_score": {"pred_answer": "A", "answer": "A"}}) + "\n")
    with pytest.raises(InputError, match="not of a task written by `omniaudit export lmms-eval`"):
        read_log_samples(other)
    proto = export_lmms_eval(protocol_dataset, tmp_path / "proto", ["pairwise"])[0]
    pairwise = write_log_samples(tmp_path / "proto" / proto.task, tmp_path / "p", lambda d: "A")
    partial = write_log_samples(diagnostic_task, tmp_path / "partial", lambda d: "yes", limit=5)
    renamed = tmp_path / f"20260101_000000_samples_{proto.task}.jsonl"
    renamed.write_text(partial.read_text())
    diagnostic = load_diagnostic(intervention_dataset)
    for log, says in ((pairwise, "answer config 'pairwise', but this audit reads 'diagnostic'"),
                      (partial, "the run is incomplete"), (renamed, "is named for task")):
        with pytest.raises(InputError, match=says):
            read_predictions(log, diagnostic, dataset=intervention_dataset)
    assert main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(partial),
                 "--partial", "--n-resamples", "20", "--out", str(tmp_path / "r")]) == 0
