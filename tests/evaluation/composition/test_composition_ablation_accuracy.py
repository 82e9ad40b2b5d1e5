"""Accuracy under the bypass-test ablations: graded like the samples, with CIs and a paired drop, each checked against
an independent computation (SciPy's Wilson interval and paired bootstrap, a loop-based cluster bootstrap)."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from omniaudit.cli import main
from omniaudit.evaluation.composition.ablation_accuracy import kind_accuracy


def _rows(intact, ablated, runs=None):
    n = len(intact)
    return pd.DataFrame({"run": runs if runs is not None else ["r"] * n,
                         "sample_id": [f"s{k % (n if runs is None else n // 2)}" for k in range(n)],
                         "correct": np.asarray(ablated, bool), "intact": np.asarray(intact, bool)})


def test_one_run_matches_scipy_wilson_and_paired_bootstrap():
    rng = np.random.default_rng(5)
    intact = rng.random(40) < 0.7
    ablated = intact & (rng.random(40) < 0.6)
    e = kind_accuracy(_rows(intact, ablated), n_resamples=20000, seed=0)
    k, n = int(ablated.sum()), 40
    assert e["accuracy"] == pytest.approx(100 * k / n) and e["ci_method"] == "Wilson 95%"
    ci = stats.binomtest(k, n).proportion_ci(method="wilson")
    assert e["ci"] == pytest.approx([100 * ci.low, 100 * ci.high])
    assert e["drop"]["value"] == pytest.approx(100 * (intact.mean() - ablated.mean()))
    ref = stats.bootstrap((intact.astype(float), ablated.astype(float)), lambda x, y: np.mean(x - y), paired=True,
                          vectorized=False, n_resamples=20000, method="percentile", random_state=1)
    # the drop's bootstrap distribution lives on a 1/40 grid: the two random streams agree to one grid step
    assert e["drop"]["ci"] == pytest.approx([100 * ref.confidence_interval.low, 100 * ref.confidence_interval.high],
                                            abs=2.6)
    assert e["survival"] == {"rate": pytest.approx(k / intact.sum()), "kept": k, "n_intact_correct": int(intact.sum())}


def _loop_cluster_bootstrap(rows: pd.DataFrame, n_resamples: int, seed: int) -> list[float]:
    """An independent cluster bootstrap: samples drawn one by one, their copies of every run pooled."""
    groups = {sid: g for sid, g in rows.groupby("sample_id")}
    ids = sorted(groups)
    rng = np.random.default_rng(seed)
    drops = []
    for _ in range(n_resamples):
        drawn = pd.concat([groups[ids[i]] for i in rng.integers(0, len(ids), len(ids))])
        drops.append(100 * (drawn["intact"].mean() - drawn["correct"].mean()))
    return list(np.percentile(drops, [2.5, 97.5]))


def test_repeated_runs_are_clustered_by_sample():
    rng = np.random.default_rng(2)
    intact = rng.random(60) < 0.6  # two runs of 30 samples
    ablated = rng.random(60) < 0.4
    rows = _rows(intact, ablated, runs=["a"] * 30 + ["b"] * 30)
    e = kind_accuracy(rows, n_resamples=2000, seed=0)
    assert e["runs"] == 2 and e["n_samples"] == 30 and "bootstrap" in e["ci_method"]
    assert e["by_run"] == {"a": pytest.approx(100 * ablated[:30].mean()),
                           "b": pytest.approx(100 * ablated[30:].mean())}
    assert e["drop"]["ci"] == pytest.approx(_loop_cluster_bootstrap(rows, 2000, 7), abs=2.5)
    # a run repeated verbatim adds no information: the clustered CI is the single run's, not narrower
    once = _rows(intact[:30], ablated[:30])
    twice = pd.concat([once.assign(run="a"), once.assign(run="b")])
    assert kind_accuracy(twice, 2000, 0)["drop"]["ci"] == pytest.approx(kind_accuracy(once, 2000, 0)["drop"]["ci"])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("ablation_accuracy") / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--out", str(out)]) == 0  # the default build
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")),
                              columns=["id", "answer", "question", "answer_vocabulary"])
    ablations = pd.read_parquet(next((out / "ablations").glob("*.parquet")), columns=["id", "sample_id", "ablation"])
    return out, samples, ablations


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _wrong(samples, sample_id) -> str:
    """A wrong answer the readers read: the gold count plus one, or another colour of the template's vocabulary."""
    from omniaudit.answer_match import normalize

    row = samples.set_index("id").loc[sample_id]
    gold = normalize(str(row["answer"]))
    return str(int(gold) + 1) if gold.isdigit() else sorted(v for v in row["answer_vocabulary"] if v != gold)[0]


