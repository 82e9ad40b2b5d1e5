"""Bookkeeping of models and runs in `audit composition`: models named by Hub repo id stay apart
(`NAME@RUN=FILE`), accuracy and tables are per model, a bare --attention model never mixes models' correctness, and
the C3PO decomposition compares answers by graded equivalence against a stability floor."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.composition.failure_modes import (
    AnswerMatcher,
    decompose,
    floor_check,
    mode_of,
    move_rates,
    stability_floor,
    wilson,
)

SEVEN, THREE = "Qwen/Qwen2.5-Omni-7B", "Qwen/Qwen2.5-Omni-3B"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("bookkeeping") / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--out", str(out)]) == 0
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")))
    ablations = pd.read_parquet(next((out / "ablations").glob("*.parquet")), columns=["id", "sample_id", "ablation"])
    return out, samples, ablations


def _wrong(samples, k: int, which: int = 0) -> str:
    """A wrong answer to sample ``k`` the audit's readers read (a count beside the gold count, another colour of the
    template's vocabulary): an answer they cannot read is ungraded, neither right nor wrong."""
    from omniaudit.answer_match import normalize

    row = samples.iloc[k]
    gold = normalize(str(row["answer"]))
    if gold.isdigit():
        return str(int(gold) + 1 + which)
    others = sorted(v for v in row["answer_vocabulary"] if normalize(str(v)) != gold)
    return others[which % len(others)]


