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

    ``before``, ``after`` and ``system`` carry the same sentence and differ only in where it is; the system message
    holds that sentence alone (no persona), so a placement effect is not a persona effect. ``rubric`` is the paper's
    rubric "hint" framing.
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
