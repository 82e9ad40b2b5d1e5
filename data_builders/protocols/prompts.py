"""Prompt texts of the three judge protocols and the cue-conflict grid (lalm-judge-protocol-shortcuts §III).

Every item is a system message (or None), zero to three audio inputs and one user text; ``options`` lists the
answers a judge may give. The texts are deliberately plain so that the only thing that changes between matched
conditions is the channel under test.
"""

from __future__ import annotations

QUESTIONS = {
    "emotion": "which emotion does the speaker express",
    "language": "which language is spoken",
    "speaker": "which speaker is talking",
    "gender": "what is the speaker's gender",
    "accent": "what is the speaker's accent",
    "age": "what is the speaker's age group",
    "naturalness": "how natural does the speech sound",
}
PLACEMENTS = ("before", "after", "system", "rubric")
PAIRWISE_QUESTIONS = {
    "cleanness": "Which clip has cleaner audio, with less background noise?",
    "identical": "Which clip has cleaner audio, with less background noise?",
    "naturalness": "Which clip sounds more natural?",
    "speaker": "Which candidate, A or B, is spoken by the same person as the reference?",
}


def article(word: str) -> str:
    """The indefinite article before ``word`` ("an emotion classifier", "a language classifier")."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def specialist_says(attribute: str, label: str) -> str:
    """The specialist sentence of the blueprint block and the cue-conflict grid."""
    return f'{article(attribute)} {attribute} classifier predicts "{label}".'


def answer_instruction(options: list[str]) -> str:
    return f"Answer with exactly one of: {', '.join(options)}."


def question(attribute: str, options: list[str], listening: bool) -> str:
    q = QUESTIONS.get(attribute, f"what is the speaker's {attribute}")
    lead = "Listen to the audio clip." if listening else "Based on the description of an audio clip above,"
    text = f"{lead} {q[0].upper() + q[1:]}?" if listening else f"{lead} {q}?"
    return f"{text} {answer_instruction(options)}"


def blueprint(transcript: str, speaker: str, duration: float, descriptors: str | None, attribute: str,
              specialist: str | None, framed: bool = True) -> str:
    """A TRACE-style text blueprint; ``specialist`` adds the block, ``framed=False`` drops "a classifier says"."""
    lines = ["Audio blueprint:", f'- Transcript: "{transcript}"' if transcript else "- Transcript: (none)",
             f"- Metadata: duration {duration:.1f} s" + (f"; speaker id {speaker}" if speaker else "") + "."]
    if descriptors:
        lines.append(f"- Acoustic descriptors: {descriptors}")
    if specialist is not None:
        lines.append(f"- Specialist: {specialist_says(attribute, specialist)}" if framed
                     else f"- {attribute.capitalize()}: {specialist}.")
    return "\n".join(lines)


def reference_line(reference: str) -> str:
    return f"Reference label: {reference}."


def with_reference(q: str, reference: str, placement: str) -> tuple[str | None, str]:
    """(system, user text) with the verbal reference label at one of four placements.

    ``before``, ``after`` and ``system`` carry the same sentence and differ only in where it is; the item's system
    text holds that sentence alone (no persona), so a placement effect is not a persona effect. A chat template's
    own default system prompt is held constant by the runner, not dropped: the hf runner sends it in every placement
    and appends the ``system`` placement's sentence to it (:func:`omniaudit.runners.hf.join_system`), so
    ``system`` does not also remove the persona the other placements keep. ``rubric`` is the paper's rubric "hint"
    framing.
    """
    if placement == "before":
        return None, f"{reference_line(reference)}\n{q}"
    if placement == "after":
        return None, f"{q}\n{reference_line(reference)}"
    if placement == "system":
        return reference_line(reference), q
    if placement == "rubric":
        return None, f"{q}\nRubric hint: a correct answer for this clip is {reference}."
    raise ValueError(f"unknown placement {placement!r}; expected one of {PLACEMENTS}")


def pairwise_text(task: str, control_label: str | None, fmt: str, triplet: bool) -> str:
    if task == "attribute":
        q = f"In which clip does the speaker sound more {control_label}?"
    else:
        q = PAIRWISE_QUESTIONS[task]
    if fmt == "concat":
        layout = ("You will hear one recording: the reference voice, a short beep, clip A, a short beep, then clip B."
                  if triplet else "You will hear one recording: clip A, a short beep, then clip B.")
    else:
        layout = ("The first audio is the reference voice, the second is clip A and the third is clip B."
                  if triplet else "The first audio is clip A and the second audio is clip B.")
    return f"{layout} {q} Answer with A or B only."


# What Qwen2-Audio's shipped chat template adds when the messages hold no system message: the example the card shows.
TEMPLATE_DEFAULT_SYSTEM = "You are a helpful assistant."


def chatml(system: str | None, n_audio: int, text: str) -> str:
    """An item as a Qwen2-Audio-style ChatML template renders it (audio as its placeholder tokens)."""
    audio = "".join(f"Audio {i}: <|audio_bos|><|AUDIO|><|audio_eos|>\n" for i in range(1, n_audio + 1))
    head = f"<|im_start|>system\n{system}<|im_end|>\n" if system else ""
    return f"{head}<|im_start|>user\n{audio}{text}<|im_end|>\n<|im_start|>assistant\n"


def placement_prompts(rows: list[dict], default_system: str | None = TEMPLATE_DEFAULT_SYSTEM) -> dict[str, str]:
    """Placement -> the prompt one clip's wrong-reference item is sent as, by the hf runner to a chat template whose
    default system prompt is ``default_system`` (the default kept in every placement, the ``system`` placement's
    sentence appended to it): the same four items the ``reference`` config holds, for the card. ``rows``: the
    ``reference`` config's rows; {} without a wrong-reference row."""
    from omniaudit.runners.hf import join_system

    wrong = [r for r in rows if r.get("condition") == "wrong"]
    if not wrong:
        return {}
    first = (wrong[0]["attribute"], wrong[0]["clip_id"])
    out = {}
    for r in wrong:
        if (r["attribute"], r["clip_id"]) == first:
            system = join_system(default_system, r.get("system")) or default_system
            out[r["placement"]] = chatml(system, int(r.get("n_audio") or 0), r["prompt"])
    return {p: out[p] for p in PLACEMENTS if p in out}