def _write(path, samples, ablations, full, ablated):
    """A run's answers: ``full(k, sample_id)`` to each sample, ``ablated(k, name)`` to each ablation."""
    ids = list(samples["id"])
    rows = [{"id": i, "raw": full(k, i)} for k, i in enumerate(ids)]
    rows += [{"id": a.id, "raw": ablated(ids.index(a.sample_id), a.ablation)} for a in ablations.itertuples()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_two_models_named_by_repo_id_stay_two_models(dataset, tmp_path, capsys):
    """Before: `MODEL/RUN=FILE` cut `Qwen/Qwen2.5-Omni-7B` at its '/': one model "Qwen" whose stability floor compared
    the 7B with the 3B (100%), and Table 12 said "models 1"."""
    out, samples, ablations = dataset
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    # 7B: right on even samples, the same answers in both runs (floor 0); 3B: never right, a different wrong answer
    # by run; both keep their wrong answer (the first) without the media, and give the gold with them
    files = {}
    for model, run, wrong in ((SEVEN, "r1", 0), (SEVEN, "r2", 0), (THREE, "r1", 0), (THREE, "r2", 1)):
        right = (lambda k: k % 2 == 0) if model == SEVEN else (lambda k: False)
        files[model, run] = _write(tmp_path / f"{model.split('/')[1]}-{run}.jsonl", samples, ablations,
                                   lambda k, i, right=right, wrong=wrong: gold[i] if right(k) else _wrong(
                                       samples, k, wrong),
                                   lambda k, name: _wrong(samples, k) if name == "text_only" else gold[samples.iloc[
                                       k]["id"]])
    specs = [f"{m}@{r}={f}" for (m, r), f in files.items()]
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *specs, "--out",
                 str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert list(result["models"]) == [SEVEN, THREE] and "Qwen" not in result["models"]
    assert result["models"][SEVEN]["runs"] == [f"{SEVEN}@r1", f"{SEVEN}@r2"]
    n = len(samples)
    assert result["models"][SEVEN]["accuracy"]["overall"]["mean"] == pytest.approx(100 * np.mean(
        [k % 2 == 0 for k in range(n)]))
    assert result["models"][THREE]["accuracy"]["overall"]["mean"] == 0.0
    floor7, floor3 = (result["models"][m]["stability_floor"] for m in (SEVEN, THREE))
    assert floor7["floor"] == 0.0 and floor7["n_pairs"] == 2 * (n - (n + 1) // 2)  # each run vs the other
    assert floor3["floor"] == 1.0  # its two runs answer "no" and "nope": the 3B's own noise, not the 7B's answers
    dec = result["failure_decomposition"]
    assert dec["combined"]["overall"]["n_models"] == 2
    assert all(v["n_models"] == 2 for t, v in dec["combined"]["by_template"].items()
               if t in result["models"][SEVEN]["failure_modes"]["by_template"])
    report = (tmp_path / "rep" / "report.md").read_text()
    assert f"**{SEVEN}: " in report and f"**{THREE}: 0.0 ± 0.0%**" in report  # the headline, per model
    assert "Overall accuracy" not in report
    assert f"| Category | {SEVEN} accuracy (%) | {THREE} accuracy (%) |" in report
    c = dec["combined"]["overall"]
    # the combined row: the models' classified failures under "classified failures" (before: the number of models);
    # the 3B's runs disagree on every failure (floor 100%), so its decomposition is flagged
    assert f"| **combined** (mean over 2 model(s), 1 flagged) | {c['n_classified']} |" in report
    assert result["models"][THREE]["floor_check"]["status"] == "flagged"
    assert result["models"][SEVEN]["floor_check"]["status"] == "cleared"
    printed = capsys.readouterr().out
    assert f"accuracy {SEVEN} " in printed and f"; {THREE} 0.0 ± 0.0% (2 run(s))" in printed


def test_a_bare_attention_model_is_refused_with_several_models_predictions(dataset, tmp_path, capsys):
    out, samples, ablations = dataset
    a = _write(tmp_path / "a.jsonl", samples, ablations, lambda k, i: "x", lambda k, name: "y")
    b = _write(tmp_path / "b.jsonl", samples, ablations, lambda k, i: "x", lambda k, name: "y")
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", f"{SEVEN}@r1={a}",
                 f"{THREE}@r1={b}", "--attention", "some/omni-model", "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert "runs of 2 models" in err and SEVEN in err and THREE in err and "MODEL=PREDICTIONS" in err
    from omniaudit.evaluation.composition.audit import attention_runs

    assert attention_runs(["m"], [a], [SEVEN, SEVEN]) == {"m": [a]}  # one model's runs: fine
    with pytest.raises(InputError, match="would be mixed"):
        attention_runs(["m"], [a, b], [SEVEN, THREE])


# ---- C3PO decomposition: graded equivalence, the one-modality rule, move rates against the floor ----------------

def test_one_modality_sample_where_nothing_moved_is_not_incomplete_fusion():
    assert mode_of({"text_only": False, "mute_audio": False}) == "text_dominance"
    assert mode_of({"mute_audio": False}) == "text_dominance"  # removing its only medium left the text: no move
    assert mode_of({"text_only": True, "mute_audio": False}) == "unstable"  # one input, two verdicts: noise
    assert mode_of({"text_only": True, "mute_audio": True}) == "audio_dominance"
    # two grounded modalities: the paper's rule is unchanged
    assert mode_of({"text_only": True, "mute_audio": False, "drop_image": False}) == "incomplete_fusion"
    assert mode_of({"text_only": True, "mute_audio": True, "drop_image": False}) == "audio_dominance"


class _SynonymJudge:
    """A grading judge that says Yes when both answers name a cat (and records what it was asked)."""

    def __init__(self):
        self.asked = []

    def answer(self, items, progress=None):
        self.asked += items
        return ["Yes" if sum(w in i.prompt.lower() for w in ("cat", "kitten")) >= 2 else "No" for i in items]


def test_answers_move_only_when_the_grader_says_they_differ(monkeypatch):
    judge = _SynonymJudge()
    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: judge)
    graded = pd.DataFrame({"id": ["s"], "template_name": "T", "question": "Which animal?", "prediction": "a cat",
                           "correct": False})
    ablated = pd.DataFrame({"sample_id": "s", "ablation": ["text_only", "mute_audio", "drop_image"],
                            "prediction": ["The kitten.", "A dog", "CAT"]})
    exact = decompose(graded, ablated)["samples"][0]
    assert exact["moved"] == {"text_only": True, "mute_audio": True, "drop_image": False}  # "CAT" = "a cat"
    assert exact["mode"] == "audio_dominance"
    matcher = AnswerMatcher("fake:judge")
    judged = decompose(graded, ablated, matcher=matcher)["samples"][0]
    assert judged["moved"]["text_only"] is False and judged["mode"] == "text_dominance"  # a kitten is the cat
    assert matcher.n_judged == 2 and len(judge.asked) == 2  # exact matches never reach the judge
    assert matcher.same([("Which animal?", "kitten", "a cat")]) == [True] and len(judge.asked) == 2  # cached


def test_wilson_matches_scipy():
    from scipy.stats import binomtest

    for k, n in ((0, 20), (3, 25), (25, 25), (7, 9)):
        ci = binomtest(k, n).proportion_ci(method="wilson")
        assert wilson(k, n) == pytest.approx([ci.low, ci.high])
    assert wilson(0, 0) == [None, None]


def test_sampling_noise_is_flagged_and_a_real_dependence_clears_the_floor(dataset, tmp_path):
    """Before: answers sampled at temperature 0.7 from two different (random) models were classified as modality
    dominance, with identical Table 12s. Now each ablation's move rate stands beside the floor, and a decomposition
    whose moves do not clear it is flagged."""
    out, samples, ablations = dataset
    specs = []
    for model, seed in (("noisy-a", 1), ("noisy-b", 2)):  # every answer an independent draw: pure sampling noise
        for run in range(3):
            rng = np.random.default_rng([seed, run])

            def draw(k, *_, rng=rng):  # a draw among the sample's answers the readers read (its gold, 3 wrong)
                return [samples.iloc[k]["answer"], *(_wrong(samples, k, w) for w in range(3))][int(rng.integers(4))]

            specs.append(f"{model}@{run}=" + str(_write(tmp_path / f"{model}{run}.jsonl", samples, ablations,
                                                        draw, draw)))
    for run in range(2):  # a model that follows the audio: deterministic, only muting the audio moves its answer
        specs.append(f"audio-follower@{run}=" + str(_write(
            tmp_path / f"follower{run}.jsonl", samples, ablations, lambda k, i: _wrong(samples, k),
            lambda k, name: _wrong(samples, k, 1) if name in ("mute_audio", "text_only") else _wrong(samples, k))))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *specs, "--out",
                 str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    for model in ("noisy-a", "noisy-b"):
        entry = result["models"][model]
        assert entry["stability_floor"]["floor"] > 0.5 and entry["floor_check"]["status"] == "flagged"
        assert set(entry["floor_check"]["not_cleared"]) >= {"mute_audio", "drop_image"}
    follower = result["models"]["audio-follower"]
    assert follower["stability_floor"]["floor"] == 0.0 and follower["floor_check"]["status"] == "cleared"
    assert follower["move_rates"]["mute_audio"]["rate"] == 1.0 and follower["move_rates"]["drop_image"]["n_moved"] == 0
    assert result["failure_decomposition"]["models"]["audio-follower"]["overall"]["shares"]["audio_dominance"] == 1.0
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "**noisy-a: the moves under" in report and "do not clear its stability floor" in report
    assert "| audio-follower | 0% [0%-" in report  # its floor beside its move rates


def test_floor_check_rule_by_hand():
    rates = move_rates([{"moved": {"mute_audio": True, "drop_image": False}}] * 20
                       + [{"moved": {"mute_audio": True, "drop_image": True}}])
    assert rates["mute_audio"] == {"n": 21, "n_moved": 21, "rate": 1.0, "ci": wilson(21, 21)}
    low = stability_floor({"r0": pd.Series({"a": "x", "b": "y"}), "r1": pd.Series({"a": "x", "b": "y"})},
                          {"r0": {"a", "b"}, "r1": {"a", "b"}})
    check = floor_check(rates, low)
    # floor 0/4 (upper bound 0.49): mute_audio 21/21 clears it; drop_image moved once (1/21) and does not: flagged
    assert check["clears_floor"] == {"drop_image": False, "mute_audio": True} and check["status"] == "flagged"
    assert floor_check(rates, stability_floor({"r0": pd.Series({"a": "x"})}, {"r0": {"a"}}))["status"] == "unchecked"
    steady = move_rates([{"moved": {"mute_audio": True, "drop_image": False}}] * 20)
    assert floor_check(steady, low)["status"] == "cleared"  # an ablation that never moved needs no clearing
