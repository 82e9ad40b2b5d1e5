"""Real specialists from Transformers checkpoints: ``hf:MODEL`` for a categorical attribute or the speaker task.

lalm-judge-protocol-shortcuts §IV-C fills the specialist block with an expert classifier's top-1 prediction
(emotion2vec+ for emotion, whisper-LID for language) and scores speaker triplets with an embedding model
(ECAPA-TDNN cosine against the reference clip). Here:

- **Audio classification** (any ``AutoModelForAudioClassification`` checkpoint: wav2vec2 / HuBERT / WavLM emotion
  heads, ``WhisperForAudioClassification`` language ID, ...). When the model's own classes name the attribute's
  labels (case-insensitive; one may be a prefix of the other, at least 3 letters: ``ang`` -> ``angry``,
  ``disgusted`` -> ``disgust``), the specialist is the pretrained model: top-1 over the classes that map to a label
  (nothing is trained, so nothing is out-of-fold). Otherwise, or for a checkpoint without a classification head,
  the model is an encoder: its clip embeddings (mean-pooled last hidden state) feed a standardised logistic
  regression predicted out-of-fold, with the eGeMAPS specialist's folds (stratified, grouped by speaker and
  identical audio, seeded).
- **Whisper language ID** (``WhisperForConditionalGeneration`` checkpoints, multilingual): the logits of the
  language tokens (``generation_config.lang_to_id``) at the first decoder position (decoder input: the start token
  only), as Whisper's own ``detect_language``; labels are matched to Whisper languages by name, alias, code or
  locale (``English``, ``en``, ``en_us``), and the top-1 is taken over the languages that name a label. For other
  attributes its encoder's mean-pooled state is the embedding.
- **Speaker embeddings** (``AutoModelForAudioXVector`` checkpoints such as WavLM / wav2vec2 x-vectors, else the
  mean-pooled hidden state of any audio encoder): each triplet picks the candidate with the higher cosine to the
  reference; reported as the specialist's triplet accuracy and the mean cosine margin (same - different speaker),
  the two numbers the paper gives for ECAPA-TDNN (1.00, 0.57).

Clips are fed one at a time (no padding, so a clip's output never depends on its batch), resampled to the feature
extractor's rate; the model runs on CUDA when available.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from omniaudit.errors import InputError

RATE = 16000


def parse_specialists(specs: list[str] | tuple[str, ...] | None) -> tuple[tuple[str, str], ...]:
    """``[ATTRIBUTE=]hf:MODEL`` -> ((attribute or "*", model), ...); "*" = every categorical attribute."""
    out = []
    for spec in specs or ():
        attribute, sep, rest = spec.partition("=")
        if not sep or attribute.startswith("hf:"):
            attribute, rest = "*", spec
        if not rest.startswith("hf:") or len(rest) <= 3:
            raise InputError("a specialist must look like hf:MODEL or ATTRIBUTE=hf:MODEL (a Transformers audio "
                             "classification or speaker-embedding checkpoint, local folder or Hub id)", value=spec)
        out.append((attribute.strip().lower(), rest[3:]))
    attributes = [a for a, _ in out]
    if len(attributes) != len(set(attributes)):
        raise InputError("one specialist per attribute", value=list(specs or ()))
    return tuple(out)


def specialist_for(specialists: tuple[tuple[str, str], ...], attribute: str) -> str | None:
    named = dict(specialists)
    if attribute in named:
        return named[attribute]
    return named.get("*") if attribute not in ("speaker", "naturalness") else None


@dataclass
class AudioModel:
    """A loaded checkpoint: ``logits`` (classification head) and ``embedding`` per clip."""

    name: str

    def __post_init__(self) -> None:
        import torch
        from transformers import AutoConfig, AutoFeatureExtractor

        try:
            config = AutoConfig.from_pretrained(self.name)
            self.extractor = AutoFeatureExtractor.from_pretrained(self.name)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load the specialist checkpoint: {exc}", value=self.name) from exc
        archs = " ".join(config.architectures or [])
        from transformers import (
            AutoModel,
            AutoModelForAudioClassification,
            AutoModelForAudioXVector,
            AutoModelForSpeechSeq2Seq,
        )

        whisper = getattr(config, "model_type", None) == "whisper" and "ConditionalGeneration" in archs
        loader = (AutoModelForSpeechSeq2Seq if whisper else AutoModelForAudioXVector if "XVector" in archs
                  else AutoModelForAudioClassification if "Classification" in archs else AutoModel)
        try:
            self.model = loader.from_pretrained(self.name)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot load the specialist model: {exc}", value=self.name) from exc
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model.to(self.device).eval()
        self.kind = "whisper" if whisper else "xvector" if loader is AutoModelForAudioXVector else (
            "classifier" if loader is AutoModelForAudioClassification else "encoder")
        self.classes = ([config.id2label[i] for i in range(len(config.id2label))]
                        if self.kind == "classifier" else [])
        self.language_ids: list[int] = []  # whisper: the <|xx|> token of each class
        if whisper:
            lang_to_id = dict(getattr(self.model.generation_config, "lang_to_id", None) or {})
            if not lang_to_id:
                raise InputError("a Whisper checkpoint without language tokens (generation_config.lang_to_id; an "
                                 "English-only model?) cannot identify languages", value=self.name)
            self.classes = [token.strip("<|>") for token in lang_to_id]  # language codes: en, fr, ...
            self.language_ids = [int(i) for i in lang_to_id.values()]
            self.start_id = int(self.model.generation_config.decoder_start_token_id
                                if self.model.generation_config.decoder_start_token_id is not None
                                else config.decoder_start_token_id)
        self.rate = int(getattr(self.extractor, "sampling_rate", RATE) or RATE)

    def _inputs(self, audio: np.ndarray) -> dict:
        if self.rate != RATE:
            from scipy.signal import resample_poly

            audio = resample_poly(audio, self.rate, RATE).astype(np.float32)
        inputs = self.extractor(audio, sampling_rate=self.rate, return_tensors="pt")
        return {k: v.to(self.device) for k, v in inputs.items()}

    def outputs(self, audio: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """(logits or None, embedding) of one 16 kHz mono clip."""
        import torch

        if self.kind == "whisper":  # language ID: the language tokens' logits at the first decoder position
            inputs = self._inputs(audio)
            start = torch.tensor([[self.start_id]], device=self.device)
            with torch.no_grad():
                out = self.model(input_features=inputs["input_features"], decoder_input_ids=start)
            logits = out.logits[0, -1, self.language_ids].float().cpu().numpy()
            # the encoder sees 30 s (padded); pool over the frames that hold the clip (2 mel frames per position)
            hop = int(getattr(self.extractor, "hop_length", 160) or 160)
            hidden = out.encoder_last_hidden_state[0]
            frames = min(hidden.shape[0], max(1, -(-len(audio) * self.rate // RATE // (2 * hop))))
            return logits, hidden[:frames].float().mean(0).cpu().numpy()
        with torch.no_grad():
            out = self.model(**self._inputs(audio), output_hidden_states=self.kind != "xvector")
        if self.kind == "xvector":
            return None, out.embeddings[0].float().cpu().numpy()
        hidden = out.hidden_states[-1] if self.kind == "classifier" else out.last_hidden_state
        logits = out.logits[0].float().cpu().numpy() if self.kind == "classifier" else None
        return logits, hidden[0].float().mean(0).cpu().numpy()


def map_classes(classes: list[str], labels: list[str]) -> dict[int, str]:
    """Model class index -> attribute label, for the classes that name one (see the module docstring)."""
    mapping: dict[int, str] = {}
    for i, cls in enumerate(classes):
        c = str(cls).strip().casefold()
        hits = [label for label in labels
                if c == label.casefold() or (min(len(c), len(label)) >= 3
                                             and (label.casefold().startswith(c) or c.startswith(label.casefold())))]
        exact = [label for label in hits if label.casefold() == c]
        if len(exact) == 1 or len(hits) == 1:
            mapping[i] = (exact or hits)[0]
    taken = pd.Series(mapping).value_counts() if mapping else pd.Series(dtype=int)
    if (taken > 1).any():
        label = taken.index[taken > 1][0]
        raise InputError(f"several classes of the specialist map to the label '{label}': "
                         f"{[classes[i] for i, v in mapping.items() if v == label]}")
    return mapping


def whisper_language_map(codes: list[str], labels: list[str]) -> dict[int, str]:
    """Whisper language class (code ``en``, ``fr``, ...) index -> attribute label, for labels that name a Whisper
    language: by name or alias (``English``, ``Mandarin Chinese``: its word ``mandarin``), by code (``en``) or by a
    locale whose language part is a code (FLEURS' ``en_us``)."""
    from transformers.models.whisper.tokenization_whisper import LANGUAGES, TO_LANGUAGE_CODE

    def code_of(label: str) -> str | None:
        text = str(label).strip().casefold()
        words = text.replace("-", " ").replace("_", " ").split()
        for cand in (text, *(words[:1]), *words):
            if cand in TO_LANGUAGE_CODE:
                return TO_LANGUAGE_CODE[cand]
            if cand in LANGUAGES:
                return cand
        return None

    index = {c: i for i, c in enumerate(codes)}
    mapping: dict[int, str] = {}
    for label in labels:
        code = code_of(label)
        if code in index:
            if index[code] in mapping:
                raise InputError(f"the labels '{mapping[index[code]]}' and '{label}' both name the Whisper language "
                                 f"'{code}'")
            mapping[index[code]] = label
    return mapping


def hf_attribute_specialist(model_name: str, audios: list[np.ndarray], labels: np.ndarray, groups: np.ndarray,
                            seed: int = 0, grouped_by: str = "speaker and identical audio") -> tuple[np.ndarray, str]:
    """Top-1 predictions of ``model_name`` for one attribute's clips and a sentence saying how they were made."""
    from omniaudit.data_builders.protocols.features import fitted_specialist

    model = AudioModel(model_name)
    names = sorted(set(labels))
    mapping = (map_classes(model.classes, names) if model.kind == "classifier"
               else whisper_language_map(model.classes, names) if model.kind == "whisper" else {})
    outs = [model.outputs(a) for a in audios]
    if len(set(mapping.values())) >= 2:
        cols = sorted(mapping)
        logits = np.stack([o[0][cols] for o in outs])
        pred = np.array([mapping[cols[k]] for k in logits.argmax(1)], dtype=object)
        unmapped = sorted(set(names) - set(mapping.values()))
        note = f"; labels it has no class for, never predicted: {', '.join(unmapped)}" if unmapped else ""
        if model.kind == "whisper":
            return pred, (f"{model_name} (pretrained Whisper language ID: the language tokens' logits at the first "
                          f"decoder position, top-1 over the languages that name a label{note})")
        return pred, f"{model_name} (pretrained audio classifier, top-1 over its classes that name a label{note})"
    x = pd.DataFrame(np.stack([o[1] for o in outs]))
    try:
        pred, folds = fitted_specialist(x, np.asarray(labels), seed, groups)
    except InputError as exc:
        exc.message = f"specialist {model_name}: {exc.message}"
        raise
    why = ("its classes name none of the labels" if model.kind in ("classifier", "whisper")
           else "no classification head")
    return pred, (f"logistic regression on {model_name} embeddings ({why}), out-of-fold ({folds}-fold grouped by "
                  f"{grouped_by}, seed {seed})")


def speaker_triplet_scores(model_name: str, trials: list[dict], array) -> dict:
    """Cosine scoring of speaker triplets: accuracy (the same-speaker candidate scores higher) and mean margin.

    ``trials``: the pairwise speaker trials ({reference, first, second, gold}); ``array(clip)`` the clip's audio.
    """
    model = AudioModel(model_name)
    cache: dict[str, np.ndarray] = {}

    def emb(clip: str) -> np.ndarray:
        if clip not in cache:
            v = model.outputs(array(clip))[1].astype(np.float64)
            cache[clip] = v / (np.linalg.norm(v) or 1.0)
        return cache[clip]

    same, other = [], []
    for t in trials:
        ref, a, b = emb(t["reference"]), emb(t["first"]), emb(t["second"])
        cands = (float(ref @ a), float(ref @ b))
        same.append(cands[t["gold"]])
        other.append(cands[1 - t["gold"]])
    same_a, other_a = np.array(same), np.array(other)
    kind = ("x-vector" if model.kind == "xvector" else "mean-pooled Whisper encoder state" if model.kind == "whisper"
            else "mean-pooled hidden state")
    return {"specialist_source": f"{model_name} ({kind} embeddings, cosine to the reference clip)",
            "specialist_accuracy": float(np.mean(same_a > other_a)) if len(same) else None,
            "cosine_margin": float(np.mean(same_a - other_a)) if len(same) else None, "triplets": len(same)}
