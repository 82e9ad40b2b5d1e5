"""Modality-attention probes (C3PO §4.2): where the answer position looks, per layer, and how spread out it is.

For a Transformers model run with eager attention, the attention row of the answer position (the first position the
model would generate from) is split over the token spans of each modality: audio, image (and video) spans are the
processor's placeholder tokens, text is everything else (question and chat template). Per layer the masses (mean over
heads) sum to the row's total, 1; the allocation ``alpha`` over {text, audio, image} is renormalised over those three
(videos are excluded, as in the paper), and its Shannon entropy ``H = -sum alpha log2 alpha``. The mid-layer entropy
is the mean of ``H`` over layers whose relative depth (layer / (L - 1)) lies in ``depth_range``.
``entropy_gap``: ``dH = mean H_mid(correct) - mean H_mid(incorrect)`` with a two-sample bootstrap CI; ``pooled_gap``
z-normalises ``H_mid`` within each model before pooling models. Correctness is per model: a model's ``H_mid`` is
split by whether *that* model answered each sample right (``entropy_gaps`` pairs them), never by another model's.
A model is probed only on media it encodes (:func:`model_modalities`; ``AttentionProbe.check_modalities`` refuses
the rest), and with the system text the hf runner sends (the template's default system prompt kept).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from omniaudit.errors import InputError
from omniaudit.runners.hf import default_system_prompt, join_system, media_towers

MODALITIES = ("text", "audio", "image")
PLACEHOLDERS = {"audio": "audio_token", "image": "image_token", "video": "video_token"}


@dataclass(frozen=True)
class ProbeConfig:
    depth_range: tuple[float, float] = (0.25, 0.75)  # relative depths (layer / (L - 1)) averaged into H_mid
    n_resamples: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        lo, hi = (float(v) for v in self.depth_range)
        if not 0.0 <= lo <= hi <= 1.0:
            raise InputError("expected a depth range 0 <= LOW <= HIGH <= 1 (relative depth: layer / (L - 1))",
                             value=list(self.depth_range))
        object.__setattr__(self, "depth_range", (lo, hi))


def entropy(alpha: np.ndarray) -> np.ndarray:
    """Shannon entropy in bits over the last axis (0 log 0 = 0)."""
    alpha = np.asarray(alpha, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(alpha > 0, alpha * np.log2(alpha), 0.0)
    return -terms.sum(axis=-1)


def span_masks(input_ids, tokenizer, present: list[str], model: str, processor=None):
    """Boolean masks (one per modality in ``present`` + text) over the sequence, from the placeholder token ids
    (the processor's own, else the tokenizer's); a modality whose span is empty is an error, not a zero."""
    import torch

    masks = {}
    for modality in present:
        token_id = getattr(processor, f"{PLACEHOLDERS[modality]}_id", None) if processor is not None else None
        if token_id is None:
            token = getattr(processor, PLACEHOLDERS[modality], None) or getattr(tokenizer, PLACEHOLDERS[modality],
                                                                                 None)
            token_id = tokenizer.convert_tokens_to_ids(token) if token else None
        if token_id is None or token_id == tokenizer.unk_token_id:
            raise InputError(f"the processor of {model} exposes no placeholder token for {modality}, so its "
                             f"{modality} span cannot be found")
        masks[modality] = input_ids == token_id
        if not masks[modality].any():
            raise InputError(f"{model}: no {modality} placeholder token in the encoded input, although a {modality} "
                             f"was given; its span cannot be measured")
    media = torch.zeros_like(input_ids, dtype=torch.bool)
    for m in masks.values():
        media |= m
    masks["text"] = ~media
    return masks


def layer_masses(attentions, masks: dict, query: int = -1) -> dict[str, np.ndarray]:
    """Per layer, the attention mass of row ``query`` (mean over heads) on each span: {modality: (layers,)}."""
    rows = np.stack([a[0, :, query, :].float().mean(dim=0).detach().cpu().numpy() for a in attentions])  # (L, T)
    return {m: rows[:, mask[0].cpu().numpy()].sum(axis=1) for m, mask in masks.items()} | {"total": rows.sum(axis=1)}


def mid_layers(n_layers: int, depth_range: tuple[float, float], model: str = "the model") -> np.ndarray:
    """Which of ``n_layers`` layers lie in ``depth_range`` (relative depth layer / (L - 1), both ends included).

    A range holding no layer is an error, never a silent fallback to all layers: a model with few layers (2 layers
    sit at depths 0 and 1) cannot give a mid-layer entropy for the default 0.25-0.75."""
    depth = np.arange(n_layers) / max(n_layers - 1, 1)
    keep = (depth >= depth_range[0] - 1e-12) & (depth <= depth_range[1] + 1e-12)
    if not keep.any():
        raise InputError(f"{model} has {n_layers} layer(s) at relative depths {np.round(depth, 3).tolist()}: none "
                         f"lies in the depth range {list(depth_range)}, so it has no mid-layer entropy; give a range "
                         f"that holds at least one of its layers (--depth-range LOW HIGH)")
    return keep


def mid_layer_mean(per_layer: np.ndarray, depth_range: tuple[float, float], model: str = "the model") -> float:
    """Mean of a per-layer value over the layers in ``depth_range`` (see ``mid_layers``)."""
    per_layer = np.asarray(per_layer, float)
    return float(per_layer[mid_layers(len(per_layer), depth_range, model)].mean())


def commit_depth(per_layer_entropy: np.ndarray) -> float:
    """Relative depth (layer / (L - 1)) of the entropy minimum: where the model commits to its narrowest attention
    over the modalities (C3PO §4.2: audio-bypass models commit at 0.11-0.31, Gemma-3n at 0.54-0.57). The first
    layer wins a tie."""
    h = np.asarray(per_layer_entropy, float)
    return float(np.argmin(h) / max(len(h) - 1, 1))


def model_modalities(config, processor) -> set[str]:
    """The media a model can encode, as the hf runner reads them: ``audio`` (an audio tower and a feature extractor),
    ``image`` (a vision tower and an image processor)."""
    towers = media_towers(config)
    accepts = set()
    if "audio" in towers and getattr(processor, "feature_extractor", None) is not None:
        accepts.add("audio")
    if "vision" in towers and getattr(processor, "image_processor", None) is not None:
        accepts.add("image")
    return accepts


def n_layers(model) -> int:
    """The language model's layer count (the attentions a forward pass returns)."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(config.num_hidden_layers)


