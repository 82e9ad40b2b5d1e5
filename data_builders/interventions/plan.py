"""Plan an intervention build: validated options, each clip's variants, its audio fingerprint and its Swap partner.

Planning covers the whole manifest (every shard plans every clip: Swap partners come from the whole corpus). It decodes
every clip's audio once, so a corrupt, missing or silent track fails naming its manifest row, and keeps a small mono
fingerprint of it, so that a Swap partner whose audio is the clip's own (the same file listed twice, the same
recording under another category) is refused, as Thud appendix B discards swaps "too similar to the original audio".
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.signal import resample_poly

from omniaudit.data_builders.interventions import answers, audio_edits, media
from omniaudit.data_builders.interventions.manifest import EPS_AUDIO, EPS_VISUAL, Manifest
from omniaudit.errors import InputError

DEFAULT_SHIFTS = (-2.0, 2.0)  # the paper's +-2 s offsets
# A Swap partner is refused when the track it would give has a maximum normalised cross-correlation (any lag, mono,
# FINGERPRINT_RATE) of at least this with the clip's own track. For a cut copy of the clip's own recording the score is
# the square root of the energy they share, so 0.5 refuses partners still carrying a quarter of the clip's own sound.
# The same recording scores >= 0.99 (re-encoded, resampled or down-mixed included), and so does the same sound at
# another time, which would make the Swap a Shift; unrelated recordings score near the noise floor sqrt(2 ln(2n) / n)
# (about 0.03 for 10 s at 4 kHz). Measured on the synthetic corpus: other classes <= 0.17, same class >= 0.97.
SWAP_MAX_SIMILARITY = 0.5
FINGERPRINT_RATE = 4000  # Hz: keeps the band (< 2 kHz) where most of an event's energy lies, at 8 KB per second
FINGERPRINT_MAX_S = 30.0  # only the first 30 s are compared: enough to recognise the same recording
# Peak below -80 dBFS on the video's timeline: the track is silence, so Mute would equal the Original.
SILENT_PEAK = 10 ** (-80 / 20)
MEDIA_VERSION = 2  # bump when the rendered media change for the same options (2: channel layouts kept)


@dataclass(frozen=True)
class InterventionBuildOptions:
    shifts: tuple[float, ...] = DEFAULT_SHIFTS  # fixed offsets, every clip (may be empty when shift_ranges is not)
    # (A, B) ranges: each adds one Shift per clip with Δ drawn uniformly from [A, B] (seed + clip id, 0.01 s grid)
    shift_ranges: tuple[tuple[float, float], ...] = ()
    seed: int = 0
    audio_codec: str = "aac"
    num_proc: int = 1
    shard_index: int = 0
    shard_count: int = 1
    eps_visual: float = EPS_VISUAL
    eps_audio: float = EPS_AUDIO
    skip_invalid: bool = False  # record unusable clips (no audio, corrupt, too short) instead of failing
    swap_max_similarity: float = SWAP_MAX_SIMILARITY  # refuse Swap partners at least this similar to the clip's audio
    media_mode: str = "embed"  # embed: clip bytes in every config; paths: one copy under media/ (media_store)

    def __post_init__(self) -> None:
        ranges = validate_shift_ranges(self.shift_ranges)
        shifts = () if ranges and not tuple(self.shifts) else validate_shifts(self.shifts)
        object.__setattr__(self, "shift_ranges", ranges)
        object.__setattr__(self, "shifts", shifts)
        fixed = {f"{s:+.2f}" for s in shifts}
        for a, b in ranges:
            if not set(_grid_names(a, b)) - fixed:
                raise InputError(f"shift range [{a:g}, {b:g}] s holds no non-zero offset at 0.01 s resolution that is "
                                 "not already a fixed --shift (each drawn offset names its clip)", value=(a, b))
        if self.audio_codec not in media.AUDIO_CODECS:
            raise InputError(f"audio codec must be one of {media.AUDIO_CODECS}", value=self.audio_codec)
        if not 0 <= self.shard_index < self.shard_count:
            raise InputError("shard must be I/N with 0 <= I < N", value=f"{self.shard_index}/{self.shard_count}")
        if self.num_proc < 1:
            raise InputError("num_proc must be >= 1", value=self.num_proc)
        if self.media_mode not in ("embed", "paths"):
            raise InputError("media mode must be embed or paths", value=self.media_mode)
        if not 0 < self.swap_max_similarity <= 1:
            raise InputError("swap_max_similarity must lie in (0, 1]", value=self.swap_max_similarity)

    def media_key(self) -> str:
        """What the rendered clips depend on; the work folder is keyed by it so stale clips are never reused."""
        key = [self.shifts, self.seed, self.audio_codec, MEDIA_VERSION] + ([self.shift_ranges] if self.shift_ranges
                                                                           else [])
        return hashlib.sha1(json.dumps(key).encode()).hexdigest()[:12]

    @property
    def max_abs_shift(self) -> float:
        """The largest |Δ| any Shift of this build can have (fixed or drawn)."""
        return max([abs(s) for s in self.shifts] + [max(abs(a), abs(b)) for a, b in self.shift_ranges], default=0.0)


def validate_shifts(shifts) -> tuple[float, ...]:
    """The Shift offsets as floats, or an InputError naming the offending values.

    Each offset must be a finite, non-zero number of seconds that stays non-zero at the 0.01 s of the variant names
    (``shift+2.00``), and no two offsets may share a name: a repeated offset would render the same clip twice under
    one id.
    """
    try:
        values = tuple(float(s) for s in shifts)
    except (TypeError, ValueError) as exc:
        raise InputError("shifts must be numbers of seconds", value=shifts) from exc
    if not values:
        raise InputError("give at least one shift offset in seconds", value=shifts)
    bad = [s for s in values if not np.isfinite(s)]
    if bad:
        raise InputError(f"shifts must be finite numbers of seconds; not finite: {', '.join(map(str, bad))}",
                         value=values)
    zero = [s for s in values if f"{abs(s):.2f}" == "0.00"]
    if zero:
        raise InputError("shifts must be non-zero offsets in seconds at 0.01 s resolution (a zero shift is the "
                         f"Original); zero: {', '.join(f'{s:g}' for s in zero)}", value=values)
    names: dict[str, list[float]] = {}
    for s in values:
        names.setdefault(f"{s:+.2f}", []).append(s)
    clashes = {name: group for name, group in names.items() if len(group) > 1}
    if clashes:
        listed = "; ".join(f"{', '.join(f'{s:g}' for s in group)} -> {name} s" for name, group in clashes.items())
        raise InputError(f"shifts must be distinct at 0.01 s resolution (they name the clips): {listed}", value=values)
    return values


def validate_shift_ranges(ranges) -> tuple[tuple[float, float], ...]:
    """``--shift-range A B`` values as ``((A, B), ...)`` floats, or an InputError naming the offending range.

    Each range needs finite A < B (seconds, + = audio delayed). A range may span zero (Thud's Δ ∈ [-Δmax, Δmax]);
    a draw that rounds to 0.00 s is drawn again. Use two ranges (``-2 -0.5`` and ``0.5 2``) to keep Δ perceptible.
    """
    out = []
    for r in ranges or ():
        try:
            a, b = (float(v) for v in r)
        except (TypeError, ValueError) as exc:
            raise InputError("a shift range must be two numbers of seconds A B", value=r) from exc
        if not (np.isfinite(a) and np.isfinite(b)):
            raise InputError("a shift range must be two finite numbers of seconds", value=(a, b))
        if not a < b:
            raise InputError(f"a shift range needs A < B (got [{a:g}, {b:g}]; a fixed offset is --shift)",
                             value=(a, b))
        out.append((a, b))
    return tuple(out)


def _grid_names(a: float, b: float) -> list[str]:
    """The non-zero 0.01 s offsets (as variant names, ``+1.23``) a draw from [a, b] can round to."""
    lo, hi = round(a * 100), round(b * 100)
    return [f"{k / 100:+.2f}" for k in range(lo, hi + 1) if k]


MAX_DRAWS = 1000  # per range and clip: a draw that rounds to zero or to a name already used is drawn again


def draw_shifts(clip_id: str, options: InterventionBuildOptions) -> list[tuple[float, tuple[float, float]]]:
    """One offset per ``options.shift_ranges`` range for this clip: (Δ rounded to 0.01 s, its range).

    Δ ~ Uniform[A, B] from a generator seeded by the build's seed and the clip id only (so a clip draws the same
    offsets in every shard, process and manifest order), rounded to 0.01 s (the variant name, ``shift+1.23``), and
    drawn again while it rounds to zero or repeats a fixed offset or an earlier range's draw for this clip.
    """
    if not options.shift_ranges:
        return []
    digest = hashlib.sha1(clip_id.encode()).hexdigest()
    rng = np.random.default_rng([options.seed, int(digest[:8], 16), int(digest[8:16], 16), 0x5348])  # "SH" stream
    used = {f"{s:+.2f}" for s in options.shifts}
    out = []
    for a, b in options.shift_ranges:
        for _ in range(MAX_DRAWS):
            offset = round(float(rng.uniform(a, b)), 2)
            if f"{offset:+.2f}" not in used and f"{abs(offset):.2f}" != "0.00":
                break
        else:
            raise InputError(f"clip '{clip_id}': no distinct offset found in shift range [{a:g}, {b:g}] s after "
                             f"{MAX_DRAWS} draws; widen it or use fewer overlapping ranges", value=(a, b))
        used.add(f"{offset:+.2f}")
        out.append((offset, (a, b)))
    return out


def range_name(r: tuple[float, float]) -> str:
    """How a shift range is named in counts and on the card: ``drawn in [-2.00, +2.00]``."""
    return f"drawn in [{r[0]:+.2f}, {r[1]:+.2f}]"


@dataclass(frozen=True)
class Variant:
    intervention: str  # original | shift | mute | swap
    offset_s: float = 0.0
    partner_id: str | None = None

    @property
    def name(self) -> str:
        return f"shift{self.offset_s:+.2f}" if self.intervention == "shift" else self.intervention

    @property
    def dimensions(self) -> tuple[str, ...]:
        if self.intervention == "original":
            return answers.DIMENSIONS
        return (answers.INTERVENTION_DIMENSION[self.intervention],)


@dataclass
class ClipPlan:
    id: str
    video: str
    info: media.ClipInfo
    event: answers.Event
    category: str
    variants: list[Variant]
    partner: media.ClipInfo | None = None
    partner_id: str | None = None
    partner_heard: str | None = None
    skipped_shifts: list[float] = field(default_factory=list)
    skipped_ranges: list[tuple[float, float]] = field(default_factory=list)  # a drawn offset moved the sound out
    row: int | None = None  # manifest row, for errors
    manifest: str | None = None
    layout: str | None = None  # channel layout of the written audio (output_layout)
    layout_note: str | None = None  # why it differs from the source's; None: kept
    fingerprint: AudioPrint | None = None
    partner_note: str | None = None  # the partner's layout conversion for Swap; None: same layout
    refused_partners: list[dict] = field(default_factory=list)  # {"partner_id", "similarity"} refused as too similar


@dataclass(frozen=True)
class AudioPrint:
    """A clip's audio on its video timeline, mono at FINGERPRINT_RATE, first FINGERPRINT_MAX_S only (float16)."""

    samples: np.ndarray  # peak-normalised
    n: int  # timeline length in samples (uncapped)
    recorded: int  # samples before the silence padded onto a short track

    def swap_track(self, m: int) -> np.ndarray:
        """The first ``m`` (<= the cap) samples of the Swap track this clip gives another: its recorded audio looped
        or cut, as ``_swap_audio`` does (exact for any partner length, since ``m`` never exceeds the cap)."""
        recorded = self.samples[None, : min(self.recorded, self.samples.size)].astype(np.float32)
        return audio_edits.fit_length(recorded, m, loop=True)[0]


