"""Tiny, randomly initialised models built from configs, fully offline: for tests, demos and CPU smoke runs.

A byte-level BPE tokenizer is trained locally on the words omniaudit's prompts use; models are built from small
configs (a few hundred thousand parameters) and saved with ``save_pretrained`` so every loader sees a normal
checkpoint folder. Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from omniaudit.io import atomic_dir, check_out_dir

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>",
            "<|IMAGE|>", "<|VIDEO|>", "<|vision_bos|>", "<|vision_eos|>"]
# ChatML; list contents may hold audio / image / video items. It tests only content["type"] (Arrow adds None keys)
# and marks assistant turns with {% generation %} so TRL can train on completions only.
CHAT_TEMPLATE = (
    "{% macro body(message) %}{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for c in message['content'] %}"
    "{% if c['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>\n"
    "{% elif c['type'] == 'image' %}<|vision_bos|><|IMAGE|><|vision_eos|>\n"
    "{% elif c['type'] == 'video' %}<|vision_bos|><|VIDEO|><|vision_eos|>\n"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}{% endmacro %}"
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['role'] == 'assistant' %}{% generation %}{{ body(message) }}<|im_end|>{% endgeneration %}"
    "{% else %}{{ body(message) }}<|im_end|>{% endif %}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CORPUS = [
    "system user assistant You are an expert audio judge.",
    "Listen to the audio clip. Which emotion does the speaker express? Answer with exactly one of: angry, happy, "
    "neutral, sad. Which language is spoken? English, French, German, Spanish.",
    "Which clip has cleaner audio, with less background noise? Answer with A or B only. clip A clip B reference",
    "Audio blueprint: Transcript Metadata duration speaker Acoustic descriptors mean pitch is high low medium.",
    "Specialist: a classifier predicts. Reference label. Rubric hint: a correct answer for this clip is.",
    "The audio is synchronized delayed early not silent sound matches does not match 0123456789 .,:;!?'\"()-",
    "Description A: Description B: Which description is better? happy sad angry surprised worried calm face voice",
]


def build_tokenizer():
    """A Qwen2-style tokenizer (byte-level BPE, ~500 tokens) trained on CORPUS, with the audio special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS * 10, trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIALS,
                                                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                             show_progress=False))
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    tok = Qwen2Tokenizer(vocab=bpe.get_vocab(), merges=merges, unk_token="<|endoftext|>", bos_token=None,
                         eos_token="<|im_end|>", pad_token="<|endoftext|>",
                         extra_special_tokens={"audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>",
                                               "audio_eos_token": "<|audio_eos|>", "image_token": "<|IMAGE|>",
                                               "video_token": "<|VIDEO|>", "vision_bos_token": "<|vision_bos|>",
                                               "vision_eos_token": "<|vision_eos|>"},
                         model_max_length=4096)
    tok.add_special_tokens({"extra_special_tokens": ["<|im_start|>", "<|im_end|>"]},
                           replace_extra_special_tokens=False)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def _text_config(tok, **extra) -> dict:
    return dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None, **extra)


def _save(out_dir: str | Path, model, processing) -> Path:
    """Save a model with its tokenizer or processor as one checkpoint folder, atomically."""
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        processing.save_pretrained(tmp)
    return Path(out_dir)


