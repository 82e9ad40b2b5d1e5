"""``--specialist language=hf:<WhisperForConditionalGeneration>`` (whisper language ID, the protocols
paper's specialist family) crashed ("cannot specify both decoder_input_ids and decoder_inputs_embeds"). A tiny
multilingual Whisper built offline identifies languages from its language-token logits."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from omniaudit.data_builders.protocols.specialists import hf_attribute_specialist, whisper_language_map
from omniaudit.errors import InputError
from omniaudit.tiny_models import WHISPER_LANGUAGES, tiny_whisper

RATE = 16000


@pytest.fixture(scope="module")
def whisper(tmp_path_factory):
    return tiny_whisper(tmp_path_factory.mktemp("whisper") / "whisper")


def clips(n=12, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(RATE) / RATE
    return [(0.3 * np.sin(2 * np.pi * (120 + 60 * i) * t) + 0.05 * rng.standard_normal(RATE)).astype(np.float32)
            for i in range(n)]


def test_tiny_whisper_is_a_multilingual_checkpoint(whisper):
    from transformers import AutoConfig, AutoProcessor, GenerationConfig

    assert AutoConfig.from_pretrained(whisper).architectures == ["WhisperForConditionalGeneration"]
    gen = GenerationConfig.from_pretrained(whisper)
    assert sorted(gen.lang_to_id) == sorted(f"<|{c}|>" for c in WHISPER_LANGUAGES) and gen.is_multilingual
    processor = AutoProcessor.from_pretrained(whisper)
    assert processor.tokenizer.convert_ids_to_tokens(gen.decoder_start_token_id) == "<|startoftranscript|>"


def test_whisper_language_id_matches_detect_language(whisper):
    """Reference: Whisper's own ``detect_language`` with ``lang_to_id`` cut to the labels' languages."""
    import torch
    from transformers import AutoFeatureExtractor, WhisperForConditionalGeneration

    labels = np.array(["English", "French", "German", "Spanish"] * 3)
    audios = clips()
    pred, source = hf_attribute_specialist(str(whisper), audios, labels, np.arange(12) % 4)
    assert "pretrained Whisper language ID" in source
    model = WhisperForConditionalGeneration.from_pretrained(whisper).eval()
    fe = AutoFeatureExtractor.from_pretrained(whisper)
    gen = copy.deepcopy(model.generation_config)
    names = {"<|en|>": "English", "<|fr|>": "French", "<|de|>": "German", "<|es|>": "Spanish"}
    gen.lang_to_id = {k: v for k, v in gen.lang_to_id.items() if k in names}
    id_to_label = {v: names[k] for k, v in gen.lang_to_id.items()}
    with torch.no_grad():
        ids = [int(model.detect_language(fe(a, sampling_rate=RATE, return_tensors="pt").input_features,
                                         generation_config=gen)[0]) for a in audios]
    assert list(pred) == [id_to_label[i] for i in ids]
    # FLEURS-style locales and aliases name the same languages; a label it lacks is never predicted
    fleurs = np.array(["en_us", "fr_fr", "Mandarin Chinese", "Korean"] * 3)
    pred2, source2 = hf_attribute_specialist(str(whisper), audios, fleurs, np.arange(12) % 4)
    assert set(pred2) <= {"en_us", "fr_fr", "Mandarin Chinese"} and "never predicted: Korean" in source2


def test_whisper_language_map_and_non_language_labels(whisper):
    codes = list(WHISPER_LANGUAGES)
    assert whisper_language_map(codes, ["English", "fr", "de_de", "Mandarin Chinese", "Klingon"]) == {
        0: "English", 1: "fr", 2: "de_de", 5: "Mandarin Chinese"}
    with pytest.raises(InputError, match="both name the Whisper language 'en'"):
        whisper_language_map(codes, ["English", "en_us"])
    # emotion labels name no language: the encoder's embeddings + out-of-fold logistic regression
    labels = np.array(["angry", "happy"] * 6)
    pred, source = hf_attribute_specialist(str(whisper), clips(), labels, np.arange(12) % 6)
    assert "embeddings (its classes name none of the labels)" in source and set(pred) <= {"angry", "happy"}


def test_build_protocols_with_a_whisper_language_specialist(tmp_path, whisper):
    from omniaudit.data_builders.hub import load_config
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset

    out = build_protocols_dataset(tmp_path / "ds", None,
                                  ProtocolBuildOptions(max_trials=12, specialists=(f"language=hf:{whisper}",)),
                                  SpeechSetSpec(sentences_per_cell=1))
    blueprint = load_config(out, "blueprint")
    lang = blueprint[blueprint["attribute"] == "language"]
    assert len(lang) and set(lang["specialist"].dropna()) <= {"English", "French", "German", "Spanish"}
    assert "Whisper language ID" in (out / "README.md").read_text() + (out / "build_info.json").read_text()