class AttentionProbe:
    """Runs one model (eager attention) over samples with image / audio and text; video inputs are left out."""

    def __init__(self, model_path: str, config: ProbeConfig = ProbeConfig(), dtype: str = "auto") -> None:
        import torch
        from transformers import AutoModelForMultimodalLM, AutoProcessor

        self.path, self.config = str(model_path), config
        device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.processor = AutoProcessor.from_pretrained(self.path)
            model = AutoModelForMultimodalLM.from_pretrained(self.path, attn_implementation="eager", dtype=dtype)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load a multimodal model with eager attention: {exc}", file=model_path) from exc
        # what it can encode, read from the full config (a full Omni checkpoint declares its thinker's towers)
        self.accepts = model_modalities(model.config, self.processor)
        # full Qwen-Omni checkpoints load as talker + thinker; the thinker is the model that reads the inputs
        self.model = getattr(model, "thinker", model).to(device).eval()
        self.n_layers = n_layers(self.model)
        mid_layers(self.n_layers, config.depth_range, self.path)  # too few layers for the range: fail now
        # the same system text as the runner sends (hf.join_system: the template's default kept)
        self.default_system = default_system_prompt(self.processor, user_as_list=True, system_as_list=True)

    def check_modalities(self, needed: dict[str, str]) -> None:
        """Refuse a model that cannot encode a modality of the probed samples (``needed``: modality -> a sample id
        holding it): its attention to that span would be measured on a bare placeholder token it never encodes
        (a Qwen2-Audio-style model on an image), or the probe would fail mid-run (a vision model on audio)."""
        missing = [m for m in needed if m not in self.accepts]
        if missing:
            m = missing[0]
            raise InputError(f"attention model {self.path} takes only {', '.join(sorted(self.accepts)) or 'text'}, "
                             f"but the probed samples hold {' and '.join(missing)} (e.g. sample '{needed[m]}'): its "
                             f"attention to a {m} span would be read off placeholder tokens it never encodes. Probe "
                             f"it on a dataset of the modalities it takes, or leave it out of --attention")

    def sample(self, sample_id: str, question: str, image: bytes | None, audio: bytes | None,
               system: str | None = None) -> dict:
        """The routing of one sample: ``alpha`` (L, 3) over text / audio / image, per-layer ``entropy``, ``h_mid``,
        ``alpha_mean`` (alpha averaged over all layers; a modality the sample lacks is NaN), ``commit_depth`` and
        ``modalities`` (the sample's modality set, e.g. ``text+image``). ``question`` and ``system`` are the texts
        the model is asked with (the graded item's ``prompt`` and ``system``)."""
        import torch
        from PIL import Image

        from omniaudit.runners.items import decode

        present_now = [m for m, data in (("image", image), ("audio", audio)) if data is not None]
        self.check_modalities({m: sample_id for m in present_now})
        content, kwargs, present = [], {}, []
        if image is not None:
            content.append({"type": "image"})
            kwargs["images"] = [Image.open(io.BytesIO(image)).convert("RGB")]
            present.append("image")
        if audio is not None:
            content.append({"type": "audio"})
            rate = self.processor.feature_extractor.sampling_rate
            kwargs.update(audio=[decode(audio, rate)])
            present.append("audio")
        content.append({"type": "text", "text": question})
        system = join_system(self.default_system, system)
        messages = ([{"role": "system", "content": [{"type": "text", "text": system}]}] if system else []) + [
            {"role": "user", "content": content}]
        text = self.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        inputs = self.processor(text=[text], return_tensors="pt", **kwargs).to(self.model.device)
        masks = span_masks(inputs["input_ids"], self.processor.tokenizer, present, self.path, self.processor)
        with torch.no_grad():
            out = self.model(**inputs, output_attentions=True)
        if not out.attentions:
            raise InputError(f"{self.path} returned no attentions for sample '{sample_id}' (eager attention needed)")
        if len(out.attentions) != self.n_layers:
            raise InputError(f"{self.path}: {len(out.attentions)} attention maps for {self.n_layers} layers")
        masses = layer_masses(out.attentions, masks)
        three = np.stack([masses.get(m, np.zeros_like(masses["total"])) for m in MODALITIES], axis=1)  # (L, 3)
        alpha = three / three.sum(axis=1, keepdims=True)
        h = entropy(alpha)
        mean = {m: float(alpha[:, k].mean()) if m == "text" or m in present else float("nan")
                for k, m in enumerate(MODALITIES)}
        return {"id": sample_id, "alpha": alpha, "entropy": h, "masses": masses,
                "h_mid": mid_layer_mean(h, self.config.depth_range, self.path), "alpha_mean": mean,
                "commit_depth": commit_depth(h), "modalities": "+".join(["text", *sorted(present)])}


