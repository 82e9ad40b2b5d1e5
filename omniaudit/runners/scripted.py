"""Reference judges with known behaviour: their audit numbers are known analytically, so they test the audit.

Two families:

- the original ones (``always-a``, ``always-b``, ``copy-reference``, ``copy-specialist``, ``oracle``, ``random``);
- the scorecard's planted-shortcut models (:data:`PLANTED`): each answers every audit's items, takes exactly one
  shortcut and is the oracle everywhere else, so ``omniaudit scorecard`` must flag exactly that shortcut for it.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from omniaudit.answer_match import normalize
from omniaudit.errors import InputError
from omniaudit.runners.base import RefusedItems, Runner
from omniaudit.runners.items import JudgeItem, Sampling
from omniaudit.shortcuts import BY_NAME, PLANTED  # the planted-shortcut reference models: name -> its one shortcut

ORIGINAL = ("always-a", "always-b", "copy-reference", "copy-specialist", "oracle", "random")


def scripted_names() -> tuple[str, ...]:
    """Every scripted judge: the original ones and the planted model of each shortcut of the table."""
    return (*ORIGINAL, *PLANTED)


def plant_of(name: str):
    """The answering rule of planted model ``name`` (the table's ``plant``: item -> answer, or None: the oracle's)."""
    import importlib

    module, _, function = BY_NAME[PLANTED[name]].plant.partition(":")
    return getattr(importlib.import_module(module), function)
# a preference item shows its two descriptions in these words (data_builders/preference/judge.py PROMPTS)
_DESCRIPTIONS = re.compile(r"Description A: (?P<a>.*?)\n\nDescription B: (?P<b>.*?)\n\n", re.DOTALL)
_DIMENSIONS = ("sync", "existence", "consistency")
# the short answers of the composition defaults (data_builders/composition/synthetic.py): audio-dominant's wrong ones
_ABLATIONS = ("mute_", "drop_", "blank_", "swap_", "text_only")  # composition ablation ids: SAMPLE/ABLATION
_DISTRACTORS = ("one", "two", "three", "four", "five", "six", "red", "green", "blue")


class ScriptedJudge(Runner):
    """``always-a`` / ``always-b`` (first / second option: slot A / B in pairs), ``copy-reference``,
    ``copy-specialist`` (the label the prompt supplies; no label: an unparseable refusal), ``oracle`` (the gold
    answer; "A" where there is none), ``random`` (uniform, seeded per item id, so independent of order and batching;
    run r of ``--runs`` uses seed + r, the seed defaulting to 0).
    On a free-form item (no options) ``oracle`` answers the gold answer and ``random`` the gold answer or "I don't
    know." with equal odds; ``always-a`` / ``always-b`` have no option to pick and refuse it.

    The planted-shortcut models answer as ``oracle`` except where their shortcut applies:

    - ``position-locked``: a closed item with a presentation order (``order``: preference ab/ba, protocols pairwise
      AB/BA) gets its first option (slot A), whatever it shows;
    - ``label-follower``: an item that supplies a label gets it back: its ``reference``, else its ``specialist``
      (protocols blueprint / reference / cue-conflict), right or wrong;
    - ``deaf``: a question about the sound of a video with its soundtrack (the interventions diagnostic's sync,
      existence and consistency questions) is answered from the picture, as on the unaltered clip: "synchronized",
      the sound the visible event would make, "the sound matches", whatever Shift / Mute / Swap did to the audio;
    - ``verbose``: a pairwise preference item (its prompt shows "Description A: ..." and "Description B: ...") gets
      the longer description (characters, as the builder's ``len1`` / ``len2``); equal lengths: the oracle's answer;
    - ``audio-dominant``: a free-form question with a gold answer over media that include sound (a composition sample,
      C3PO) is answered wrongly with what "the audio says" (a wrong answer fixed per sample), as long as its audio is
      there; where an ablation removes or replaces the audio (id ending ``/mute_audio``, ``/text_only`` or any other
      ablation naming audio) it answers the gold answer. Its failures move only without the audio: audio dominance.
    The scripted models read item metadata (``gold``, ``reference``, ``specialist``, ``order``, the ablation an id
    names) and, for ``verbose``, the two descriptions in the prompt, as a length-biased judge reads them.
    """

    renders = True
    accepts = frozenset({"audio", "image", "video", "video+audio"})  # it reads no media: every kind is taken
    sampling: Sampling

    def __init__(self, name: str, seed: int = 0, sampling: Sampling | None = None) -> None:
        if name not in scripted_names():
            raise InputError(f"unknown scripted judge; expected one of {', '.join(scripted_names())}", value=name)
        self.name = name
        self.sampling = sampling or Sampling(seed=seed)

    def identity(self, refresh: bool = False) -> dict:
        return {"kind": "scripted", "model": self.name}

    @property
    def seed(self) -> int:
        """The seed of ``random``: the run's seed (already seed + run), else 0 + run."""
        return self.sampling.seed if self.sampling.seed is not None else self.sampling.run

    def render(self, item: JudgeItem) -> str:
        """The messages the item would be sent as (JSON, media as stand-ins); a scripted judge reads no prompt."""
        from omniaudit.runners.payload import render_messages

        return render_messages(item)

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        return [self._one(item) for item in items]

    def _one(self, item: JudgeItem) -> str:
        planted = plant_of(self.name)(item) if self.name in PLANTED else None
        if planted is not None:
            return planted
        name = "oracle" if self.name in PLANTED else self.name
        if not item.closed and (name in ("always-a", "always-b") or (name == "oracle" and not item.gold)):
            raise RefusedItems(f"item '{item.id}' is free-form (no options) and has no gold answer for scripted:"
                               f"{self.name}" if name == "oracle" else
                               f"scripted:{self.name} picks an option, but item '{item.id}' is free-form (no options)")
        if name == "always-a":
            return item.options[0]
        if name == "always-b":
            return item.options[min(1, len(item.options) - 1)]
        if name == "copy-reference":
            return item.reference or "I was given no reference label."
        if name == "copy-specialist":
            return item.specialist or "I was given no specialist label."
        if name == "oracle":
            return item.gold or item.options[0]
        digest = hashlib.sha256(f"{self.seed}\0{item.id}".encode()).digest()
        choices = item.options if item.closed else [item.gold or "I don't know.", "I don't know."]
        return choices[int(np.random.default_rng(list(digest[:8])).integers(len(choices)))]


# ---- the planted models of the shortcut table (omniaudit.shortcuts: each Shortcut's plant)
def slot_a_where_ordered(item: JudgeItem) -> str | None:
    """``position-locked``: a closed item with a presentation order gets its first option (slot A)."""
    return item.options[0] if item.closed and item.order else None


def the_supplied_label(item: JudgeItem) -> str | None:
    """``label-follower``: an item that supplies a label gets it back (its reference, else its specialist)."""
    return item.reference or item.specialist or None


def the_picture_s_sound(item: JudgeItem) -> str | None:
    """``deaf``: a question about a video's sound is answered as on the unaltered clip (the picture's sound)."""
    dimension = sound_question(item)
    if dimension is None:
        return None
    from omniaudit.data_builders.interventions.answers import Event, correct_answer

    return correct_answer(Event(), "original", dimension)


def what_the_audio_says(item: JudgeItem) -> str | None:
    """``audio-dominant``: see :func:`_audio_led`."""
    return _audio_led(item)


def the_longer_description(item: JudgeItem) -> str | None:
    """``verbose``: a pairwise preference item gets the longer description (equal lengths: the oracle's answer)."""
    descriptions = _DESCRIPTIONS.search(item.prompt) if item.closed and len(item.options) == 2 else None
    if descriptions is None:
        return None
    a, b = len(descriptions["a"].strip()), len(descriptions["b"].strip())
    return None if a == b else item.options[0 if a > b else 1]


def _audio_led(item: JudgeItem) -> str | None:
    """``audio-dominant``'s answer to a free-form question over sound (see :class:`ScriptedJudge`), else None."""
    if item.closed or not item.gold or sound_question(item) is not None:
        return None
    sample, _, ablation = item.id.rpartition("/")
    ablation = ablation if sample and ablation.startswith(_ABLATIONS) else ""
    if "audio" in ablation or ablation == "text_only":
        return item.gold  # the audio is gone or not its own: the answer moves
    if not any(part.kind == "audio" or part.modality == "video+audio" for part in item.media):
        return None
    gold = item.gold.strip().lower()
    count = normalize(gold).isdigit()  # a wrong answer of the gold's kind: "five" to "Which colour?" is read by none
    wrong = [w for w in _DISTRACTORS if w != gold and normalize(w).isdigit() == count]
    key = sample if ablation else item.id  # the same wrong answer for a sample and its ablations that keep the audio
    return wrong[int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") % len(wrong)]


def sound_question(item: JudgeItem) -> str | None:
    """The interventions dimension (sync, existence, consistency) of a free-form question about the sound of a video
    with its own soundtrack, else None: the builder's question (its exact words), or an id ending in the dimension."""
    from omniaudit.data_builders.interventions.answers import QUESTIONS

    if item.closed or not any(part.modality == "video+audio" for part in item.media):
        return None
    for dimension, question in QUESTIONS.items():
        if item.prompt.strip() == question:
            return dimension
    tail = item.id.rsplit("/", 1)[-1]
    return tail if tail in _DIMENSIONS else None
