"""Per-layer attention (alpha, H) tables and figures for C3PO Fig. 5 and 9, and the Fig. 6 decomposition figure,
written by `omniaudit audit composition`; the probe is replaced by a scripted one so the export is checked fast
against independent computations (SciPy's entropy, pandas means, the audit's own routing tables)."""

import json
import zlib

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from omniaudit.cli import main
from omniaudit.evaluation.composition import attention

LAYERS = 5


def scripted_alpha(sample_id: str, present: list[str]) -> np.ndarray:
    """(layers, 3) shares over text / audio / image, zero on a modality the sample lacks."""
    rng = np.random.default_rng(zlib.crc32(sample_id.encode()))
    keep = np.array([m == "text" or m in present for m in attention.MODALITIES], float)
    raw = rng.dirichlet(np.ones(3), LAYERS) * keep
    return raw / raw.sum(axis=1, keepdims=True)


class ScriptedProbe:
    def __init__(self, model, config=None, dtype="auto"):
        self.path, self.config, self.accepts = str(model), config or attention.ProbeConfig(), {"image", "audio"}

    def check_modalities(self, needed):
        pass

    def sample(self, sample_id, question, image, audio, system=None):
        present = [m for m, data in (("image", image), ("audio", audio)) if data is not None]
        alpha = scripted_alpha(sample_id, present)
        h = attention.entropy(alpha)
        return {"id": sample_id, "alpha": alpha, "entropy": h, "masses": {},
                "h_mid": attention.mid_layer_mean(h, self.config.depth_range),
                "commit_depth": attention.commit_depth(h),
                "alpha_mean": {m: float(alpha[:, k].mean()) if m == "text" or m in present else float("nan")
                               for k, m in enumerate(attention.MODALITIES)},
                "modalities": "+".join(["text", *sorted(present)])}


def test_attention_and_decomposition_exports(tmp_path, monkeypatch):
    monkeypatch.setattr(attention, "AttentionProbe", ScriptedProbe)
    out = tmp_path / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--out", str(out)]) == 0
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id", "answer", "category"])
    ablations = pd.read_parquet(next((out / "ablations").glob("*.parquet")), columns=["id", "ablation"])
    right = [k % 2 == 0 for k in range(len(samples))]
    rows = [{"id": i, "raw": a if ok else "seven"} for i, a, ok in zip(samples["id"], samples["answer"], right,
                                                                       strict=True)]
    rows += [{"id": r.id, "raw": "seven" if r.ablation == "drop_image" else "two"} for r in ablations.itertuples()]
    pred = tmp_path / "run.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(pred), "--attention",
                 "scripted-omni", "--out", str(tmp_path / "rep")]) == 0
    rep = tmp_path / "rep"
    result = json.loads((rep / "audit.json").read_text())

    layers = pd.read_csv(rep / "attention_layers.csv")
    assert len(layers) == LAYERS * len(samples) and set(layers["model"]) == {"scripted-omni"}
    alpha = layers[["alpha_text", "alpha_audio", "alpha_image"]].to_numpy()
    assert layers["entropy"].to_numpy() == pytest.approx(stats.entropy(alpha, base=2, axis=1))
    expected = np.concatenate([scripted_alpha(i, ["image", "audio"]) for i in samples["id"]])
    assert alpha == pytest.approx(expected)
    assert layers["relative_depth"].to_numpy() == pytest.approx(np.tile(np.arange(LAYERS) / (LAYERS - 1),
                                                                         len(samples)))
    assert layers.groupby("id")["correct"].first().to_dict() == dict(zip(samples["id"], right, strict=True))

    profile = pd.read_csv(rep / "attention_depth_profile.csv").set_index("layer")
    by_layer = expected.reshape(len(samples), LAYERS, 3).mean(axis=0)
    assert profile[["alpha_text", "alpha_audio", "alpha_image"]].to_numpy() == pytest.approx(by_layer)
    h = stats.entropy(expected, base=2, axis=1).reshape(len(samples), LAYERS)
    ok = np.array(right)
    assert profile["entropy_correct"].to_numpy() == pytest.approx(h[ok].mean(axis=0))
    assert profile["entropy_incorrect"].to_numpy() == pytest.approx(h[~ok].mean(axis=0))

    delta = pd.read_csv(rep / "attention_delta_alpha.csv")
    routing = result["entropy_gap"]["routing"]["scripted-omni"]["delta_alpha_cc_ic_by_tier"]
    for r in delta.itertuples():
        assert r.delta_cc_minus_ic == pytest.approx(routing[str(r.tier)][r.modality])
    per_sample = expected.reshape(len(samples), LAYERS, 3).mean(axis=1)
    cc = (samples["category"] == "CC").to_numpy()
    assert delta.set_index("modality").loc["audio", "delta_cc_minus_ic"] == pytest.approx(
        per_sample[cc, 1].mean() - per_sample[~cc, 1].mean())

    decomposition = pd.read_csv(rep / "failure_decomposition.csv")
    shares = result["failure_decomposition"]["models"]["run"]["overall"]["shares"]
    got = decomposition[decomposition["model"] == "run"].set_index("mode")["share"].to_dict()
    assert got == pytest.approx(shares) and shares["audio_dominance"] == 1.0  # only removing the audio moves "seven"
    for figure in ("attention_depth_profile.png", "attention_delta_alpha.png", "failure_decomposition.png"):
        assert (rep / figure).stat().st_size > 1000
        assert f"({figure})" in (rep / "report.md").read_text()