def entropy_gap(h_mid: np.ndarray, correct: np.ndarray, n_resamples: int = 2000, seed: int = 0) -> dict:
    """dH = mean H_mid(correct) - mean H_mid(incorrect), with a two-sample percentile bootstrap 95% CI."""
    h, ok = np.asarray(h_mid, float), np.asarray(correct, bool)
    a, b = h[ok], h[~ok]
    if not a.size or not b.size:
        return {"value": None, "ci": [None, None], "n_correct": int(a.size), "n_incorrect": int(b.size)}
    rng = np.random.default_rng(seed)
    boot = (a[rng.integers(0, a.size, (n_resamples, a.size))].mean(1)
            - b[rng.integers(0, b.size, (n_resamples, b.size))].mean(1))
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {"value": float(a.mean() - b.mean()), "ci": [float(lo), float(hi)], "n_correct": int(a.size),
            "n_incorrect": int(b.size)}


def pooled_gap(per_model: dict[str, tuple[np.ndarray, np.ndarray]], n_resamples: int = 2000, seed: int = 0) -> dict:
    """dH in within-model standard deviations: H_mid z-normalised per model, then pooled over models.

    ``per_model`` maps each model to ``(H_mid, correct)``: its own entropies and *its own* correctness (whether that
    model answered each sample right), never another model's."""
    hs, oks = [], []
    for h, ok in per_model.values():
        h = np.asarray(h, float)
        sd = h.std(ddof=1) if h.size > 1 else 0.0
        hs.append((h - h.mean()) / sd if sd > 0 else h - h.mean())
        oks.append(np.asarray(ok, bool))
    return entropy_gap(np.concatenate(hs), np.concatenate(oks), n_resamples, seed)


