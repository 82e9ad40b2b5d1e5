"""Tiny, randomly initialised models built from configs, fully offline: for tests, demos and CPU smoke runs.

A byte-level BPE tokenizer is trained locally on the words omniaudit's prompts use; models are built from small
configs (a few hundred thousand parameters) and saved with ``save_pretrained`` so every loader sees a normal
checkpoint folder. Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

from omniaudit.io import atomic_dir

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>"]
# ChatML; list contents may hold {"type": "audio"} items (tests only content["type"], as Arrow adds None keys)
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'audio' %}<|audio_bos|><|AUDIO|><|audio_eos|>\n"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
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
                                               "audio_eos_token": "<|audio_eos|>"},
                         model_max_length=4096)
    tok.add_special_tokens({"extra_special_tokens": ["<|im_start|>", "<|im_end|>"]},
                           replace_extra_special_tokens=False)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def _text_config(tok, **extra) -> dict:
    return dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
                eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None, **extra)


def tiny_causal_lm(out_dir: str | Path, seed: int = 0) -> Path:
    """A tiny Qwen2 causal LM + tokenizer (chat template included)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    tok = build_tokenizer()
    model = Qwen2ForCausalLM(Qwen2Config(**_text_config(tok), tie_word_embeddings=True))
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
    return Path(out_dir)


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
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        processor.save_pretrained(tmp)
    return Path(out_dir)