def audio_print(info: media.ClipInfo) -> tuple[AudioPrint, float]:
    """Decode the clip's whole audio (corrupt tracks fail here) and return its fingerprint and its peak amplitude."""
    audio, pad_s = media.timeline_audio(info, None, 1)
    rate = int(info.audio_rate or FINGERPRINT_RATE)
    x = audio[0, : audio_edits.n_samples(FINGERPRINT_MAX_S, rate)]
    g = np.gcd(FINGERPRINT_RATE, rate)
    fp = resample_poly(x.astype(np.float64), FINGERPRINT_RATE // g, rate // g) if x.size else np.zeros(0)
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    scale = float(np.max(np.abs(fp))) if fp.size else 0.0
    n = audio_edits.n_samples(info.duration, FINGERPRINT_RATE)
    recorded = max(0, n - audio_edits.n_samples(pad_s, FINGERPRINT_RATE))
    return AudioPrint((fp / scale if scale else fp).astype(np.float16), n, recorded), peak


def in_shard(clip_id: str, index: int, count: int) -> bool:
    """Deterministic, balanced split by id (independent of manifest order and of the machine)."""
    return int(hashlib.sha1(clip_id.encode()).hexdigest(), 16) % count == index


def _event(row: pd.Series) -> answers.Event:
    def time(v: float) -> float | None:
        return None if pd.isna(v) else float(v)
    return answers.Event(row["visual_event"] or None, time(row["visual_time"]), row["audio_event"] or None,
                         time(row["audio_time"]))


def _probe_clip(row: pd.Series, manifest: Path | None) -> tuple[media.ClipInfo, AudioPrint]:
    """Stream facts of a manifest row's video and its audio fingerprint; the whole audio is decoded, so a corrupt,
    missing or silent track fails here, naming the manifest row and the file."""
    try:
        info = media.probe(row["video"])
        if not info.has_audio:
            raise InputError("the video has no audio stream; Shift/Mute/Swap need one")
        fingerprint, peak = audio_print(info)
        if peak < SILENT_PEAK:
            raise InputError("the audio track is silent over the video (peak below -80 dBFS): Mute would not change "
                             "it and the Original's answers would be wrong")
    except InputError as exc:
        raise InputError(f"clip '{row['id']}' ({row['video']}): {exc.message}", file=manifest, row=int(row["row"]),
                         column="video") from exc
    for col in ("visual_time", "audio_time"):
        if not pd.isna(row[col]) and row[col] > info.duration:
            raise InputError(f"{col} {row[col]:g} s is past the end of clip '{row['id']}' ({info.duration:.2f} s)",
                             file=manifest, row=int(row["row"]), column=col)
    return info, fingerprint


def plan_clips(manifest: Manifest, options: InterventionBuildOptions) -> tuple[list[ClipPlan], list[dict]]:
    """Variants for every usable clip of the manifest (all shards: swap partners come from the whole corpus)."""
    rejected: list[dict] = []
    plans: list[ClipPlan] = []
    for _, row in manifest.clips.iterrows():
        try:
            info, fingerprint = _probe_clip(row, manifest.path)
        except InputError as exc:
            if not options.skip_invalid:
                raise
            rejected.append({"id": row["id"], "row": int(row["row"]), "reason": f"unusable media: {exc.message}"})
            continue
        event = _event(row)
        variants, skipped, skipped_ranges = [Variant("original")], [], []
        for a, b in options.shift_ranges:
            if max(abs(a), abs(b)) >= info.duration:
                raise InputError(f"shift range [{a:g}, {b:g}] s reaches offsets not shorter than clip '{row['id']}' "
                                 f"({info.duration:.2f} s)", file=manifest.path, row=int(row["row"]))
        drawn = [(offset, None) for offset in options.shifts] + draw_shifts(row["id"], options)
        for offset, source in drawn:
            if abs(offset) >= info.duration:
                raise InputError(f"shift {offset:+g} s is not shorter than clip '{row['id']}' ({info.duration:.2f} s)",
                                 file=manifest.path, row=int(row["row"]))
            lands = None if event.audio_time is None else event.audio_time + offset
            if lands is not None and not 0 <= lands < info.duration:
                # the sound would leave the clip: the answer would no longer be unambiguous
                if source is None:
                    skipped.append(offset)
                else:
                    skipped_ranges.append(source)
                continue
            variants.append(Variant("shift", float(offset)))
        variants.append(Variant("mute"))
        layout, note = media.output_layout(info, options.audio_codec)
        plans.append(ClipPlan(row["id"], row["video"], info, event, row["category"], variants, skipped_shifts=skipped,
                              skipped_ranges=skipped_ranges, row=int(row["row"]),
                              manifest=str(manifest.path) if manifest.path else None, layout=layout,
                              layout_note=note, fingerprint=fingerprint))
    _assign_partners(plans, options.seed, options.swap_max_similarity)
    return plans, rejected


def _assign_partners(plans: list[ClipPlan], seed: int, max_similarity: float = SWAP_MAX_SIMILARITY) -> None:
    """Seeded swap partner per clip, from another category when categories are known (else any other clip).

    A drawn partner whose Swap track would be at least ``max_similarity`` similar to the clip's own audio
    (:func:`audio_edits.similarity` of the fingerprints) is refused (kept in ``refused_partners``) and another is drawn
    from the remaining candidates; a clip whose candidates are all refused gets no Swap.
    """
    if len(plans) < 2:
        raise InputError(f"Swap needs at least two usable clips; the manifest has {len(plans)}")
    rng = np.random.default_rng(seed)
    categories = np.array([p.category for p in plans])
    use_categories = bool(all(categories)) and len(set(categories)) > 1
    for i, plan in enumerate(plans):
        candidates = np.flatnonzero(categories != plan.category) if use_categories else np.delete(
            np.arange(len(plans)), i)
        partner = None
        while candidates.size:
            j = int(rng.choice(candidates))  # one draw when nothing is refused: the same partners as before
            score = _swap_similarity(plan, plans[j])
            if score < max_similarity:
                partner = plans[j]
                break
            plan.refused_partners.append({"partner_id": plans[j].id, "similarity": round(score, 3)})
            candidates = candidates[candidates != j]
        if partner is None:
            continue
        plan.partner, plan.partner_id, plan.partner_heard = partner.info, partner.id, partner.event.audio_event
        if partner.info.audio_layout != plan.layout:
            plan.partner_note = f"{partner.info.audio_layout} -> {plan.layout}"
        plan.variants.append(Variant("swap", partner_id=partner.id))


def _swap_similarity(plan: ClipPlan, partner: ClipPlan) -> float:
    """Similarity of ``plan``'s own audio and the Swap track ``partner`` would give it (both fingerprints)."""
    if plan.fingerprint is None or partner.fingerprint is None:
        return 0.0
    own = plan.fingerprint.samples.astype(np.float32)
    return audio_edits.similarity(own, partner.fingerprint.swap_track(own.size))


def media_summary(plans: list[ClipPlan], max_similarity: float) -> dict:
    """Channel layouts in and out and the Swap partner checks, over every planned clip (the same in every shard)."""
    def count(values) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in values:
            if v is not None:
                out[str(v)] = out.get(str(v), 0) + 1
        return dict(sorted(out.items()))
    return {"audio_layouts": count(p.layout for p in plans),
            "layout_changes": count(p.layout_note for p in plans),
            "swap_partner_layout_changes": count(p.partner_note for p in plans),
            "swap": {"max_similarity": max_similarity,
                     "refused_partners": sum(len(p.refused_partners) for p in plans),
                     "clips_without_partner": sum(p.partner_id is None for p in plans),
                     "without_partner_examples": [p.id for p in plans if p.partner_id is None][:20],
                     "refused_examples": [{"id": p.id, **r} for p in plans for r in p.refused_partners][:20]}}
