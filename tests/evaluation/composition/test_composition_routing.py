"""C3PO routing analyses: depth range (an error, never a fallback), commit depth, alpha by tier and CC-IC delta alpha,
H_mid on correct samples by category, dH by modality set; the probe's inputs; attention models checked before any
judge call."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.composition.attention import (
    ProbeConfig,
    commit_depth,
    entropy_gap,
    mid_layer_mean,
    mid_layers,
    routing_tables,
)


def test_depth_range_and_commit_depth_by_hand():
    assert mid_layers(5, (0.25, 0.75)).tolist() == [False, True, True, True, False]  # depths 0, .25, .5, .75, 1
    assert mid_layer_mean(np.array([9.0, 1.0, 2.0, 3.0, 9.0]), (0.3, 0.5)) == 2.0
    with pytest.raises(InputError, match=r"tiny has 2 layer\(s\) at relative depths \[0.0, 1.0\]"):
        mid_layer_mean(np.array([1.0, 2.0]), (0.25, 0.75), "tiny")
    with pytest.raises(InputError, match="depth range"):
        ProbeConfig(depth_range=(0.8, 0.2))
    assert commit_depth(np.array([1.2, 0.9, 0.4, 0.4, 1.0])) == 0.5  # the first minimum, at layer 2 of 0..4


def test_routing_tables_by_hand():
    frame = pd.DataFrame({
        "model": "m", "id": list("abcdef"),
        "category": ["IC", "IC", "CC", "CC", "IC", "CC"], "tier": [1, 1, 1, 1, 2, 2],
        "modalities": ["text+image", "text+audio+image", "text+image", "text+audio+image", "text+image",
                       "text+image"],
        "correct": [True, False, True, True, False, True],
        "h_mid": [0.9, 1.2, 0.7, 1.5, 0.5, 0.8],
        "commit_depth": [0.2, 0.4, 0.6, 0.8, 0.0, 1.0],
        "alpha_text": [0.8, 0.7, 0.6, 0.5, 0.9, 0.7], "alpha_audio": [np.nan, 0.1, np.nan, 0.3, np.nan, np.nan],
        "alpha_image": [0.2, 0.2, 0.4, 0.2, 0.1, 0.3]})
    r = routing_tables(frame, 200, 0)["m"]
    assert r["alpha_by_tier"]["1"]["text"] == pytest.approx(0.65)
    assert r["alpha_by_tier"]["1"]["audio"] == pytest.approx(0.2)  # over the samples holding audio only
    assert r["delta_alpha_cc_ic_by_tier"]["1"]["audio"] == pytest.approx(0.3 - 0.1)
    assert r["delta_alpha_cc_ic_by_tier"]["1"]["image"] == pytest.approx(0.3 - 0.2)
    assert r["delta_alpha_cc_ic_by_tier"]["2"]["audio"] is None  # no audio in tier 2
    assert r["h_mid_correct_by_category"] == pytest.approx({"CC": (0.7 + 1.5 + 0.8) / 3, "IC": 0.9})
    assert r["commit_depth"]["overall"] == pytest.approx(0.5)
    assert r["commit_depth"]["by_category"]["IC"] == pytest.approx(0.2)
    sets = r["entropy_gap_by_modality_set"]
    assert sets["text+image"]["max_bits"] == 1.0 and sets["text+audio+image"]["max_bits"] == pytest.approx(np.log2(3))
    h, ok = np.array([0.9, 0.7, 0.5, 0.8]), np.array([True, True, False, True])
    assert sets["text+image"]["value"] == pytest.approx(h[ok].mean() - 0.5)
    assert sets["text+image"]["ci"] == pytest.approx(entropy_gap(h, ok, 200, 0)["ci"])


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from omniaudit.tiny_models import tiny_omni

    root = tmp_path_factory.mktemp("routing")
    model = tiny_omni(root / "omni")
    assert main(["build", "composition", "--synthetic", "8", "--out", str(root / "ds")]) == 0
    samples = pd.read_parquet(next((root / "ds" / "samples").glob("*.parquet")))
    run = root / "run.jsonl"
    run.write_text("".join(json.dumps({"id": i, "prediction": a if k % 2 else "nothing"}) + "\n"
                           for k, (i, a) in enumerate(zip(samples["id"], samples["answer"], strict=True))))
    return root, model, samples, run


def test_attention_models_are_checked_before_any_judge_call(setup, tmp_path, monkeypatch, capsys):
    root, model, _, run = setup
    import omniaudit.runners as judges

    def no_calls(*args, **kwargs):
        raise AssertionError("a judge was made before the attention model was checked")

    monkeypatch.setattr(judges, "make_judge", no_calls)
    for attention, message in ((model, "has 2 layer(s) at relative depths [0.0, 1.0]: none lies in the depth range "
                                        "[0.25, 0.75]"),  # default range: no layer of the tiny model
                               (tmp_path / "nothing", "cannot load a multimodal model")):
        assert main(["audit", "composition", "--dataset", str(root / "ds"), "--predictions", str(run), "--judge",
                     "openai:paid@https://example.invalid/v1", "--attention", str(attention), "--out",
                     str(tmp_path / "r")]) != 0
        assert message in capsys.readouterr().err
        assert not (tmp_path / "r").exists()


def test_routing_export_from_the_cli(setup, tmp_path):
    root, model, samples, run = setup
    assert main(["audit", "composition", "--dataset", str(root / "ds"), "--predictions", str(run), "--attention",
                 str(model), "--depth-range", "0", "1", "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())["entropy_gap"]
    per = pd.read_csv(tmp_path / "rep" / "attention_samples.csv")
    assert result["probe_inputs"]["n_probed"] == len(samples) == len(per)  # image + audio, no video: all probed
    assert result["probe_inputs"]["n_left_out"] == 0 and result["depth_range"] == [0.0, 1.0]
    np.testing.assert_allclose(per[["alpha_text", "alpha_audio", "alpha_image"]].sum(axis=1), 1.0, rtol=1e-6)
    assert (per["modalities"] == "text+audio+image").all() and (per["h_mid"] <= np.log2(3) + 1e-9).all()
    assert per["correct"].tolist() == [k % 2 == 1 for k in range(len(samples))]
    r = result["routing"][str(model)]
    for tier, t in per.groupby("tier"):
        assert r["alpha_by_tier"][str(tier)]["audio"] == pytest.approx(t["alpha_audio"].mean())
    ok = per[per["correct"]]
    for category, g in ok.groupby("category"):
        assert r["h_mid_correct_by_category"][category] == pytest.approx(g["h_mid"].mean())
    assert r["commit_depth"]["overall"] == pytest.approx(per["commit_depth"].mean())
    assert set(per["commit_depth"]) <= {0.0, 1.0}  # two layers: the minimum is at depth 0 or 1
    report = (tmp_path / "rep" / "report.md").read_text()
    assert f"{len(samples)} sample(s) probed, 0 left out" in report and "## Routing" in report