def entropy_gaps(h_mid: dict[str, np.ndarray], correct: dict[str, np.ndarray], category: np.ndarray,
                 n_resamples: int = 2000, seed: int = 0) -> dict:
    """dH per model (overall and per category) and pooled over models (within-model z-scores, overall and per
    category), each model's H_mid paired with that model's own correctness.

    ``h_mid`` / ``correct``: model -> one value per sample (same samples, same order, for every model);
    ``category``: the samples' categories.
    """
    category = np.asarray(category)
    if set(h_mid) != set(correct):
        raise ValueError(f"entropies for {sorted(h_mid)} but correctness for {sorted(correct)}")
    per_model = {}
    out: dict = {"models": {}}
    for model, h in h_mid.items():
        h, ok = np.asarray(h, float), np.asarray(correct[model], bool)
        if not h.shape == ok.shape == category.shape:
            raise ValueError(f"{model}: {h.size} entropies, {ok.size} correctness values, {category.size} categories")
        per_model[model] = (h, ok)
        out["models"][model] = {
            "overall": entropy_gap(h, ok, n_resamples, seed),
            "by_category": {c: entropy_gap(h[category == c], ok[category == c], n_resamples, seed)
                            for c in sorted(set(category))},
            "mean_h_mid": float(h.mean()) if h.size else None,
            "fraction_correct": float(ok.mean()) if ok.size else None}
    out["pooled_z"] = pooled_gap(per_model, n_resamples, seed)
    out["pooled_z_by_category"] = {
        c: pooled_gap({m: (h[category == c], o[category == c]) for m, (h, o) in per_model.items()}, n_resamples,
                      seed) for c in sorted(set(category))}
    return out


def routing_tables(frame, n_resamples: int = 2000, seed: int = 0) -> dict:
    """C3PO's routing analyses from per-sample probe results, per model.

    ``frame`` (pandas): one row per model and sample with ``model``, ``category`` (IC / CC), ``tier``,
    ``modalities`` (``text+image``, ``text+audio``, ``text+audio+image``), ``correct``, ``h_mid``, ``commit_depth``
    and ``alpha_text`` / ``alpha_audio`` / ``alpha_image`` (alpha averaged over layers; NaN where the sample lacks
    the modality). Per model:

    - ``alpha_by_tier``: tier -> modality -> mean alpha over the samples that hold the modality (Fig. 5 / 9);
    - ``delta_alpha_cc_ic_by_tier``: tier -> modality -> mean alpha(CC) - mean alpha(IC) (Fig. 9; None where a
      category has no sample);
    - ``h_mid_correct_by_category``: mean H_mid over the samples the model answered right, per category (Table 11);
    - ``commit_depth``: mean relative depth of the entropy minimum, overall and per category;
    - ``entropy_gap_by_modality_set``: dH per modality set with its bootstrap CI (``entropy_gap``), beside the
      set's ceiling ``max_bits`` = log2(number of modalities): an image-only sample's H is at most 1 bit, an
      image + audio one's log2 3, so sets are never mixed in one gap.
    """
    import pandas as pd

    def mean(values) -> float | None:
        values = pd.Series(values, dtype=float).dropna()
        return float(values.mean()) if len(values) else None

    out = {}
    for model, g in frame.groupby("model", sort=False):
        alpha, delta = {}, {}
        for tier, t in g.groupby("tier", sort=True):
            alpha[str(tier)] = {m: mean(t[f"alpha_{m}"]) for m in MODALITIES}
            cc, ic = t[t["category"] == "CC"], t[t["category"] == "IC"]
            delta[str(tier)] = {m: (None if mean(cc[f"alpha_{m}"]) is None or mean(ic[f"alpha_{m}"]) is None
                                    else mean(cc[f"alpha_{m}"]) - mean(ic[f"alpha_{m}"])) for m in MODALITIES}
        ok = g["correct"].astype(bool)
        sets = {}
        for name, s in g.groupby("modalities", sort=True):
            gap = entropy_gap(s["h_mid"].to_numpy(float), s["correct"].to_numpy(bool), n_resamples, seed)
            sets[name] = gap | {"max_bits": float(np.log2(len(name.split("+"))))}
        out[model] = {
            "alpha_by_tier": alpha, "delta_alpha_cc_ic_by_tier": delta,
            "h_mid_correct_by_category": {c: mean(g.loc[ok & (g["category"] == c), "h_mid"])
                                          for c in sorted(g["category"].unique())},
            "commit_depth": {"overall": mean(g["commit_depth"]),
                             "by_category": {c: mean(s["commit_depth"]) for c, s in g.groupby("category", sort=True)}},
            "entropy_gap_by_modality_set": sets}
    return out