def tiny_causal_lm(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Qwen2 causal LM + tokenizer (chat template included)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    tok = build_tokenizer()
    model = Qwen2ForCausalLM(Qwen2Config(**_text_config(tok), tie_word_embeddings=True))
    return _save(out_dir, model, tok)


def tiny_audio_lm(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Qwen2-Audio (Whisper-style encoder + Qwen2 decoder) with its processor."""
    import torch
    from transformers import (
        Qwen2AudioConfig,
        Qwen2AudioForConditionalGeneration,
        Qwen2AudioProcessor,
        WhisperFeatureExtractor,
    )

    torch.manual_seed(seed)
    tok = build_tokenizer()
    config = Qwen2AudioConfig(
        audio_config=dict(num_mel_bins=128, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, max_source_positions=1500),
        text_config=dict(model_type="qwen2", **_text_config(tok)),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"))
    model = Qwen2AudioForConditionalGeneration(config)
    processor = Qwen2AudioProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=128), tokenizer=tok,
                                    chat_template=CHAT_TEMPLATE)
    return _save(out_dir, model, processor)


def tiny_sequence_classifier(out_dir: str | Path, num_labels: int = 2, seed: int = 0) -> Path:
    """A tiny Qwen2 sequence classifier (``num_labels`` classes) + tokenizer."""
    import torch
    from transformers import Qwen2Config, Qwen2ForSequenceClassification

    torch.manual_seed(seed)
    tok = build_tokenizer()
    model = Qwen2ForSequenceClassification(
        Qwen2Config(**_text_config(tok), num_labels=num_labels))  # type: ignore[call-arg]  # a PretrainedConfig kwarg
    return _save(out_dir, model, tok)


def _tiny_wav2vec2_config(**extra):
    from transformers import Wav2Vec2Config

    return Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                          conv_dim=(16, 16, 16), conv_stride=(5, 4, 4), conv_kernel=(10, 8, 8),
                          num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2, classifier_proj_size=16,
                          **extra)


def tiny_audio_classifier(out_dir: str | Path, labels: list[str] | tuple[str, ...] = ("angry", "happy", "neutral",
                                                                                       "sad"), seed: int = 0) -> Path:
    """A tiny Wav2Vec2ForSequenceClassification (an emotion2vec / audio-classification stand-in) whose classes are
    ``labels``, with its feature extractor (16 kHz)."""
    import torch
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2ForSequenceClassification

    torch.manual_seed(seed)
    labels = list(labels)
    config = _tiny_wav2vec2_config(num_labels=len(labels), id2label=dict(enumerate(labels)),
                                   label2id={label: i for i, label in enumerate(labels)})
    model = Wav2Vec2ForSequenceClassification(config)
    return _save(out_dir, model, Wav2Vec2FeatureExtractor(sampling_rate=16000, return_attention_mask=False))


def tiny_speaker_embedder(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Wav2Vec2ForXVector (an ECAPA / x-vector stand-in: one speaker embedding per clip)."""
    import torch
    from transformers import Wav2Vec2FeatureExtractor, Wav2Vec2ForXVector

    torch.manual_seed(seed)
    config = _tiny_wav2vec2_config(tdnn_dim=(16, 16, 16), tdnn_kernel=(5, 3, 1), tdnn_dilation=(1, 2, 1),
                                   xvector_output_dim=16, num_labels=2)
    model = Wav2Vec2ForXVector(config)
    return _save(out_dir, model, Wav2Vec2FeatureExtractor(sampling_rate=16000, return_attention_mask=False))


WHISPER_LANGUAGES = ("en", "fr", "de", "es", "ja", "zh")


def tiny_whisper(out_dir: str | Path, languages: tuple[str, ...] = WHISPER_LANGUAGES, seed: int = 0) -> Path:
    """A tiny multilingual ``WhisperForConditionalGeneration`` (a whisper language-ID stand-in) with its processor:
    a locally trained byte-level BPE plus Whisper's special tokens (``<|endoftext|>``, ``<|startoftranscript|>``,
    one ``<|xx|>`` per language, ``<|transcribe|>``, ``<|translate|>``, ``<|notimestamps|>``), a generation config
    with ``lang_to_id`` (what ``detect_language`` reads) and an 80-bin 16 kHz feature extractor."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizer,
    )

    torch.manual_seed(seed)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(CORPUS * 10, trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                                             show_progress=False))
    merges = [tuple(m) for m in json.loads(bpe.to_str())["model"]["merges"]]
    tok = WhisperTokenizer(vocab=bpe.get_vocab(), merges=merges)
    specials = ["<|startoftranscript|>", *(f"<|{code}|>" for code in languages), "<|translate|>", "<|transcribe|>",
                "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>", "<|notimestamps|>"]
    tok.add_special_tokens({"additional_special_tokens": specials})
    ids = {t: cast(int, tok.convert_tokens_to_ids(t)) for t in specials}  # one token -> one id
    eot = cast(int, tok.convert_tokens_to_ids("<|endoftext|>"))
    config = WhisperConfig(vocab_size=len(tok), num_mel_bins=80, d_model=32, encoder_layers=1, decoder_layers=1,
                           encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                           decoder_ffn_dim=64, max_source_positions=1500, max_target_positions=64,
                           decoder_start_token_id=ids["<|startoftranscript|>"], pad_token_id=eot, bos_token_id=eot,
                           eos_token_id=eot, begin_suppress_tokens=None, suppress_tokens=None)
    model = WhisperForConditionalGeneration(config)
    gen = GenerationConfig(decoder_start_token_id=ids["<|startoftranscript|>"], pad_token_id=eot, bos_token_id=eot,
                           eos_token_id=eot, is_multilingual=True,
                           lang_to_id={f"<|{code}|>": ids[f"<|{code}|>"] for code in languages},
                           task_to_id={"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
                           no_timestamps_token_id=ids["<|notimestamps|>"], max_length=32)
    model.generation_config = gen
    processor = WhisperProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tok)
    return _save(out_dir, model, processor)


# Frames of 112 x 112 px -> 8 x 8 patches of 14 px -> 16 tokens per 2-frame temporal patch after the 2 x 2 merge.
VISION_SIZE = {"shortest_edge": 28 * 28 * 4, "longest_edge": 28 * 28 * 16}


def tiny_omni(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Qwen2.5-Omni thinker (audio + vision + text) with its processor (shared/notes/tiny-omni-models.md)."""
    import torch
    from transformers import (
        Qwen2_5OmniProcessor,
        Qwen2_5OmniThinkerConfig,
        Qwen2_5OmniThinkerForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
        WhisperFeatureExtractor,
    )

    torch.manual_seed(seed)
    tok = build_tokenizer()
    hidden = 64
    ids = tok.convert_tokens_to_ids
    config = Qwen2_5OmniThinkerConfig(  # type: ignore[call-arg]  # extra kwargs: PretrainedConfig keeps them
        audio_config=dict(num_mel_bins=128, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, max_source_positions=1500, n_window=100, output_dim=hidden),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2, window_size=112, out_hidden_size=hidden,
                           fullatt_block_indexes=[0]),
        text_config=dict(**_text_config(tok), rope_parameters={"rope_type": "default", "rope_theta": 1e6,
                                                               "mrope_section": [2, 3, 3]},
                         tie_word_embeddings=False),
        audio_token_index=ids("<|AUDIO|>"), image_token_index=ids("<|IMAGE|>"), video_token_index=ids("<|VIDEO|>"),
        audio_start_token_id=ids("<|audio_bos|>"), audio_end_token_id=ids("<|audio_eos|>"),
        vision_start_token_id=ids("<|vision_bos|>"), vision_end_token_id=ids("<|vision_eos|>"),
        user_token_id=ids("user"), position_id_per_seconds=25, seconds_per_chunk=2)
    model = Qwen2_5OmniThinkerForConditionalGeneration._from_config(config)
    processor = Qwen2_5OmniProcessor(
        image_processor=Qwen2VLImageProcessor(size=VISION_SIZE, patch_size=14, temporal_patch_size=2, merge_size=2),
        video_processor=Qwen2VLVideoProcessor(size=VISION_SIZE, patch_size=14, temporal_patch_size=2, merge_size=2,
                                              min_frames=2, max_frames=16),
        feature_extractor=WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, hop_length=160,
                                                  chunk_length=30, n_fft=400, return_attention_mask=True),
        tokenizer=tok, chat_template=CHAT_TEMPLATE)
    return _save(out_dir, model, processor)


