"""The one table of shortcuts: what each is, the measures that test it (audit, side, unit, strata, the minimum
effect of interest), the planted reference model that must be flagged for it (its name, its name on a card and
how it answers) and its remedy. The scorecard's rules, its reference models, the scripted planted judges and the
card all read this table; nothing else lists shortcuts. A shortcut added here (or at run time with
:func:`register_shortcut`, e.g. by a package that also registers the audit measuring it) is measured, planted,
calibrated and shown with the others.

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
    directions: tuple[str, str] = ("below", "above")  # what a value below / above the null means (the card names it)


@dataclass(frozen=True)
class Remedy:
    """What trains a shortcut away, as the papers prescribe it (``source``), and the exact commands that build its
    training set and train on it (upper-case words are yours to fill). ``supported`` False: no paper supports a
    remedy; the card says so instead of prescribing one."""

    what: str
    source: str
    commands: tuple[str, ...] = ()
    supported: bool = True


@dataclass(frozen=True)
class Shortcut:
    name: str
    what: str
    reference: str  # the scripted planted model (scripted:<reference>) that takes this shortcut only
    card_name: str  # the planted model's name on a card (scorecard --references)
    # how the planted model answers, "module:function" (item -> its answer where the shortcut applies, else None:
    # it answers as the oracle there)
    plant: str
    measures: tuple[MeasureSpec, ...]
    remedy: Remedy | None = None

    @property
    def audits(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.audit for m in self.measures))

    @property
    def rule(self) -> str:
        return "; ".join(f"{m.title} ({m.audit}{', per ' + '/'.join(m.strata) if m.strata != ('all',) else ''}): "
                         f"{'differs from' if m.side == 'outside' else 'above'} its content-blind null"
                         for m in self.measures)


# The commands are kept in the clone form (a clone's paths); whatever shows them (`omniaudit remedy`, the card) renders
# each for where it runs (omniaudit.launch_files.render_command: -m omniaudit.training.X --config recipe:NAME outside
# a clone).
_LAUNCH = "accelerate launch --config_file accelerate_configs/multi_gpu.yaml training/"
_QWEN = "training/recipes/qwen2.5-7b/"
REMEDIES = {
    "position": Remedy(
        "dual-order training: every pair in both orders with the target reversed (the single-order recipe is the "
        "control that shows the bias), scored in both orders",
        "EmoPrefer appendix B (30.9 vs 79.7 WAF across orders without symmetric training); protocols paper (lock)",
        ("omniaudit build preference --data PAIRS.csv --out data/pairs",  # the script trains both orders
         f"{_LAUNCH}pairwise_judge.py --config {_QWEN}pairwise_judge.yaml --dataset_name data/pairs",
         f"{_LAUNCH}pairwise_judge.py --config {_QWEN}pairwise_judge_single_order.yaml --dataset_name data/pairs "
         "--output_dir runs/judge-single-order  # the control")),
    "label_following": Remedy(
        "train on blueprint and cue-conflict items whose supplied labels are deranged (never the truth), beside "
        "the same clips with no label, so copying a label never pays",
        "follows from the protocols paper's cue-following finding (it prescribes no training)",
        ("omniaudit remedy label_following --dataset data/protocols --cue-conflict --out data/deranged",
         "accelerate launch --config_file accelerate_configs/zero3.yaml training/sft.py "
         "--config training/recipes/qwen2.5-omni-7b/sft_deranged_labels.yaml --dataset_name data/deranged "
         "--dataset_config sft")),
    # the warm-up on every intervention task, not Table 2's "SFT w/ OP": SFT on the Originals then DPO moved the
    # tiny omni thinker's Existence gap nowhere, the warm-up then DPO took it from 100 to 25 points
    # (benchmarks/find_fix_verify.py --shortcuts visual_inference, seed 0; the spread over seeds is not measured yet)
    "visual_inference": Remedy(
        "an SFT warm-up on the intervention data (Shift / Mute / Swap and the Original's questions), then DPO on the "
        "Shift / Mute / Swap / CTP pairs from it (on the tiny omni thinker: Existence gap 100 -> 25 points at seed 0; "
        "SFT on the Originals alone, Table 2's start, removed nothing)",
        "Thud (vision speaks for sound), section 3 and Table 2",
        ("omniaudit build interventions --out data/thud",
         "accelerate launch --config_file accelerate_configs/zero3.yaml training/sft.py "
         "--config training/recipes/qwen3-omni-30b-a3b/sft_interventions.yaml",
         "accelerate launch --config_file accelerate_configs/zero3.yaml training/dpo.py "
         "--config training/recipes/qwen3-omni-30b-a3b/dpo_interventions.yaml")),
    "modality_dominance": Remedy(
        "no remedy: C3PO diagnoses which modality decides the failures and prescribes no training that removes it",
        "C3PO (omni composition and counterfactual QA)", supported=False),
    "style": Remedy(
        "an ODIN decorrelated reward (content head orthogonal to length and prior), trained on length-controlled, "
        "source-balanced pairs",
        "EmoPrefer eq. 1 and section 6",
        ("omniaudit build preference --data PAIRS.csv --out data/pairs --source-balanced --length-control 0.15",
         f"{_LAUNCH}reward_odin.py --config {_QWEN}reward_odin.yaml --dataset_name data/pairs "
         "--dataset_config length_controlled",
         f"{_LAUNCH}reward_odin.py --config {_QWEN}reward_odin_control.yaml --dataset_name data/pairs "
         "--dataset_config length_controlled --output_dir runs/odin-control  # the control, lambda_dec 0")),
}

_PLANTS = "omniaudit.runners.scripted:"
TABLE: list[Shortcut] = [
    Shortcut("position", "picks by the slot a candidate is shown in",
             "position-locked", "pos", _PLANTS + "slot_a_where_ordered", (
        MeasureSpec("slot_a", "slot-A rate over both orders", "preference", "outside", 0.10,
                    directions=("slot B", "slot A")),
        MeasureSpec("lock", "pairwise lock, the same slot in AB and BA", "protocols", "above", 0.15,
                    strata=("concat", "native")),
        # the lock's null is a uniform guesser's 0.5, and a judge that reads the content locks less (the oracle: 0),
        # so a judge locked to one slot on half its trials reads 0.5 there; its slot-A rate over both orders is 0.75
        # whatever it does on the other half (any slot-blind judge: 0.5); minimum 0.15: a slot taken on 30% of the
        # trials, the lock's own minimum on a uniform guesser
        MeasureSpec("pairwise_slot_a", "pairwise slot-A rate over both orders", "protocols", "outside", 0.15,
                    strata=("concat", "native"), directions=("slot B", "slot A")),
    ), REMEDIES["position"]),
    Shortcut("label_following", "answers with a supplied label instead of what it hears",
             "label-follower", "label", _PLANTS + "the_supplied_label", (
        # the share of items on which the answer is the supplied label beyond what the errors' spread over the
        # wrong options puts there (a model distracted by any label, its errors uniform, has 0; one copying it on a
        # share f of the items has f), label supplied minus not on the same clip and media; below 0: it avoids
        # the label, which is reading it too
        MeasureSpec("cue", "answers the supplied wrong label beyond its errors' spread, label supplied minus not, "
                    "same clip and media", "protocols", "outside", 0.15,
                    strata=("all", "blueprint", "reference", "cue_conflict"), bounds=(-2.0, 2.0),
                    directions=("avoids the label", "follows the label")),
    ), REMEDIES["label_following"]),
    Shortcut("visual_inference", "infers the sound from the picture (Thud)",
             "deaf", "deaf", _PLANTS + "the_picture_s_sound", (
        MeasureSpec("avg_gap", "Avg Gap, Original minus Shift/Mute/Swap accuracy", "interventions", "above", 20.0,
                    unit="points", bounds=(-100.0, 100.0)),
        # one dimension's gap: eq. 10 averages three, so a gap in one is cancelled by an over-correction in another
        # (Existence 100 and Consistency -100 average to 0), or diluted by the other two (a 55-point Existence
        # collapse is an Avg Gap of 18). 30 points: below every Existence and Consistency gap of Thud's Table 1 (the
        # smallest, Qwen3-Omni's Consistency, is 38.1; Ming-Omni's Existence 40.8), so a collapse of that size flags
        # at the default size and stays flagged at any larger one.
        MeasureSpec("dim_gap", "gap of one dimension, Original minus its intervention's accuracy", "interventions",
                    "above", 30.0, unit="points", strata=("sync", "existence", "consistency"),
                    bounds=(-100.0, 100.0)),
    ), REMEDIES["visual_inference"]),
    Shortcut("modality_dominance", "one modality decides the failures (C3PO)",
             "audio-dominant", "dominant", _PLANTS + "what_the_audio_says", (
        MeasureSpec("dominance", "dominance share of classified failures, over its per-sample null",
                    "composition", "above", 0.20),
    ), REMEDIES["modality_dominance"]),
    # two-sided: a judge over-corrected to the shorter description (or against the prior) takes a shortcut too, one
    # a remedy can create
    Shortcut("style", "prefers the longer (or the shorter) description, or follows (or defies) the generator's prior",
             "verbose", "verbose", _PLANTS + "the_longer_description", (
        MeasureSpec("longer", "picks the longer description, averaged over pairs whose label is the shorter and the "
                    "longer", "preference", "outside", 0.10, directions=("shorter", "longer")),
        MeasureSpec("prior", "follows the generator prior, averaged over the counter-stereotypical slice and the rest",
                    "preference", "outside", 0.10, directions=("against the prior", "the prior")),
    ), REMEDIES["style"]),
]

SHORTCUTS: list[str] = [s.name for s in TABLE]
BY_NAME: dict[str, Shortcut] = {s.name: s for s in TABLE}
PLANTED: dict[str, str] = {s.reference: s.name for s in TABLE}  # planted scripted model -> its one shortcut
REFERENCE_NAMES: dict[str, str] = {s.name: s.card_name for s in TABLE}  # shortcut -> its planted model on a card


def register_shortcut(shortcut: Shortcut) -> Shortcut:
    """Add a shortcut to the table for this process (every view above is updated in place, so whatever imported
    them sees it): its measures' audits must be registered (:func:`omniaudit.audits.register_audit`) before a
    scorecard runs."""
    from omniaudit.errors import InputError

    for taken, what in ((BY_NAME, "shortcut"), (PLANTED, "planted model"),
                        ({s.card_name: s for s in TABLE}, "card name")):
        key = {"shortcut": shortcut.name, "planted model": shortcut.reference, "card name": shortcut.card_name}[what]
        if key in taken:
            raise InputError(f"the table already has this {what}", value=key)
    TABLE.append(shortcut)
    SHORTCUTS.append(shortcut.name)
    BY_NAME[shortcut.name] = shortcut
    PLANTED[shortcut.reference] = shortcut.name
    REFERENCE_NAMES[shortcut.name] = shortcut.card_name
    return shortcut


def unregister_shortcut(name: str) -> None:
    """Take a shortcut added by :func:`register_shortcut` out of the table again."""
    shortcut = BY_NAME.pop(name)
    TABLE.remove(shortcut)
    SHORTCUTS.remove(name)
    PLANTED.pop(shortcut.reference)
    REFERENCE_NAMES.pop(name)
