"""The one table of shortcuts: what each is, the measures that test it (audit, side, unit, strata, the minimum
effect of interest), and the planted reference model that must be flagged for it. The scorecard's rules, its
reference models, the scripted planted judges and the card all read this table; nothing else lists shortcuts.

Each measure's *minimum effect of interest* (``delta``, in the measure's unit, away from its null) is the smallest
effect the embedded defaults are sized to detect with 80% power under the family-wise control, and the margin of the
equivalence test behind "clear" (:mod:`omniaudit.evaluation.scorecard.inference`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MeasureSpec:
    """One measure of a shortcut. ``strata``: what it is tested within, each inside the family-wise control."""

    key: str
    title: str
    audit: str
    side: str  # above: the shortcut raises it; outside: it moves it either way
    delta: float
    unit: str = "rate"
    strata: tuple[str, ...] = ("all",)
    bounds: tuple[float, float] = (0.0, 1.0)  # the values the measure can take (a shown CI is clipped to them)


@dataclass(frozen=True)
class Shortcut:
    name: str
    what: str
    reference: str  # the scripted planted model (scripted:<reference>) that takes this shortcut only
    measures: tuple[MeasureSpec, ...]

    @property
    def audits(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.audit for m in self.measures))

    @property
    def rule(self) -> str:
        return "; ".join(f"{m.title} ({m.audit}{', per ' + '/'.join(m.strata) if m.strata != ('all',) else ''}): "
                         f"{'differs from' if m.side == 'outside' else 'above'} its content-blind null"
                         for m in self.measures)


TABLE: tuple[Shortcut, ...] = (
    Shortcut("position", "picks by the slot a candidate is shown in", "position-locked", (
        MeasureSpec("slot_a", "slot-A rate over both orders", "preference", "outside", 0.10),
        MeasureSpec("lock", "pairwise lock, the same slot in AB and BA", "protocols", "above", 0.15,
                    strata=("concat", "native")),
    )),
    Shortcut("label_following", "answers with a supplied label instead of what it hears", "label-follower", (
        MeasureSpec("cue", "answer = the wrong label, label supplied minus not, same clip and media", "protocols",
                    "above", 0.10, strata=("all", "blueprint", "reference", "cue_conflict"), bounds=(-1.0, 1.0)),
    )),
    Shortcut("visual_inference", "infers the sound from the picture (Thud)", "deaf", (
        MeasureSpec("avg_gap", "Avg Gap, Original minus Shift/Mute/Swap accuracy", "interventions", "above", 20.0,
                    unit="points", bounds=(-100.0, 100.0)),
    )),
    Shortcut("modality_dominance", "one modality decides the failures (C3PO)", "audio-dominant", (
        MeasureSpec("dominance", "dominance share of classified failures, over its per-sample null",
                    "composition", "above", 0.20),
    )),
    Shortcut("style", "prefers the longer description or the generator's prior", "verbose", (
        MeasureSpec("longer", "picks the longer description when the label is the shorter", "preference", "above",
                    0.10),
        MeasureSpec("prior", "follows the generator prior on the counter-stereotypical slice", "preference", "above",
                    0.10),
    )),
)

SHORTCUTS: tuple[str, ...] = tuple(s.name for s in TABLE)
BY_NAME: dict[str, Shortcut] = {s.name: s for s in TABLE}
PLANTED: dict[str, str] = {s.reference: s.name for s in TABLE}  # planted scripted model -> its one shortcut
REFERENCE_NAMES: dict[str, str] = {"position": "pos", "label_following": "label", "visual_inference": "deaf",
                                   "style": "verbose", "modality_dominance": "dominant"}  # their names on a card