# Qwen3-Omni's vision tower has 16-px patches: sizes in multiples of 32 x 32 (merged patch) pixels.
VISION_SIZE_32 = {"shortest_edge": 32 * 32 * 4, "longest_edge": 32 * 32 * 16}


def tiny_omni3(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Qwen3-Omni MoE thinker (audio + vision + text, 4 experts) with its processor."""
    import torch
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
        Qwen3OmniMoeProcessor,
        Qwen3OmniMoeThinkerConfig,
        Qwen3OmniMoeThinkerForConditionalGeneration,
        WhisperFeatureExtractor,
    )

    torch.manual_seed(seed)
    tok = build_tokenizer()
    hidden = 64
    ids = tok.convert_tokens_to_ids
    config = Qwen3OmniMoeThinkerConfig(  # type: ignore[call-arg]  # extra kwargs: PretrainedConfig keeps them
        audio_config=dict(num_mel_bins=128, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=64, output_dim=hidden, n_window=50, n_window_infer=800,
                          conv_chunksize=500, downsample_hidden_size=16, max_source_positions=1500),
        vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, in_channels=3, patch_size=16,
                           spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=hidden,
                           num_position_embeddings=64, deepstack_visual_indexes=[0]),
        text_config=dict(**_text_config(tok), head_dim=16, moe_intermediate_size=32, num_experts=4,
                         num_experts_per_tok=2, decoder_sparse_step=1,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [4, 2, 2]}),
        audio_token_id=ids("<|AUDIO|>"), image_token_id=ids("<|IMAGE|>"), video_token_id=ids("<|VIDEO|>"),
        audio_start_token_id=ids("<|audio_bos|>"), audio_end_token_id=ids("<|audio_eos|>"),
        vision_start_token_id=ids("<|vision_bos|>"), vision_end_token_id=ids("<|vision_eos|>"),
        user_token_id=ids("user"), position_id_per_seconds=13)  # the processor's default (config default: 25)
    model = Qwen3OmniMoeThinkerForConditionalGeneration._from_config(config)
    processor = Qwen3OmniMoeProcessor(
        image_processor=Qwen2VLImageProcessor(size=VISION_SIZE_32, patch_size=16, temporal_patch_size=2,
                                              merge_size=2),
        video_processor=Qwen2VLVideoProcessor(size=VISION_SIZE_32, patch_size=16, temporal_patch_size=2,
                                              merge_size=2, min_frames=2, max_frames=16),
        feature_extractor=WhisperFeatureExtractor(feature_size=128, sampling_rate=16000, hop_length=160,
                                                  chunk_length=30, n_fft=400, return_attention_mask=True),
        tokenizer=tok, chat_template=CHAT_TEMPLATE)
    return _save(out_dir, model, processor)


def tiny_vision_lm(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Qwen2-VL (image-text-to-text: images and silent video frames, no audio) with its processor."""
    import torch
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    torch.manual_seed(seed)
    tok = build_tokenizer()
    ids = tok.convert_tokens_to_ids
    config = Qwen2VLConfig(
        vision_config=dict(depth=1, embed_dim=32, hidden_size=64, num_heads=2, mlp_ratio=2, patch_size=14,
                           spatial_merge_size=2, temporal_patch_size=2),
        text_config=dict(**_text_config(tok), rope_parameters={"rope_type": "default", "rope_theta": 1e6,
                                                               "mrope_section": [2, 3, 3]}),
        image_token_id=ids("<|IMAGE|>"), video_token_id=ids("<|VIDEO|>"),
        vision_start_token_id=ids("<|vision_bos|>"), vision_end_token_id=ids("<|vision_eos|>"))
    model = Qwen2VLForConditionalGeneration(config)
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(size=VISION_SIZE, patch_size=14, temporal_patch_size=2, merge_size=2),
        video_processor=Qwen2VLVideoProcessor(size=VISION_SIZE, patch_size=14, temporal_patch_size=2, merge_size=2,
                                              min_frames=2, max_frames=16),
        tokenizer=tok, chat_template=CHAT_TEMPLATE)
    return _save(out_dir, model, processor)


