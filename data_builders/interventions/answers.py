"""Diagnostic questions, structured targets and answer texts (audio-verifying and shortcut) for every intervention.

One dimension per intervention (Thud Table 3): Shift probes temporal synchronisation (``sync``), Mute sound existence
(``existence``), Swap source consistency (``consistency``); an Original clip is the positive control for all three.
Questions follow appendix G/H: a structured sync question, and the neutral description prompts for existence and
consistency (a model is not cued about the hypothesis under test). The existence and consistency prompts are the
paper's words (appendix H quotes them). The paper's sync prompt (appendix G.2) is not printed in our copy; it is
described as "a single structured prompt [...] which simultaneously asks the model to make an aligned/misaligned
decision and estimate the offset" (Table 3: "Is the sound synchronized?"), which the sync question below does. No
system message is used at inference (appendix G gives one only for the GPT extractor).
"""

from __future__ import annotations

from dataclasses import dataclass

DIMENSIONS = ("sync", "existence", "consistency")
OOD_SYNC_CATEGORY = "ood-sync"  # the category of `build interventions --ood-sync` items: independent clips
INTERVENTION_DIMENSION = {"shift": "sync", "mute": "existence", "swap": "consistency"}
QUESTIONS = {
    "sync": "Watch the video and listen to its audio. Is the sound of the main event synchronized with what you see? "
            "Answer 'synchronized' or 'not synchronized'; if not, say whether the audio is early or delayed and by "
            "about how many seconds.",
    "existence": "Describe the audio you hear in this video.",
    "consistency": "Describe what you see in the video and what you hear in the audio.",
}


@dataclass(frozen=True)
class Event:
    """The annotated event tuple z = (visual event, visual time, audio event, audio time); unknown parts are None."""

    visual_event: str | None = None
    visual_time: float | None = None
    audio_event: str | None = None
    audio_time: float | None = None

    @property
    def seen(self) -> str:
        return self.visual_event or "the visible event happens"

    @property
    def heard(self) -> str:
        return self.audio_event or "the sound of the event"


def _at(t: float | None) -> str:
    return f" at {t:.1f} s" if t is not None else ""


def sync_answer(event: Event, offset_s: float) -> str:
    """The audio-verified answer to the sync question for audio displaced by ``offset_s`` (0: synchronized)."""
    if abs(offset_s) < 1e-9:
        return (f"The audio is synchronized with the video: {event.heard} is heard{_at(event.audio_time)}, right when "
                f"{event.seen}{_at(event.visual_time)}.")
    way = "delayed" if offset_s > 0 else "early"
    heard_at = None if event.audio_time is None else event.audio_time + offset_s
    when = "after" if offset_s > 0 else "before"
    return (f"The audio is not synchronized: it is {way} by about {abs(offset_s):.1f} s. {event.seen.capitalize()}"
            f"{_at(event.visual_time)}, but {event.heard} is heard{_at(heard_at)}, {when} the visible event.")


def existence_answer(event: Event, sound_present: bool) -> str:
    if sound_present:
        return f"I hear {event.heard}{_at(event.audio_time)}, matching what happens in the video."
    return (f"The video is silent: there is no audible sound at all, even though {event.seen} and would normally "
            f"make a sound.")


def consistency_answer(event: Event, heard: str | None, match: bool) -> str:
    """Describe sight and sound; ``heard`` is what the audio really contains (the partner's event after a swap)."""
    if match:
        return f"I see that {event.seen}, and I hear {event.heard}, which matches what I see."
    sound = heard or "a sound from a different scene"
    return (f"I see that {event.seen}, but the audio contains {sound}, which does not match the visible event: the "
            f"sound comes from a different source.")


def target(intervention: str, dimension: str, offset_s: float = 0.0) -> dict:
    """Structured target fields of one diagnostic row (None where a field does not apply to the dimension)."""
    fields = {"target_synced": None, "target_direction": None, "target_offset_s": None,
              "target_sound_present": None, "target_match": None}
    if dimension == "sync":
        fields["target_synced"] = intervention != "shift"
        fields["target_direction"] = "none" if intervention != "shift" else ("delay" if offset_s > 0 else "early")
        fields["target_offset_s"] = float(offset_s) if intervention == "shift" else 0.0
    elif dimension == "existence":
        fields["target_sound_present"] = intervention != "mute"
    else:
        fields["target_match"] = intervention != "swap"
    return fields


def correct_answer(event: Event, intervention: str, dimension: str, offset_s: float = 0.0,
                   partner_heard: str | None = None) -> str:
    if dimension == "sync":
        return sync_answer(event, offset_s if intervention == "shift" else 0.0)
    if dimension == "existence":
        return existence_answer(event, intervention != "mute")
    return consistency_answer(event, partner_heard, intervention != "swap")


def shortcut_answer(event: Event, intervention: str, offset_s: float = 0.0, wrong_direction: bool = False) -> str:
    """What a model answering from the pictures says about an intervened clip (the rejected response).

    Shift: the synchronized claim, or with ``wrong_direction`` the right offset in the wrong direction.
    """
    if intervention == "shift":
        return sync_answer(event, -offset_s) if wrong_direction else sync_answer(event, 0.0)
    if intervention == "mute":
        return existence_answer(event, True)
    if intervention == "swap":
        return consistency_answer(event, None, True)
    raise ValueError(f"no shortcut answer for intervention {intervention!r}")
