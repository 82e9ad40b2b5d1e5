"""Qwen2.5-Omni thinker: each source's vision and audio encoder outputs computed once, through the media cache.

The three diagnostic questions on one clip (or the two orders of one pair) send the same frames and soundtrack to the
model. The media cache decodes and featurises each source once, but the thinker's vision encoder (a ViT over every
frame patch) and audio encoder ran again for every question: on a real omni model most of a video prompt's prefill.
:class:`OmniEncoders` stands in for the inner model's ``get_video_features`` and ``get_audio_features`` (instance
attributes, as :class:`~omniaudit.runners.hf_media.CachedFeaturizer` stands in for the sub-processors): for the
batch the runner has just encoded, it splits the features per source, computes each source's encoder output on its
own (the encoders' attention never crosses sources: per-video windows, per-clip audio chunks) once, keeps it in the
byte-bounded media cache (``encoder:video`` / ``encoder:audio``; ``media_cache_bytes=0`` keeps nothing), and joins
the outputs in the batch's order, as the model would.

Only the batch tensors the runner registered (:meth:`OmniEncoders.expect`, by identity) are served from the cache;
any other call runs the model's own method. Qwen3-Omni (its vision encoder also feeds deep-stack features into the
language model) is left alone. Tests check the answers against the model's own encoders.
"""

from __future__ import annotations

from typing import Any

from omniaudit.runners.hf_media import MediaCache


def _plain(kwargs: dict) -> bool:
    """A call asking for nothing but the outputs (no attentions, hidden states or tuples)."""
    return set(kwargs) <= {"return_dict"} and kwargs.get("return_dict", True) is not False


class OmniEncoders:
    def __init__(self, model, cache: MediaCache) -> None:
        self.inner, self.cache = model.model, cache
        self._video, self._audio = self.inner.get_video_features, self.inner.get_audio_features
        self._batch: dict[str, tuple[Any, list[str]]] = {}
        self.inner.get_video_features = self.get_video_features
        self.inner.get_audio_features = self.get_audio_features

    @staticmethod
    def applies(model) -> bool:
        inner = getattr(model, "model", None)
        return type(inner).__name__ == "Qwen2_5OmniThinkerModel" and all(
            callable(getattr(inner, name, None)) for name in ("get_video_features", "get_audio_features"))

    def expect(self, inputs: dict, video_sources: list[str], audio_sources: list[str]) -> None:
        """The batch the model is about to get: its frame and soundtrack tensors (as passed, matched by identity)
        and the source of each of their rows, in order."""
        self._batch = {name: (inputs[name], sources) for name, sources in
                       (("pixel_values_videos", video_sources), ("input_features", audio_sources))
                       if name in inputs and sources}

    def _sources(self, name: str, tensor) -> list[str] | None:
        registered = self._batch.get(name)
        return registered[1] if registered is not None and registered[0] is tensor else None

    def get_video_features(self, pixel_values_videos, video_grid_thw=None, **kwargs):
        """The model's ``get_video_features``, each registered video's output computed once."""
        sources = self._sources("pixel_values_videos", pixel_values_videos)
        if sources is None or video_grid_thw is None or len(sources) != len(video_grid_thw) or not _plain(kwargs):
            return self._video(pixel_values_videos, video_grid_thw, **kwargs)
        import torch
        from transformers.modeling_outputs import BaseModelOutputWithPooling

        rows = video_grid_thw.prod(-1).tolist()  # patches of each video
        starts = [sum(rows[:i]) for i in range(len(rows))]

        def encode(i: int):
            def make():
                with torch.no_grad():
                    out = self._video(pixel_values_videos[starts[i]:starts[i] + rows[i]], video_grid_thw[i:i + 1],
                                      return_dict=True)
                return out.pooler_output[0]
            return make

        pieces = tuple(self.cache.get("encoder:video", (source, tuple(video_grid_thw[i].tolist())), encode(i))
                       for i, source in enumerate(sources))
        return BaseModelOutputWithPooling(pooler_output=pieces)

    def get_audio_features(self, input_features, feature_attention_mask=None, audio_feature_lengths=None, **kwargs):
        """The model's ``get_audio_features``, each registered soundtrack's output computed once."""
        sources = self._sources("input_features", input_features)
        usable = sources is not None and feature_attention_mask is not None and len(sources) == len(input_features)
        if not usable or not _plain(kwargs):
            return self._audio(input_features, feature_attention_mask, audio_feature_lengths, **kwargs)
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        lengths = feature_attention_mask.sum(-1).tolist()

        def encode(i: int):
            def make():
                with torch.no_grad():
                    out = self._audio(input_features[i:i + 1], feature_attention_mask[i:i + 1], return_dict=True)
                return out.last_hidden_state
            return make

        pieces = [self.cache.get("encoder:audio", (source, int(lengths[i])), encode(i))
                  for i, source in enumerate(sources)]
        return BaseModelOutput(last_hidden_state=torch.cat(pieces))
