"""C3PO multi-model reporting: MODEL@RUN=FILE grouping, model x template and category x tier accuracy (Fig. 1,
Table 3), the failure decomposition across models with a combined dominance share (Table 12) and the stability floor,
each checked against a hand computation."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.composition.audit import run_models
from omniaudit.evaluation.composition.failure_modes import cohort_decomposition, stability_floor
from omniaudit.evaluation.composition.grading import accuracy_table


def test_cohort_decomposition_by_hand():
    a = pd.DataFrame({"template_name": ["T1"] * 5,
                      "mode": ["text_dominance", "text_dominance", "audio_dominance", "incomplete_fusion",
                               "unclassified"]})
    b = pd.DataFrame({"template_name": ["T1", "T1", "T2"],
                      "mode": ["image_dominance", "incomplete_fusion", "text_dominance"]})
    out = cohort_decomposition({"A": a, "B": b})
    ma, mb = out["models"]["A"]["overall"], out["models"]["B"]["overall"]
    assert ma["n_classified"] == 4  # "unclassified" says nothing about fusion
    assert ma["shares"]["text_dominance"] == 0.5 and ma["shares"]["incomplete_fusion"] == 0.25
    assert ma["dominance_share"] == 0.75 and mb["dominance_share"] == pytest.approx(2 / 3)
    combined = out["combined"]
    assert combined["overall"]["dominance_share"] == pytest.approx((0.75 + 2 / 3) / 2)
    assert combined["overall"]["shares"]["incomplete_fusion"] == pytest.approx((0.25 + 1 / 3) / 2)
    assert combined["by_template"]["T1"]["dominance_share"] == pytest.approx((0.75 + 0.5) / 2)
    assert combined["by_template"]["T2"] == {"n_models": 1, "n_classified": 1, "dominance_share": 1.0,
                                             "shares": {**{m: 0.0 for m in combined["overall"]["shares"]},
                                                        "text_dominance": 1.0}}
    empty = cohort_decomposition({"C": pd.DataFrame({"template_name": ["T1"], "mode": ["unanswered"]})})
    assert empty["combined"]["overall"]["dominance_share"] is None


def test_stability_floor_by_hand():
    answers = {"r0": pd.Series({"a": "Two", "b": "red", "c": "x"}),
               "r1": pd.Series({"a": "2", "b": "blue", "c": "x"}),  # "Two" and "2" normalise alike
               "r2": pd.Series({"a": "three", "b": "red", "c": "x"})}
    failed = {"r0": {"a", "b"}, "r1": {"b"}, "r2": set()}
    out = stability_floor(answers, failed)
    # r0/a vs r1 same, vs r2 moved; r0/b vs r1 moved, vs r2 same; r1/b vs r0 moved, vs r2 moved: 4 of 6 pairs
    assert (out["n_pairs"], out["n_moved"]) == (6, 4) and out["floor"] == pytest.approx(4 / 6)
    assert stability_floor({"r0": answers["r0"]}, {"r0": {"a"}})["floor"] is None


def test_category_tier_accuracy_by_hand():
    g1 = pd.DataFrame({"template_name": "T", "category": ["IC", "IC", "CC", "CC"], "tier": [1, 2, 1, 1],
                       "correct": [True, False, True, False]})
    g2 = g1.assign(correct=[True, True, False, False])
    table = accuracy_table([g1, g2])["by_category_tier"]
    assert set(table) == {"IC/T1", "IC/T2", "CC/T1"}
    assert table["IC/T2"]["mean"] == 50.0 and table["IC/T2"]["sd"] == pytest.approx(np.std([0, 100], ddof=1))
    assert table["CC/T1"]["mean"] == 25.0  # 50% and 0%


def test_model_of_each_run(tmp_path):
    f = [tmp_path / f"{k}.jsonl" for k in range(4)]
    for p in f:
        p.write_text("")
    specs = [f"qwen@r1={f[0]}", f"qwen@r2={f[1]}", f"gemma={f[2]}", str(f[3])]
    assert run_models(specs) == {"qwen@r1": "qwen", "qwen@r2": "qwen", "gemma": "gemma", "3": "3"}
    with pytest.raises(InputError, match="MODEL@RUN"):
        run_models([f"@r1={f[0]}"])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("multi") / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--out", str(out)]) == 0
    return out


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _wrong(row, which: int = 0) -> str:
    """A wrong answer to sample ``row`` the audit's readers read (a count beside the gold count, another colour of
    the template's vocabulary): one they cannot read is ungraded, neither right nor wrong."""
    from omniaudit.answer_match import normalize

    gold = normalize(str(row["answer"]))
    if gold.isdigit():
        return str(int(gold) + 1 + which)
    return sorted(v for v in row["answer_vocabulary"] if normalize(str(v)) != gold)[which]


