"""Reference judges with known behaviour: their audit numbers are known analytically, so they test the audit."""

from __future__ import annotations

import hashlib

import numpy as np

from omniaudit.errors import InputError
from omniaudit.evaluation.runners.items import JudgeItem, Sampling

SCRIPTED = ("always-a", "always-b", "copy-reference", "copy-specialist", "oracle", "random")


class ScriptedJudge:
    """``always-a`` / ``always-b`` (first / second option: slot A / B in pairs), ``copy-reference``,
    ``copy-specialist`` (the label the prompt supplies; no label: an unparseable refusal), ``oracle`` (the gold
    answer; "A" where there is none), ``random`` (uniform, seeded per item id, so independent of order and batching;
    run r of ``--runs`` uses seed + r, the seed defaulting to 0).
    On a free-form item (no options) ``oracle`` answers the gold answer and ``random`` the gold answer or "I don't
    know." with equal odds; ``always-a`` / ``always-b`` have no option to pick and refuse it.
    """

    def __init__(self, name: str, seed: int = 0, sampling: Sampling | None = None) -> None:
        if name not in SCRIPTED:
            raise InputError(f"unknown scripted judge; expected one of {', '.join(SCRIPTED)}", value=name)
        self.name = name
        self.sampling = sampling or Sampling(seed=seed)

    @property
    def seed(self) -> int:
        """The seed of ``random``: the run's seed (already seed + run), else 0 + run."""
        return self.sampling.seed if self.sampling.seed is not None else self.sampling.run

    def render(self, item: JudgeItem) -> str:
        """The messages the item would be sent as (JSON, media as stand-ins); a scripted judge reads no prompt."""
        from omniaudit.evaluation.runners.payload import render_messages

        return render_messages(item)

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        return [self._one(item) for item in items]

    def _one(self, item: JudgeItem) -> str:
        if not item.closed and (self.name in ("always-a", "always-b") or (self.name == "oracle" and not item.gold)):
            raise InputError(f"item '{item.id}' is free-form (no options) and has no gold answer for scripted:"
                             f"{self.name}" if self.name == "oracle" else
                             f"scripted:{self.name} picks an option, but item '{item.id}' is free-form (no options)")
        if self.name == "always-a":
            return item.options[0]
        if self.name == "always-b":
            return item.options[min(1, len(item.options) - 1)]
        if self.name == "copy-reference":
            return item.reference or "I was given no reference label."
        if self.name == "copy-specialist":
            return item.specialist or "I was given no specialist label."
        if self.name == "oracle":
            return item.gold or item.options[0]
        digest = hashlib.sha256(f"{self.seed}\0{item.id}".encode()).digest()
        choices = item.options if item.closed else [item.gold or "I don't know.", "I don't know."]
        return choices[int(np.random.default_rng(list(digest[:8])).integers(len(choices)))]