DEFAULT_OUT = Path("runs/tiny")


def train_command(out_dir: str | Path = DEFAULT_OUT, form: str | None = None) -> str:
    """The ``accelerate launch`` line that trains the tiny DPO recipe (``tiny/dpo``, one CPU process) on what
    :func:`build_tiny_suite` wrote into ``out_dir`` (its model and data named unless ``out_dir`` is the recipes'
    ``runs/tiny``), in the form that runs here (:func:`omniaudit.launch_files.launch_line`)."""
    import shlex

    from omniaudit.launch_files import launch_line

    out = Path(out_dir)
    where = [] if out == DEFAULT_OUT else ["--model_name_or_path", str(out / "causal_lm"),
                                           "--dataset_name", str(out / "data" / "chat")]
    args = [*where, "--output_dir", str(out / "dpo")]
    return launch_line("dpo", "tiny/dpo", "cpu", *map(shlex.quote, args), form=form)


def _text_chat_tables(interventions: Path) -> dict:
    """Text-only chat records (the video items and column dropped) from the interventions' sft and dpo configs."""
    import pandas as pd
    import pyarrow.parquet as pq

    def strip(messages: list[dict]) -> list[dict]:
        return [{"role": m["role"], "content": [c for c in m["content"] if c["type"] == "text"]} for m in messages]

    tables = {}
    for config, columns in (("sft", ("messages",)), ("dpo", ("prompt", "chosen", "rejected"))):
        rows = pq.read_table(sorted((interventions / config).glob("*.parquet"))).drop(["video"]).to_pylist()
        tables[config] = {"train": pd.DataFrame([{**r, **{c: strip(r[c]) for c in columns}} for r in rows])}
    return tables