def test_several_models_in_one_audit_from_the_cli(dataset, tmp_path):
    samples = pd.read_parquet(next((dataset / "samples").glob("*.parquet")))
    ablations = pd.read_parquet(next((dataset / "ablations").glob("*.parquet")), columns=["id", "sample_id",
                                                                                          "ablation"])
    ids, gold = list(samples["id"]), dict(zip(samples["id"], samples["answer"], strict=True))
    n = len(ids)

    wrong = [_wrong(row) for _, row in samples.iterrows()]

    def ablation_answer(k: int, name: str) -> str:
        # a failed sample k (full answer wrong[k]): k % 3 == 0 text dominance (text_only still wrong[k]); 1: only
        # drop_image moves it (image dominance); 2: both removals move it (incomplete fusion); moved: to the gold
        moved = {0: (), 1: ("text_only", "drop_image"), 2: ("text_only", "mute_audio", "drop_image")}[k % 3]
        return gold[ids[k]] if name in moved else wrong[k]

    def rows(right, run=None):
        out = [{"id": i, "raw": gold[i] if right(k) else wrong[k]} for k, i in enumerate(ids)]
        out += [{"id": a.id, "raw": ablation_answer(ids.index(a.sample_id), a.ablation)}
                for a in ablations.itertuples()]
        return [r | ({"run": run} if run is not None else {}) for r in out]

    r1 = _write(tmp_path / "q1.jsonl", rows(lambda k: k % 2 == 0))  # model qwen: two runs, two files
    r2 = _write(tmp_path / "q2.jsonl", rows(lambda k: k < 3))
    two = rows(lambda k: False, 0) + [r | {"raw": _wrong(samples.iloc[ids.index(r["id"])], 1)}
                                      if r["id"] in ids[n // 2:] else r for r in rows(lambda k: False, 1)]
    g = _write(tmp_path / "gemma.jsonl", two)  # model gemma: one file, two sampled runs
    assert main(["audit", "composition", "--dataset", str(dataset), "--predictions", f"qwen@a={r1}",
                 f"qwen@b={r2}", f"gemma={g}", "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert result["runs"] == ["qwen@a", "qwen@b", "gemma#0", "gemma#1"]
    models = result["models"]
    assert list(models) == ["qwen", "gemma"] and models["gemma"]["runs"] == ["gemma#0", "gemma#1"]
    acc_a, acc_b = 100 * np.mean([k % 2 == 0 for k in range(n)]), 100 * 3 / n
    assert models["qwen"]["accuracy"]["overall"]["mean"] == pytest.approx((acc_a + acc_b) / 2)
    assert models["gemma"]["accuracy"]["overall"]["mean"] == 0.0
    # Table 3 by hand: qwen's accuracy in each category/tier cell, mean over its two runs
    cells = samples.assign(cell=samples["category"] + "/T" + samples["tier"].astype(str),
                           k=range(n)).groupby("cell")["k"].apply(list)
    for cell, ks in cells.items():
        expected = np.mean([100 * np.mean([k % 2 == 0 for k in ks]), 100 * np.mean([k < 3 for k in ks])])
        assert models["qwen"]["accuracy"]["by_category_tier"][cell]["mean"] == pytest.approx(expected)
    # per-model dominance shares by hand, then the combined (mean over models) share
    def shares(kinds):
        return (kinds.count(0) + kinds.count(1)) / len(kinds), kinds.count(2) / len(kinds)

    q_kinds = [k % 3 for k in range(n) if k % 2] + [k % 3 for k in range(n) if k >= 3]
    # gemma run 1 answers another wrong answer on the second half: every ablation answer differs from it: incomplete
    # fusion
    g_kinds = [k % 3 for k in range(n)] + [k % 3 if k < n // 2 else 2 for k in range(n)]
    dec = result["failure_decomposition"]
    for model, kinds in (("qwen", q_kinds), ("gemma", g_kinds)):
        dominance, fusion = shares(kinds)
        assert dec["models"][model]["overall"]["dominance_share"] == pytest.approx(dominance)
        assert dec["models"][model]["overall"]["shares"]["incomplete_fusion"] == pytest.approx(fusion)
    assert dec["combined"]["overall"]["dominance_share"] == pytest.approx(
        (shares(q_kinds)[0] + shares(g_kinds)[0]) / 2)
    # stability floor: gemma's two runs differ on the second half of the samples, both fail all of them
    floor = models["gemma"]["stability_floor"]
    assert (floor["n_pairs"], floor["n_moved"]) == (2 * n, 2 * (n - n // 2))
    # qwen: run a fails odd k, run b fails k >= 3; their answers differ where exactly one of them is right
    differ = [(k % 2 == 0) != (k < 3) for k in range(n)]
    pairs = [k for k in range(n) if k % 2] + [k for k in range(n) if k >= 3]
    assert models["qwen"]["stability_floor"]["floor"] == pytest.approx(np.mean([differ[k] for k in pairs]))
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "## Models" in report and "Failure decomposition across models" in report and "stability floor" in report
    assert (tmp_path / "rep" / "model_template_accuracy.png").stat().st_size > 0
    graded = pd.read_csv(tmp_path / "rep" / "graded.csv")
    assert graded.groupby("model").size().to_dict() == {"gemma": 2 * n, "qwen": 2 * n}