def _run(tmp_path, name, samples, ablations, intact_right, ablated_answer):
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    index = {i: k for k, i in enumerate(samples["id"])}
    s = _write(tmp_path / f"{name}_s.jsonl", [{"id": i, "raw": gold[i] if intact_right(index[i]) else
                                               _wrong(samples, i)} for i in samples["id"]])
    a = _write(tmp_path / f"{name}_a.jsonl", [{"id": r.id, "raw": ablated_answer(index[r.sample_id], r.ablation,
                                                                                 gold[r.sample_id]).format(
                                                   wrong=_wrong(samples, r.sample_id))}
                                              for r in ablations.itertuples()])
    return [f"m@{name}={s}", f"m@{name}={a}"]


def test_audit_grades_every_ablation_kind(dataset, tmp_path):
    out, samples, ablations = dataset
    n = len(samples)

    def run_a(k, kind, gold):  # mute_audio right on k % 3 == 0, drop_image always right, text_only blank
        return {"mute_audio": gold if k % 3 == 0 else "{wrong}", "drop_image": gold, "text_only": ""}[kind]

    def run_b(k, kind, gold):
        return {"mute_audio": gold if k % 3 == 0 else "{wrong}", "drop_image": gold, "text_only": "{wrong}"}[kind]

    def run_c(k, kind, gold):  # run b, but no reader reads its text_only answers
        return "no idea" if kind == "text_only" else run_b(k, kind, gold)

    specs = (_run(tmp_path, "a", samples, ablations, lambda k: k % 2 == 0, run_a)
             + _run(tmp_path, "b", samples, ablations, lambda k: True, run_b))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *specs, "--out",
                 str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    acc = result["ablation_accuracy"]["m"]
    assert set(acc) == set(ablations["ablation"]) == {"mute_audio", "drop_image", "text_only"}
    intact = np.array([k % 2 == 0 for k in range(n)] + [True] * n)
    mute = np.array([k % 3 == 0 for k in range(n)] * 2)
    e = acc["mute_audio"]
    assert (e["n_samples"], e["n_copies"], e["runs"]) == (n, 2 * n, 2)
    assert e["accuracy"] == pytest.approx(100 * mute.mean()) and e["intact"] == pytest.approx(100 * intact.mean())
    assert e["drop"]["value"] == pytest.approx(100 * (intact.mean() - mute.mean()))
    rows = pd.DataFrame({"sample_id": list(range(n)) * 2, "intact": intact, "correct": mute})
    assert e["drop"]["ci"] == pytest.approx(_loop_cluster_bootstrap(rows, 1500, 11), abs=6.0)
    assert e["drop"]["ci"][0] < e["drop"]["value"] < e["drop"]["ci"][1]
    assert acc["drop_image"]["accuracy"] == 100.0 and acc["drop_image"]["drop"]["value"] < 0
    text = acc["text_only"]  # run a's blank answers are no answers: only run b's copies are graded
    assert (text["runs"], text["n_copies"], text["n_unanswered"], text["accuracy"]) == (1, n, n, 0.0)
    assert text["drop"] == {**text["drop"], "value": 100.0, "ci": [100.0, 100.0]}
    ci = stats.binomtest(0, n).proportion_ci(method="wilson")
    assert text["ci"] == pytest.approx([100 * ci.low, 100 * ci.high])
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "## Accuracy under ablations" in report and "| m | mute_audio |" in report
    graded = pd.read_csv(tmp_path / "rep" / "graded_ablations.csv")
    assert len(graded) == len(ablations) * 2 - n and set(graded["run"]) == {"m@a", "m@b"}
    # answers no reader reads are ungraded, left out (never read as wrong); the grader judges them like intact ones:
    # a judge saying Yes makes them right
    unread = (_run(tmp_path, "a", samples, ablations, lambda k: k % 2 == 0, run_a)
              + _run(tmp_path, "c", samples, ablations, lambda k: True, run_c))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *unread, "--out",
                 str(tmp_path / "unread")]) == 0
    alone = json.loads((tmp_path / "unread" / "audit.json").read_text())
    text = alone["ablation_accuracy"]["m"]["text_only"]
    assert (text["n_copies"], text["n_unanswered"], text["n_ungraded"], text["accuracy"]) == (0, n, n, None)
    mute_c = alone["ablation_accuracy"]["m"]["mute_audio"]  # the other kinds are as before
    assert alone["ablation_judging"]["n_ungraded"] == n and (mute_c["accuracy"], mute_c["drop"]) == (e["accuracy"],
                                                                                                      e["drop"])
    assert alone["grading"]["note"] == f"{n} of {8 * n} rows ungraded: no grader; pass --grader SPEC"  # 2 x 4n
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *unread, "--grader",
                 "scripted:always-a", "--out", str(tmp_path / "judged")]) == 0
    judged = json.loads((tmp_path / "judged" / "audit.json").read_text())
    assert judged["ablation_accuracy"]["m"]["text_only"]["accuracy"] == 100.0
    assert judged["ablation_judging"]["n_judged"] == n and judged["ablation_judging"]["n_ungraded"] == 0


