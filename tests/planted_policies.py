"""Planted answering policies for a fake OpenAI-compatible server (tests/chat_server.py): each policy decides from the
request body alone (the prompt text, the options it names, the system message, which media parts are present), as a
served model must; it never sees an item's id, gold answer or metadata.

The scorecard's default items (``omniaudit scorecard --size small``) are recognised by their own prompts:

- preference pairs: "Description A: ... Description B: ... Answer with a single letter: A or B." (text only);
- protocols (data_builders/protocols/prompts.py): classification items name their options ("Answer with exactly one
  of: x, y."); a supplied label appears as a specialist ('... classifier predicts "x".', or unframed "- Emotion: x."
  in a blueprint), a reference ("Reference label: x." before / after the question or as the system message) or a
  rubric hint ("a correct answer for this clip is x."); pairwise items end "Answer with A or B only." and send the
  two (or three) clips as one concatenated audio part (``concat``) or as one audio part each (``native``);
- interventions (data_builders/interventions/answers.py QUESTIONS): three free-form questions about a video with its
  soundtrack, answered with the builder's own answer texts;
- composition (data_builders/composition/synthetic.py): free-form colour and count questions over a picture and a
  spoken instruction.

A *content-blind guess* is a seeded hash of the whole request (every message, media bytes included) and the policy's
seed, mapped uniformly onto the item's answers: a deterministic function of the input, independent across items and
across the two orders of a pair (their media or texts differ), the same for a repeated identical input.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable

from omniaudit.data_builders.composition.synthetic import COLOURS, WORDS
from omniaudit.data_builders.interventions.answers import (
    QUESTIONS,
    Event,
    consistency_answer,
    existence_answer,
    sync_answer,
)

REFUSAL = "I cannot help with that."
_ONE_OF = re.compile(r"Answer with exactly one of: (?P<options>[^\n]+?)\.\s*$", re.MULTILINE)
_SPECIALIST = re.compile(r'classifier predicts "(?P<label>[^"]+)"')
_REFERENCE = re.compile(r"Reference label: (?P<label>[^\n]+?)\.\s*$", re.MULTILINE)
_RUBRIC = re.compile(r"a correct answer for this clip is (?P<label>[^\n]+?)\.\s*$", re.MULTILINE)
_UNFRAMED = re.compile(r"^- (?P<field>[A-Z][\w ]*): (?P<label>[^\n]+?)\.\s*$", re.MULTILINE)  # "- Emotion: sad."
# the builder's answer texts per interventions question: a uniform guess over each dimension's answers
# (synchronized / delayed / early; a sound / silence; a match / a mismatch)
_EVENT = Event()
THUD_ANSWERS = {
    QUESTIONS["sync"]: (sync_answer(_EVENT, 0.0), sync_answer(_EVENT, 2.0), sync_answer(_EVENT, -2.0)),
    QUESTIONS["existence"]: (existence_answer(_EVENT, True), existence_answer(_EVENT, False)),
    QUESTIONS["consistency"]: (consistency_answer(_EVENT, None, True), consistency_answer(_EVENT, None, False)),
}
COLOUR_ANSWERS = tuple(COLOURS)
COUNT_ANSWERS = tuple(WORDS[1:7])  # one..six: a superset of the default's counts (1-5), so no narrower prior


# ---------------------------------------------------------------------------------------------- reading a request
def user_parts(body: dict) -> list[dict]:
    """The content parts of the last (user) message."""
    content = body["messages"][-1]["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def prompt_text(body: dict) -> str:
    """The user message's text parts, joined (the item's prompt)."""
    return "\n".join(p["text"] for p in user_parts(body) if p["type"] == "text")


def system_text(body: dict) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "system")


def n_audio(body: dict) -> int:
    """How many audio parts the request sends (a video's own soundtrack rides inside its ``video_url``)."""
    return sum(p["type"] == "input_audio" for p in user_parts(body))


def options(body: dict) -> list[str] | None:
    """The closed set the prompt names (None: a free-form item)."""
    text = prompt_text(body)
    found = _ONE_OF.search(text)
    if found:
        return [o.strip() for o in found["options"].split(",")]
    if "A or B" in text:  # preference pairs and protocols pairwise trials
        return ["A", "B"]
    return None


def answers(body: dict) -> tuple[str, ...]:
    """What a content-blind model chooses among: the named options, else the free-form item's answer texts."""
    named = options(body)
    if named:
        return tuple(named)
    text = prompt_text(body).strip()
    if text in THUD_ANSWERS:
        return THUD_ANSWERS[text]
    if "colour" in text.lower():
        return COLOUR_ANSWERS
    if text.lower().startswith("how many"):
        return COUNT_ANSWERS
    return ("Insufficient Information",)


def is_concat_pairwise(body: dict) -> bool:
    """A protocols pairwise trial whose clips arrive as one concatenated audio part."""
    return options(body) == ["A", "B"] and n_audio(body) == 1


def supplied_label(body: dict) -> str | None:
    """The label the request supplies (a specialist's, a reference, a rubric hint), if it is one of the options."""
    named = options(body) or []
    text = system_text(body) + "\n" + prompt_text(body)
    for pattern in (_SPECIALIST, _REFERENCE, _RUBRIC, _UNFRAMED):
        for found in pattern.finditer(text):
            if found["label"] in named:
                return found["label"]
    return None


def guess(body: dict, seed: int) -> str:
    """A content-blind guess: uniform over :func:`answers`, a seeded hash of the whole request."""
    choices = answers(body)
    request = json.dumps(body["messages"], sort_keys=True).encode()
    digest = hashlib.sha256(str(seed).encode() + b"\0" + request).digest()
    return choices[int.from_bytes(digest[:8], "big") % len(choices)]


# ------------------------------------------------------------------------------------------------------- policies
Policy = Callable[[dict], str]


def random_guesser(seed: int) -> Policy:
    """No shortcut: a content-blind guess on every item."""
    return lambda body: guess(body, seed)


def concat_lock(seed: int) -> Policy:
    """Slot A on every pairwise trial sent as one concatenated recording; a content-blind guess elsewhere."""
    return lambda body: "A" if is_concat_pairwise(body) else guess(body, seed)


def label_follower(seed: int) -> Policy:
    """The supplied label whenever the request has one (right or wrong); a content-blind guess elsewhere."""
    return lambda body: supplied_label(body) or guess(body, seed)


def no_audio_fixed(seed: int) -> Policy:
    """A confounded non-shortcut: the first option of a classification item sent without audio (whether or not it
    shows a label), a content-blind guess with audio. It answers differently with and without audio but never
    reads the label. (Only items naming "one of" their options: the text-only preference pairs are guessed, since
    a fixed letter there would be a real position lock.)"""

    def answer(body: dict) -> str:
        named = options(body)
        if named and _ONE_OF.search(prompt_text(body)) and n_audio(body) == 0:
            return named[0]
        return guess(body, seed)

    return answer


_DESCRIPTIONS = re.compile(r"Description A: (?P<A>.*?)\n\nDescription B: (?P<B>.*?)\n\n", re.DOTALL)


def longer_in_self_correcting_prose(seed: int) -> Policy:
    """A style shortcut without a position lock, in prose that misleads a careless reader: the longer description of
    a preference pair, written as a correction that names the other slot first ("Description A is better. Wait, no:
    B is more faithful to the clip. Final answer: B."); a content-blind guess elsewhere."""

    def answer(body: dict) -> str:
        pair = _DESCRIPTIONS.search(prompt_text(body))
        if pair is None:
            return guess(body, seed)
        longer = "A" if len(pair["A"]) >= len(pair["B"]) else "B"
        other = "B" if longer == "A" else "A"
        return (f"Description {other} is better. Wait, no: {longer} is more faithful to the clip. "
                f"Final answer: {longer}.")

    return answer


def refuser(body: dict) -> str:
    """Nothing usable: every item refused."""
    return REFUSAL


def router(policies: dict[str, Policy]) -> Policy:
    """One server for several served models: the policy of ``body["model"]``."""
    return lambda body: policies[body["model"]](body)
