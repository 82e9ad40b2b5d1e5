"""Reference judges with known behaviour: their audit numbers are known analytically, so they test the audit."""

from __future__ import annotations

import hashlib

import numpy as np

from omniaudit.errors import InputError
from omniaudit.evaluation.judges.items import JudgeItem

SCRIPTED = ("always-a", "always-b", "copy-reference", "copy-specialist", "oracle", "random")


class ScriptedJudge:
    """``always-a`` / ``always-b`` (first / second option: slot A / B in pairs), ``copy-reference``,
    ``copy-specialist`` (the label the prompt supplies; no label: an unparseable refusal), ``oracle`` (the gold
    answer; "A" where there is none), ``random`` (uniform, seeded per item id, so independent of order and batching).
    """

    def __init__(self, name: str, seed: int = 0) -> None:
        if name not in SCRIPTED:
            raise InputError(f"unknown scripted judge; expected one of {', '.join(SCRIPTED)}", value=name)
        self.name, self.seed = name, seed

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        return [self._one(item) for item in items]

    def _one(self, item: JudgeItem) -> str:
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
        return item.options[int(np.random.default_rng(list(digest[:8])).integers(len(item.options)))]