def _preference_with_clips(out: Path) -> Path:
    """A 12-pair synthetic preference benchmark whose pairs each have a short video + audio clip (the omni judge and
    Omni ODIN tiny recipes read it: configs ``judge_sft`` and ``pairs_media``)."""
    import shutil
    import tempfile

    from omniaudit.data_builders.interventions import SyntheticClipSpec
    from omniaudit.data_builders.interventions.synthetic import synthesize_clips
    from omniaudit.data_builders.preference import (
        PreferenceBuildOptions,
        SyntheticSpec,
        build_preference_dataset,
        synthesize,
    )
    from omniaudit.data_builders.preference.read import COLUMNS

    tmp: str | Path  # the folder's name, then its Path
    with tempfile.TemporaryDirectory(prefix="omniaudit-tiny-") as tmp:
        tmp = Path(tmp)
        raw = synthesize(SyntheticSpec(n_pairs=12, seed=1))[list(COLUMNS)]
        raw.to_csv(tmp / "pairs.csv", index=False)
        clips = sorted(synthesize_clips(tmp / "clips", SyntheticClipSpec(n_clips=4, width=64, height=64)).parent
                       .glob("*.mp4"))
        (tmp / "media").mkdir()
        for i, name in enumerate(raw["name"].unique()):
            shutil.copyfile(clips[i % len(clips)], tmp / "media" / f"{name}.mp4")
        options = PreferenceBuildOptions(media_dir=str(tmp / "media"))
        return build_preference_dataset(out, tmp / "pairs.csv", options=options)


def build_tiny_suite(out_dir: str | Path = DEFAULT_OUT, progress=None) -> dict[str, Path]:
    """Everything the tiny recipes need, under ``out_dir``: models, a tokenizer and datasets from our builders."""
    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset
    from omniaudit.data_builders.preference import build_preference_dataset
    from omniaudit.hub_cards import dataset_card

    out = Path(out_dir)
    say = progress or (lambda _m: None)
    paths = {"causal_lm": out / "causal_lm", "seq_cls": out / "seq_cls", "omni": out / "omni",
             "audio_lm": out / "audio_lm", "tokenizer": out / "tokenizer", "preference": out / "data" / "preference",
             "interventions": out / "data" / "interventions", "chat": out / "data" / "chat",
             "preference_media": out / "data" / "preference_media"}
    for path in paths.values():  # refuse a foreign folder before building anything
        check_out_dir(path)
    say("tiny models")
    tiny_causal_lm(paths["causal_lm"])
    tiny_sequence_classifier(paths["seq_cls"])
    tiny_omni(paths["omni"])
    tiny_audio_lm(paths["audio_lm"])  # the audio-language model `transformers serve` takes input_audio with
    with atomic_dir(paths["tokenizer"]) as tmp:
        build_tokenizer().save_pretrained(tmp)
    say("preference dataset")
    build_preference_dataset(paths["preference"])
    say("preference dataset with clips")
    _preference_with_clips(paths["preference_media"])
    say("intervention dataset")
    build_interventions_dataset(paths["interventions"], spec=SyntheticClipSpec(n_clips=4, width=112, height=112))
    tables = _text_chat_tables(paths["interventions"])
    card = dataset_card("tiny_chat.md.j2", {"configs": configs_metadata({c: ["train"] for c in tables})})
    write_hub_dataset(paths["chat"], tables, card)
    return paths
