"""``reward:FOLDER``: a reward model as a pairwise judge, so the scorecard audits reward models as it audits judges.

``FOLDER`` is a reward model written by ``training/reward_odin.py`` (:mod:`omniaudit.runners.odin_model`: a LoRA
run's adapter and heads over the base model its ``adapter_config.json`` names, or a full run's ``model.safetensors``
with ``base_model`` beside it as ``reward:FOLDER@BASE``). It answers the items of a pairwise preference config (the
preference audit's ``judge`` config: two descriptions shown as A and B, options ``["A", "B"]``) by scoring each
description alone, as the model was trained, with the content head: ``P(A) = sigmoid(r_C(A) - r_C(B))`` as the answer's
option probabilities, and the likelier letter as its text (none on an exact tie). With ODIN's three heads the length
and prior heads are never read: that is the remedy.

It reads the two descriptions out of the item's prompt by the preference builder's template (``Description A: ...``
then ``Description B: ...``, each marker once). An item it cannot read so (another config, a prompt that names a
marker twice, media it does not take) gets an empty answer: a non-reading, never a guessed letter.
"""

from __future__ import annotations

import re
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.runners.base import Runner
from omniaudit.runners.items import Answer, JudgeItem

MARKERS = ("Description A: ", "Description B: ")
_PAIR = re.compile(r"Description A: (?P<a>.*?)\n\nDescription B: (?P<b>.*?)\n\n", re.DOTALL)


def descriptions(item: JudgeItem) -> tuple[str, str] | None:
    """The descriptions shown as A and B in a pairwise item's prompt, or None when the prompt is not one (options
    other than A/B, a marker missing or given twice)."""
    if list(item.options) != ["A", "B"] or any(item.prompt.count(m) != 1 for m in MARKERS):
        return None
    found = _PAIR.search(item.prompt)
    return (found["a"], found["b"]) if found else None


class RewardJudge(Runner):
    """A reward model answering pairwise items with its content head (see the module docstring)."""

    accepts = frozenset()

    def __init__(self, spec: str, batch_size: int = 8, max_length: int = 400) -> None:
        folder, _, base = spec.partition("@")
        self.folder, self.base = Path(folder), base or None
        if not self.folder.is_dir():
            raise InputError("reward model folder not found (expected reward:FOLDER, a training/reward_odin.py "
                             "output)", value=folder)
        self.batch_size, self.max_length = batch_size, max_length
        self._model = self._tokenizer = None

    def _load(self):
        if self._model is None:
            import torch
            from transformers import AutoTokenizer

            from omniaudit.runners.odin_model import load_odin

            torch.manual_seed(0)
            self._model = load_odin(self.folder, self.base)
            self._tokenizer = AutoTokenizer.from_pretrained(self.base or self._base_name())
            self._tokenizer.padding_side = "right"
            if self._tokenizer.pad_token is None:
                self._tokenizer.pad_token = self._tokenizer.eos_token
        return self._model, self._tokenizer

    def _base_name(self) -> str:
        from peft import PeftConfig

        return PeftConfig.from_pretrained(str(self.folder)).base_model_name_or_path

    def content_scores(self, texts: list[str], progress=None) -> list[float]:
        """``r_C`` of each text (a description alone, as the model was trained on)."""
        import torch

        model, tokenizer = self._load()
        out: list[float] = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                enc = tokenizer(texts[start:start + self.batch_size], padding=True, truncation=True,
                                max_length=self.max_length, return_tensors="pt")
                scores, _ = model(enc["input_ids"], enc["attention_mask"])
                out.extend(scores[:, 0].float().tolist())
                if progress is not None:
                    progress(f"{len(out)}/{len(texts)} descriptions scored")
        return out

    def answer(self, items: list[JudgeItem], progress=None) -> list:
        """Per item: the likelier letter with ``P(A)`` and ``P(B)``; an empty answer where the item is no readable
        pair or the two rewards tie exactly (no preference: nothing to read)."""
        import math

        pairs = [descriptions(item) for item in items]
        readable = [(i, pair) for i, pair in enumerate(pairs) if pair is not None]
        scores = self.content_scores([t for _, pair in readable for t in pair], progress) if readable else []
        answers: list = [Answer("") for _ in items]
        for k, (i, _) in enumerate(readable):
            margin = scores[2 * k] - scores[2 * k + 1]
            if margin:
                p_a = 1.0 / (1.0 + math.exp(-margin))
                answers[i] = Answer("A" if margin > 0 else "B", option_probs={"A": p_a, "B": 1.0 - p_a})
        self.answer_paths = ["option_scores" if a else "free" for a in answers]
        self.option_probs = [a.option_probs for a in answers]
        return answers

    def identity(self, refresh: bool = False) -> dict:
        """The reward folder's weights (adapter and heads, or the full model) and its base model's."""
        from omniaudit.runners.identity import local_model_identity

        own = local_model_identity(str(self.folder))
        base = self.base or (self._base_name() if (self.folder / "adapter_config.json").is_file() else None)
        return {**own, "kind": "reward", "base": None if base is None else local_model_identity(base)["sha256"]}