@pytest.mark.parametrize("answer", ["", "no idea", "echo"])
def test_degenerate_answers_are_no_finding(dataset, tmp_path, answer):
    out, samples, ablations = dataset
    question = dict(zip(samples["id"], samples["question"], strict=True))
    say = (lambda sid: question[sid]) if answer == "echo" else (lambda sid: answer)
    s = _write(tmp_path / "s.jsonl", [{"id": i, "raw": say(i)} for i in samples["id"]])
    a = _write(tmp_path / "a.jsonl", [{"id": r.id, "raw": say(r.sample_id)} for r in ablations.itertuples()])
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", f"m={s}", f"m={a}", "--out",
                 str(tmp_path / "rep")]) == 0
    acc = json.loads((tmp_path / "rep" / "audit.json").read_text())["ablation_accuracy"]["m"]
    copies = ablations.groupby("ablation").size()
    # blank, constant and echoed answers are no answers: every kind is listed, nothing is graded, no drop is read
    assert set(acc) == set(copies.index)
    for kind, e in acc.items():
        assert (e["n_copies"], e["accuracy"], e["drop"]["value"]) == (0, None, None)
        assert e["n_unanswered"] + e["n_intact_unanswered"] == copies[kind]
    assert "no ablation answers were given" in (tmp_path / "rep" / "report.md").read_text()


def test_a_pair_without_an_intact_answer_is_left_out_not_read_as_a_negative_drop(dataset, tmp_path):
    out, samples, ablations = dataset
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    question = dict(zip(samples["id"], samples["question"], strict=True))
    # intact: gold, blank, byte noise or the question echoed back; every ablated copy right, but one kind echoes
    say = ["{gold}", "", "xq zzk pwt vvb", "{question}"]
    intact = {i: say[k % 4].format(gold=gold[i], question=question[i]) for k, i in enumerate(samples["id"])}
    s = _write(tmp_path / "s.jsonl", [{"id": i, "raw": intact[i]} for i in samples["id"]])
    a = _write(tmp_path / "a.jsonl", [{"id": r.id, "raw": question[r.sample_id] if r.ablation == "text_only"
                                       else gold[r.sample_id]} for r in ablations.itertuples()])
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", f"m={s}", f"m={a}", "--out",
                 str(tmp_path / "rep")]) == 0
    acc = json.loads((tmp_path / "rep" / "audit.json").read_text())["ablation_accuracy"]["m"]
    answered = sum(k % 4 == 0 for k in range(len(samples)))
    for kind in ("mute_audio", "drop_image"):
        e = acc[kind]  # scored wrong, the missing intact answers made a significant drop of about -75 points
        assert (e["n_copies"], e["n_unanswered"], e["n_intact_unanswered"]) == (answered, 0, len(samples) - answered)
        assert e["accuracy"] == e["intact"] == 100.0 and e["drop"] == {**e["drop"], "value": 0.0, "ci": [0.0, 0.0]}
    text = acc["text_only"]  # the echoed copies are no answers either: listed, counted, not graded
    assert (text["n_copies"], text["n_unanswered"], text["accuracy"]) == (0, len(samples), None)
    report = (tmp_path / "rep" / "report.md").read_text()
    assert f"| m | text_only | 0 | 0 | n/a | - | - | - | {len(samples)} | 0 | 0 |" in report
