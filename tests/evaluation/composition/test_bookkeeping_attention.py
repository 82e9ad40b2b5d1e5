"""Bookkeeping: the attention probe checks that a model encodes every modality of the samples it probes,
before any judge call. The inputs that showed it: a Qwen2-Audio-style model on image samples wrote alpha_image
(attention to one bare <|IMAGE|> placeholder it never encodes); Qwen2-VL on audio crashed after the grading judge
had been paid."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from omniaudit.tiny_models import tiny_audio_lm, tiny_omni, tiny_vision_lm

    root = tmp_path_factory.mktemp("probe_modalities")
    models = {"audio": tiny_audio_lm(root / "audio_lm"), "vision": tiny_vision_lm(root / "vision_lm"),
              "omni": tiny_omni(root / "omni")}
    assert main(["build", "composition", "--synthetic", "6", "--out", str(root / "ds")]) == 0
    samples = pd.read_parquet(next((root / "ds" / "samples").glob("*.parquet")))
    run = root / "run.jsonl"
    run.write_text("".join(json.dumps({"id": i, "prediction": "nothing"}) + "\n" for i in samples["id"]))
    return root, models, samples, run


@pytest.mark.parametrize(("kind", "message"), [
    ("audio", "takes only audio, but the probed samples hold image (e.g. sample"),
    ("vision", "takes only image, but the probed samples hold audio (e.g. sample"),
])
def test_a_model_that_cannot_take_the_samples_media_is_refused_before_any_judge_call(setup, tmp_path, monkeypatch,
                                                                                     capsys, kind, message):
    root, models, _, run = setup
    import omniaudit.runners as judges

    def no_calls(*args, **kwargs):
        raise AssertionError("a judge was made before the attention model's modalities were checked")

    monkeypatch.setattr(judges, "make_judge", no_calls)
    assert main(["audit", "composition", "--dataset", str(root / "ds"), "--predictions", str(run), "--judge",
                 "openai:paid@https://example.invalid/v1", "--attention", str(models[kind]), "--depth-range", "0",
                 "1", "--out", str(tmp_path / "r")]) == 2
    assert message in capsys.readouterr().err.replace("\n", " ")
    assert not (tmp_path / "r").exists()


def test_the_probe_itself_refuses_media_the_model_does_not_encode(setup):
    from omniaudit.evaluation.composition.attention import AttentionProbe, ProbeConfig

    _, models, samples, _ = setup
    row = samples.iloc[0]
    probe = AttentionProbe(str(models["audio"]), ProbeConfig(depth_range=(0.0, 1.0)))
    assert probe.accepts == {"audio"}
    with pytest.raises(InputError, match="takes only audio"):  # before: alpha_image off a bare <|IMAGE|> token
        probe.sample(row["id"], row["prompt"], row["image"]["bytes"], None, row["system"])
    audio_only = probe.sample(row["id"], row["prompt"], None, row["audio"]["bytes"], row["system"])
    assert np.isnan(audio_only["alpha_mean"]["image"]) and audio_only["modalities"] == "text+audio"
    assert AttentionProbe(str(models["vision"]), ProbeConfig(depth_range=(0.0, 1.0))).accepts == {"image"}


def test_an_omni_model_takes_both_and_is_probed(setup, tmp_path):
    root, models, samples, run = setup
    assert main(["audit", "composition", "--dataset", str(root / "ds"), "--predictions", str(run), "--attention",
                 str(models["omni"]), "--depth-range", "0", "1", "--out", str(tmp_path / "rep")]) == 0
    per = pd.read_csv(tmp_path / "rep" / "attention_samples.csv")
    assert len(per) == len(samples) and (per["modalities"] == "text+audio+image").all()
