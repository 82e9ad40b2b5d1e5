"""Encoder outputs cached per source, for audio LMs whose encoder dominates every prompt (Qwen2-Audio style).

A Qwen2-Audio-style model runs a Whisper-style encoder over the full 30-s padded log-mel of every clip in every
prompt, behind a (frames x frames) attention mask: on a small model this is most of a forward pass, paid again for
each question asked about the same clip. :class:`AudioEmbeddings` computes each source's projected audio embeddings
once (the model's own encoder, mask and projector, one source at a time: the encoder's rows are independent), keeps
them in the runner's byte-bounded media cache, and hands the model ``inputs_embeds`` with them scattered into the
audio placeholder positions, which is what the model's forward does itself (its audio branch is then skipped).

It applies to models whose inner model has an ``audio_tower`` taking ``(input_features, attention_mask)`` with
``_get_feat_extract_output_lengths`` and a ``multi_modal_projector``; Qwen-Omni thinkers (their encoders take only
the valid frames, flattened across the batch) are not touched. Tests check the scores against the model's own path.
"""

from __future__ import annotations

import inspect

from omniaudit.runners.hf_media import MediaCache


class AudioEmbeddings:
    def __init__(self, model, cache: MediaCache) -> None:
        self.inner = model.model
        self.tower, self.projector = self.inner.audio_tower, self.inner.multi_modal_projector
        self.embed = model.get_input_embeddings()
        self.audio_token_id = model.config.audio_token_id
        self.cache = cache

    @staticmethod
    def applies(model) -> bool:
        inner = getattr(model, "model", None)
        tower = getattr(inner, "audio_tower", None)
        if tower is None or not hasattr(inner, "multi_modal_projector"):
            return False
        params = list(inspect.signature(tower.forward).parameters)
        return (params[:2] == ["input_features", "attention_mask"]
                and hasattr(tower, "_get_feat_extract_output_lengths")
                and getattr(model.config, "audio_token_id", None) is not None)

    def _source(self, features, feature_length):
        """One source's projected audio embeddings (n_tokens, hidden), as the model's forward computes them."""
        import torch
        from transformers.masking_utils import create_bidirectional_mask

        frames, tokens = self.tower._get_feat_extract_output_lengths(feature_length)
        width = (features.shape[-1] - 2) // 2 + 1
        valid = (torch.arange(width, device=features.device) < frames)[None].long()
        mask = create_bidirectional_mask(config=self.tower.config,
                                         inputs_embeds=torch.zeros((1, width, 1), dtype=self.embed.weight.dtype,
                                                                   device=features.device),
                                         attention_mask=valid)
        with torch.no_grad():
            hidden = self.tower(features, attention_mask=mask).last_hidden_state
            return self.projector(hidden)[0, : int(tokens)]

    def merge(self, inputs: dict, sources: list[str]) -> dict:
        """``inputs`` with ``input_features`` replaced by ``inputs_embeds`` (one row of features per source, in
        order); left as they are when the placeholders and the features do not line up."""
        import torch

        features, lengths = inputs["input_features"], inputs["feature_attention_mask"].sum(-1)
        if len(sources) != features.shape[0]:
            return inputs
        def encode(i: int):
            return lambda: self._source(features[i : i + 1], lengths[i])

        pieces = [self.cache.get("encoder:audio", (source,), encode(i)) for i, source in enumerate(sources)]
        placeholders = inputs["input_ids"] == self.audio_token_id
        audio = torch.cat(pieces)
        if int(placeholders.sum()) != audio.shape[0]:
            return inputs
        with torch.no_grad():
            embeds = self.embed(inputs["input_ids"])
            embeds = embeds.masked_scatter(placeholders[..., None], audio.to(embeds.device, embeds.dtype))
        rest = {k: v for k, v in inputs.items() if k not in ("input_features", "feature_attention_mask")}
        return {**rest, "inputs_embeds": embeds}
