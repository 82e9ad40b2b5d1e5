"""Build the judge-protocol probe datasets: labelled clips -> features, specialist, wrong labels -> four configs.

Configs (one split, ``train``), all with the same columns so one runner serves them all:

- ``blueprint`` (RQ1): conditions audio, skeleton, descriptors, true, wrong, no_frame, wrong_audio;
- ``reference`` (RQ2): match and wrong references at the before / after / system / rubric placements;
- ``pairwise`` (RQ3): trials in AB and BA order, concat (clip, 0.6 s 880 Hz tone, clip) and native (separate audio
  inputs) formats; tasks cleanness, attribute (e.g. angry vs neutral), naturalness (MOS gap), speaker (triplets),
  identical (A = B, for the slot-A rate);
- ``cue_conflict`` (§III-E): none, conf_spec, conf_ref, conf_both, the audio held at its true label.

A row is a system text (or None), up to three audio inputs (``audio_1``..``audio_3``, 16 kHz mono FLAC) in order and a
user ``prompt``; ``options`` are the valid answers, ``gold`` the right one (None for identical trials), ``cue`` the
wrong label whose following is measured.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.hub import ParquetSink, configs_metadata, push_to_hub, shard_name
from omniaudit.data_builders.interventions.audio_edits import add_noise, concat_with_tone
from omniaudit.data_builders.protocols import prompts
from omniaudit.data_builders.protocols.clips import RATE, ClipStore, audio_cell, load_clips  # noqa: F401
from omniaudit.data_builders.protocols.corpora import CorpusOptions, write_corpus_manifest
from omniaudit.data_builders.protocols.features import (
    connected_groups,
    derangement,
    descriptor_phrases,
    egemaps,
    fitted_specialist,
    specialist_folds,
)
from omniaudit.data_builders.protocols.manifest import read_clip_manifest
from omniaudit.data_builders.protocols.specialists import (
    hf_attribute_specialist,
    parse_specialists,
    speaker_triplet_scores,
    specialist_for,
)
from omniaudit.data_builders.protocols.speech import SpeechSetSpec, synthesize_speech_set
from omniaudit.errors import InputError, located
from omniaudit.hub_cards import dataset_card
from omniaudit.io import atomic_dir, local_name, redact_paths, to_json

SPLIT = "train"
CONFIGS = ("blueprint", "reference", "pairwise", "cue_conflict")
PAIRWISE_ATTRIBUTES = ("naturalness", "speaker")  # compared, not classified
PAIRWISE_TASKS = ("cleanness", "identical", "attribute", "naturalness", "speaker")
BLUEPRINT_CONDITIONS = ("audio", "skeleton", "descriptors", "true", "wrong", "no_frame", "wrong_audio")
CUE_CONDITIONS = ("none", "conf_spec", "conf_ref", "conf_both")
BUILD_INFO = "build_info.json"


@dataclass(frozen=True)
class ProtocolBuildOptions:
    seed: int = 0
    max_trials: int = 30  # per pairwise task, unless the task's own count is set
    cleanness_trials: int | None = None  # the paper: 40 (RAVDESS)
    attribute_trials: int | None = None  # the paper: 30 angry vs neutral
    naturalness_trials: int | None = None  # the paper: 60 (BVCC)
    speaker_trials: int | None = None  # the paper: 100 triplets (VoxCeleb1)
    identical_trials: int | None = None  # default: max(2, max_trials // 3)
    noise_snr_db: float = 0.0  # the Cleanness control
    mos_gap: float = 1.0  # the Naturalness pairs
    control: tuple[str, str, str] = ("emotion", "angry", "neutral")  # attribute control: gold label vs foil
    conflict_placement: str = "before"  # where the reference goes in the cue-conflict grid
    # ``[ATTRIBUTE=]hf:MODEL`` (see specialists.py); none: the fitted eGeMAPS specialist (and no speaker scoring)
    specialists: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.conflict_placement not in prompts.PLACEMENTS:
            raise InputError(f"conflict placement must be one of {prompts.PLACEMENTS}", value=self.conflict_placement)
        object.__setattr__(self, "specialists", tuple(self.specialists))
        parse_specialists(self.specialists)  # fails early on a malformed spec
        for task in PAIRWISE_TASKS:
            n = self.trials(task)
            if n < 0:
                raise InputError(f"the {task} trial count must be >= 0", value=n)

    def trials(self, task: str) -> int:
        """The trial count of a pairwise task (cleanness, identical, attribute, naturalness, speaker)."""
        own = getattr(self, f"{task}_trials")
        if own is not None:
            return own
        return max(2, self.max_trials // 3) if task == "identical" else self.max_trials


def features() -> dict:
    from datasets import Audio, Features, List, Value

    s = Value("string")
    return Features({
        "id": s, "attribute": s, "task": s, "condition": s, "placement": s, "clip_id": s, "trial": s, "order": s,
        "format": s, "options": List(s), "k": Value("int32"), "gold": s, "cue": s, "cue_shown": Value("bool"),
        "reference": s, "specialist": s, "system": s, "prompt": s, "n_audio": Value("int32"),
        "audio_1": Audio(), "audio_2": Audio(), "audio_3": Audio()})


def _row(**fields) -> dict:
    """One item; columns left out are written as nulls (Parquet rows are built against the full schema)."""
    audios = fields.pop("audios", [])
    row = dict(fields)
    row["n_audio"] = len(audios)
    for i, cell in enumerate(audios, start=1):
        row[f"audio_{i}"] = cell
    row["k"] = len(row["options"])
    return row


def _specialist_groups(group: pd.DataFrame, hashes: dict[str, str] | None,
                       seed: int) -> tuple[np.ndarray, str]:
    """Fold groups of an attribute's clips: same speaker or identical audio; identical audio only when too few
    speakers per class leave fewer than two folds."""
    audio = (group["id"].map(hashes) if hashes else group["audio"]).to_numpy()
    speakers = group["speaker"].to_numpy()
    if (speakers != "").any():
        groups = connected_groups(speakers, audio)
        if specialist_folds(group["label"].to_numpy(), groups, seed)[1] >= 2:
            return groups, "speaker and identical audio"
        return connected_groups(audio), "identical audio (too few speakers per class to group by speaker)"
    return connected_groups(audio), "identical audio (no speaker column)"


def attribute_tables(manifest: pd.DataFrame, store: ClipStore, feats: dict[str, pd.DataFrame],
                     descriptors: dict[str, str], durations: dict[str, float],
                     options: ProtocolBuildOptions, hashes: dict[str, str] | None = None) -> tuple[dict, dict]:
    """Rows of blueprint / reference / cue_conflict for every categorical attribute, and per-attribute facts.

    ``feats[clip]`` are the clip's eGeMAPS functionals (the fitted specialist's input); ``hashes[clip]`` the content
    hash of its decoded audio (the fitted specialist's folds keep identical audio together; default: the path).
    """
    out = {"blueprint": [], "reference": [], "cue_conflict": []}
    facts = {}
    for attribute, group in manifest[~manifest["attribute"].isin(PAIRWISE_ATTRIBUTES)].groupby("attribute"):
        labels = sorted(set(group["label"]))
        wrong_of = derangement(labels, options.seed)
        spec, source = _specialist_labels(attribute, group, store, feats, hashes, options)
        facts[attribute] = {"labels": labels, "k": len(labels), "clips": len(group), "derangement": wrong_of,
                            "specialist_source": source,
                            "specialist_accuracy": float(np.mean(spec == group["label"].to_numpy())),
                            "class_counts": group["label"].value_counts().sort_index().to_dict()}
        for (_, r), specialist in zip(group.iterrows(), spec, strict=True):
            for config, rows in _clip_rows(r, attribute, labels, wrong_of[r["label"]], specialist, store, descriptors,
                                           durations, options).items():
                out[config] += rows
    return out, facts


def _specialist_labels(attribute: str, group: pd.DataFrame, store: ClipStore, feats: dict[str, pd.DataFrame],
                       hashes: dict[str, str] | None, options: ProtocolBuildOptions) -> tuple[np.ndarray, str]:
    """(the specialist's label per clip, where they come from): the manifest's column, else a fitted specialist
    (a Hugging Face classifier given with --specialist, else logistic regression on eGeMAPS), out of fold."""
    spec = group["specialist"].to_numpy()
    if not (spec == "").any():
        return spec, "manifest column"
    if (spec != "").any():
        raise InputError(f"attribute '{attribute}': the specialist column is filled for some rows only")
    groups, by = _specialist_groups(group, hashes, options.seed)
    model = specialist_for(parse_specialists(options.specialists), attribute)
    try:
        if model:
            spec, source = hf_attribute_specialist(model, [store.array(c) for c in group["id"]],
                                                   group["label"].to_numpy(), groups, options.seed, by)
        else:
            x = pd.DataFrame([feats[c] for c in group["id"]])
            spec, folds = fitted_specialist(x, group["label"].to_numpy(), options.seed, groups)
            source = (f"logistic regression on eGeMAPS, out-of-fold ({folds}-fold grouped by {by}, "
                      f"seed {options.seed})")
    except InputError as exc:
        exc.message = f"attribute '{attribute}': {exc.message}"
        raise
    return spec, source


def _clip_rows(r, attribute: str, labels: list[str], wrong: str, specialist: str, store: ClipStore,
               descriptors: dict[str, str], durations: dict[str, float], options: ProtocolBuildOptions
               ) -> dict[str, list[dict]]:
    """One clip's blueprint, reference and cue-conflict rows (``wrong``: the label its derangement supplies)."""
    out: dict[str, list[dict]] = {"blueprint": [], "reference": [], "cue_conflict": []}
    clip, gold = r["id"], r["label"]
    base = {"attribute": attribute, "clip_id": clip, "options": labels, "gold": gold}
    audio = [store.cell(clip)]
    listen, read = prompts.question(attribute, labels, True), prompts.question(attribute, labels, False)

    def bp(spec_label, framed=True, desc=True):
        return prompts.blueprint(r["transcript"], r["speaker"], durations[clip],
                                 descriptors[clip] if desc else None, attribute, spec_label, framed)

    variants = {
        "audio": (None, listen, audio, None),
        "skeleton": (bp(None, desc=False), read, [], None),
        "descriptors": (bp(None), read, [], None),
        "true": (bp(specialist), read, [], None),
        "wrong": (bp(wrong), read, [], wrong),
        "no_frame": (bp(wrong, framed=False), read, [], wrong),
        "wrong_audio": (bp(wrong), listen, audio, wrong),
    }
    for condition, (blue, q, audios, cue) in variants.items():
        text = f"{blue}\n\n{q}" if blue else q
        out["blueprint"].append(_row(id=f"blueprint/{attribute}/{clip}/{condition}", condition=condition,
                                     prompt=text, audios=audios, cue=cue or wrong, cue_shown=cue is not None,
                                     specialist=specialist if condition == "true" else cue, **base))
    for condition, reference in (("match", gold), ("wrong", wrong)):
        for placement in prompts.PLACEMENTS:
            system, text = prompts.with_reference(listen, reference, placement)
            out["reference"].append(_row(
                id=f"reference/{attribute}/{clip}/{condition}/{placement}", condition=condition,
                placement=placement, system=system, prompt=text, audios=audio, reference=reference,
                cue=wrong, cue_shown=condition == "wrong", **base))
    said = prompts.specialist_says(attribute, wrong)
    spec_block = said[0].upper() + said[1:]
    for condition in CUE_CONDITIONS:
        system, text = None, listen
        if condition in ("conf_ref", "conf_both"):
            system, text = prompts.with_reference(listen, wrong, options.conflict_placement)
        if condition in ("conf_spec", "conf_both"):
            text = f"{spec_block}\n{text}"
        out["cue_conflict"].append(_row(
            id=f"cue_conflict/{attribute}/{clip}/{condition}", condition=condition, system=system,
            prompt=text, audios=audio, cue=wrong, cue_shown=condition != "none",
            reference=wrong if condition in ("conf_ref", "conf_both") else None,
            specialist=wrong if condition in ("conf_spec", "conf_both") else None, **base))
    return out


def pairwise_trials(manifest: pd.DataFrame, options: ProtocolBuildOptions,
                    warnings: list[str] | None = None) -> list[dict]:
    """Trials as {task, clips (first, second[, reference]), gold index or None, label}; seeded, capped per task.

    A task that the manifest cannot supply (the attribute control without its two labels, naturalness rows without
    a MOS gap, speaker rows without a triplet) is left out with a message appended to ``warnings``.
    """
    warnings = [] if warnings is None else warnings
    rng = np.random.default_rng(options.seed)
    trials: list[dict] = []
    clips = sorted(set(manifest.loc[manifest["attribute"] != "naturalness", "id"]) or set(manifest["id"]))

    def pick(items: list, n: int) -> list:
        return [items[i] for i in sorted(rng.permutation(len(items))[:n])]

    for clip in pick(clips, options.trials("cleanness")):
        trials.append({"task": "cleanness", "first": clip, "second": f"{clip}#noisy", "gold": 0})
    for clip in pick(clips, options.trials("identical")):
        trials.append({"task": "identical", "first": clip, "second": clip, "gold": None})
    trials += _attribute_trials(manifest, options, pick, warnings)
    # Naturalness pairs and speaker triplets never share a clip, so trials are independent units for the bootstrap
    nat = manifest[manifest["attribute"] == "naturalness"].reset_index(drop=True)
    trials += _naturalness_trials(nat, options, rng)
    spk = manifest[manifest["attribute"] == "speaker"].reset_index(drop=True)
    trials += _speaker_trials(spk, options, rng)
    built = {t["task"] for t in trials}
    if len(nat) and "naturalness" not in built:
        warnings.append(f"the naturalness task was not built: no two naturalness clips differ by a MOS gap of at "
                        f"least {options.mos_gap} (--mos-gap)")
    if len(spk) and "speaker" not in built:
        warnings.append("the speaker task was not built: its triplets need two clips of one speaker and a clip of "
                        "another speaker")
    for k, t in enumerate(trials):  # balance which slot holds the gold clip before the AB/BA orders double it
        if t["gold"] is not None and k % 2:
            t["first"], t["second"], t["gold"] = t["second"], t["first"], 1 - t["gold"]
    return trials


def _attribute_trials(manifest: pd.DataFrame, options: ProtocolBuildOptions, pick, warnings: list[str]) -> list[dict]:
    """The attribute control: a gold-label clip against a foil-label clip of the same speaker and transcript."""
    trials: list[dict] = []
    attribute, gold_label, foil_label = options.control
    attribute = attribute.lower()
    rows = manifest[manifest["attribute"] == attribute]
    spelled = {label.casefold(): label for label in rows["label"]}  # labels are matched whatever their case
    gold_label, foil_label = (spelled.get(x.casefold(), x) for x in (gold_label, foil_label))
    control = f"the attribute control ({attribute}: {gold_label} vs {foil_label})"
    absent = [x for x in (gold_label, foil_label) if x not in spelled.values()]
    if absent:
        have = f"its {attribute} labels are {sorted(spelled.values())}" if len(rows) else f"no {attribute} rows"
        warnings.append(f"{control} was not built: the manifest has no {' or '.join(map(repr, absent))} clips "
                        f"({have}); choose labels it has with --control ATTRIBUTE GOLD FOIL")
    elif gold_label == foil_label:
        warnings.append(f"{control} was not built: the gold and foil labels are the same")
    else:
        pos, neg = rows[rows["label"] == gold_label], rows[rows["label"] == foil_label]
        pairs = [(a.id, b.id) for a in pos.itertuples() for b in neg.itertuples()
                 if a.speaker == b.speaker and a.transcript == b.transcript]
        if not pairs:
            warnings.append(f"{control}: no {gold_label}/{foil_label} clips share speaker and transcript; pairs "
                            f"are matched in manifest order instead")
            pairs = list(zip(pos["id"], neg["id"], strict=False))
        for a, b in pick(pairs, options.trials("attribute")):
            trials.append({"task": "attribute", "first": a, "second": b, "gold": 0, "label": gold_label})
    return trials


def _naturalness_trials(nat: pd.DataFrame, options: ProtocolBuildOptions, rng) -> list[dict]:
    """Pairs of naturalness clips whose MOS differ by at least the gap, no clip in two pairs; gold: the higher."""
    trials: list[dict] = []
    mos = nat["mos"].to_numpy(float)
    first, second = np.triu_indices(len(nat), 1)  # itertools.combinations order
    keep = np.abs(mos[first] - mos[second]) >= options.mos_gap
    pairs = list(zip(first[keep].tolist(), second[keep].tolist(), strict=True))
    used: set[int] = set()
    cap, made = options.trials("naturalness"), 0
    for i, j in (pairs[k] for k in rng.permutation(len(pairs))):
        if made >= cap:
            break
        if i in used or j in used:
            continue
        used |= {i, j}
        made += 1
        better = 0 if nat.at[i, "mos"] > nat.at[j, "mos"] else 1
        trials.append({"task": "naturalness", "first": nat.at[i, "id"], "second": nat.at[j, "id"], "gold": better})
    return trials


def _speaker_trials(spk: pd.DataFrame, options: ProtocolBuildOptions, rng) -> list[dict]:
    """Triplets: a reference clip, another of its speaker (another recording where the manifest names them) and a
    clip of another speaker, no clip in two triplets; gold: the same speaker."""
    trials: list[dict] = []
    recording = spk["recording"].to_numpy() if "recording" in spk.columns else np.full(len(spk), "")
    used: set[int] = set()
    cap, made = options.trials("speaker"), 0
    for ref in rng.permutation(len(spk)):
        if made >= cap:
            break
        if ref in used:
            continue
        # the same-speaker candidate comes from another recording where the manifest names recordings
        same = [k for k in spk.index[spk["label"] == spk.at[ref, "label"]] if k != ref and k not in used
                and (recording[ref] == "" or recording[k] != recording[ref])]
        other = [k for k in spk.index[spk["label"] != spk.at[ref, "label"]] if k not in used]
        if same and other:
            s, o = same[int(rng.integers(len(same)))], other[int(rng.integers(len(other)))]
            used |= {int(ref), s, o}
            made += 1
            trials.append({"task": "speaker", "reference": spk.at[ref, "id"], "first": spk.at[s, "id"],
                           "second": spk.at[o, "id"], "gold": 0})
    return trials


def pairwise_rows(trials: list[dict], store: ClipStore, options: ProtocolBuildOptions) -> list[dict]:
    rows = []
    counts: dict[str, int] = {}
    for t in trials:
        k = counts[t["task"]] = counts.get(t["task"], -1) + 1
        trial = f"{t['task']}/{k:03d}"
        for order in ("AB", "BA"):
            a, b = (t["first"], t["second"]) if order == "AB" else (t["second"], t["first"])
            gold = None if t["gold"] is None else "AB"[t["gold"] if order == "AB" else 1 - t["gold"]]
            ref = t.get("reference")
            clips = ([ref] if ref else []) + [a, b]  # in the order the prompt presents them
            text = prompts.pairwise_text(t["task"], t.get("label"), "concat", ref is not None)
            for fmt in ("concat", "native"):
                if fmt == "concat":
                    joined = store.array(clips[0])
                    for c in clips[1:]:
                        joined = concat_with_tone(joined[None], store.array(c)[None], RATE)[0]
                    audios = [audio_cell(joined, f"{trial.replace('/', '_')}_{order}")]
                else:
                    audios = [store.cell(c) for c in clips]
                    text = prompts.pairwise_text(t["task"], t.get("label"), fmt, ref is not None)
                rows.append(_row(id=f"pairwise/{trial}/{fmt}/{order}", task=t["task"], trial=f"{trial}/{fmt}",
                                 order=order, format=fmt, options=["A", "B"], gold=gold, clip_id="|".join(clips),
                                 prompt=text, attribute=t.get("label"), audios=audios))
    return rows


def _noisy_copies(store: ClipStore, trials: list[dict], options: ProtocolBuildOptions) -> None:
    for t in trials:
        for name in (t["first"], t["second"]):
            if name.endswith("#noisy") and name not in store.arrays:
                clean = store.array(name.removesuffix("#noisy"))
                seed = [options.seed, int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")]
                store.arrays[name] = add_noise(clean[None], options.noise_snr_db, np.random.default_rng(seed))[0]


def summarize(tables: dict[str, list[dict]], facts: dict, trials: list[dict]) -> dict:
    def count(rows, key):
        return pd.Series([r[key] for r in rows]).value_counts().sort_index().to_dict() if rows else {}
    return {"rows": {name: len(rows) for name, rows in tables.items()},
            "blueprint_conditions": count(tables["blueprint"], "condition"),
            "pairwise_tasks": pd.Series([t["task"] for t in trials]).value_counts().sort_index().to_dict()
            if trials else {},
            "attributes": facts}


def build_protocol_tables(manifest: pd.DataFrame, options: ProtocolBuildOptions,
                          progress: Callable[[str], None] | None = None) -> tuple[dict[str, list[dict]], dict]:
    say = progress or (lambda _msg: None)
    paths = dict(zip(manifest["id"], manifest["audio"], strict=False))
    clash = manifest[manifest["audio"] != manifest["id"].map(paths)]
    if len(clash):
        raise InputError("the same id names two different audio files", row=int(clash["row"].iloc[0]),
                         column="audio", value=clash["id"].iloc[0])
    clip_ids = sorted(paths)
    say(f"decoding {len(clip_ids)} clips")
    store, hashes = load_clips(manifest)
    say(f"eGeMAPS functionals of {len(clip_ids)} clips")
    feats, seconds = egemaps([store.arrays[c] for c in clip_ids])
    descriptors = dict(zip(clip_ids, descriptor_phrases(feats), strict=True))
    durations = dict(zip(clip_ids, seconds.tolist(), strict=True))
    per_clip = {c: feats.iloc[i] for i, c in enumerate(clip_ids)}
    say("blueprint, reference and cue-conflict items")
    tables, facts = attribute_tables(manifest, store, per_clip, descriptors, durations, options, hashes)
    say("pairwise trials")
    warnings: list[str] = []
    trials = pairwise_trials(manifest, options, warnings)
    _noisy_copies(store, trials, options)
    tables["pairwise"] = pairwise_rows(trials, store, options)
    summary = summarize(tables, facts, trials)
    speaker_model = dict(parse_specialists(options.specialists)).get("speaker")
    if speaker_model:
        say(f"speaker specialist {speaker_model}")
        summary["speaker_specialist"] = speaker_triplet_scores(
            speaker_model, [t for t in trials if t["task"] == "speaker"], store.array)
    summary["notes"] = list(manifest.attrs.get("notes", []))
    summary["warnings"] = warnings
    return {name: tables[name] for name in CONFIGS}, summary


def build_protocols_dataset(out_dir: str | Path, clips: str | Path | None = None,
                            options: ProtocolBuildOptions = ProtocolBuildOptions(),
                            spec: SpeechSetSpec | None = None, push_repo: str | None = None,
                            progress: Callable[[str], None] | None = None,
                            corpora: list[tuple[str, str | Path]] | None = None,
                            corpus_options: CorpusOptions | None = None) -> Path:
    """Build the four configs into ``out_dir`` (atomically); the clips come from the manifest ``clips``, from corpus
    folders ``corpora`` (``[(name, folder)]``, :mod:`~omniaudit.data_builders.protocols.corpora`), or, with
    neither, from the embedded espeak-ng speech set.

    ``out_dir/build_info.json`` holds the summary the card shows, with ``notes`` (labels read as one spelling) and
    ``warnings`` (pairwise tasks the manifest could not supply).
    """
    import tempfile

    out = Path(out_dir)
    with tempfile.TemporaryDirectory(prefix="omniaudit-speech-") as tmp:
        corpus_summary = None
        if clips is not None and corpora:
            raise InputError("give a clip manifest or corpus folders, not both")
        if corpora:
            spec, clips_path = None, Path(tmp) / "manifest.jsonl"
            (progress or (lambda _m: None))("reading corpus folders")
            corpus_summary = write_corpus_manifest(clips_path, list(corpora), corpus_options or CorpusOptions())
            source = ", ".join(corpus_summary)
        elif clips is None:
            spec = spec or SpeechSetSpec()
            (progress or (lambda _m: None))("synthesising speech with espeak-ng")
            clips_path, source = synthesize_speech_set(Path(tmp) / "speech", spec), "embedded espeak-ng speech set"
        else:
            spec, clips_path, source = None, Path(clips), local_name(clips)
        manifest = read_clip_manifest(clips_path)
        with located(clips_path):
            tables, summary = build_protocol_tables(manifest, options, progress)
        if corpus_summary is not None:
            summary["corpora"] = {"clips": corpus_summary, "options": asdict(corpus_options or CorpusOptions())}
        feats = features()
        with atomic_dir(out) as dest:
            for name in CONFIGS:
                (dest / name).mkdir()
                sink = ParquetSink(dest / name / shard_name(SPLIT), feats)
                sink.add(tables[name])
                sink.close()
            metadata = {"pretty_name": "omniaudit judge-protocol probes",
                        "tags": ["omniaudit", "audio", "llm-as-a-judge", "shortcut-audit"],
                        "task_categories": ["audio-classification"],
                        "configs": configs_metadata({name: [SPLIT] for name in CONFIGS}, default="blueprint")}
            card = dataset_card("protocols.md.j2", metadata, source=source, options=asdict(options),
                                summary=summary, spec=spec.as_dict() if spec else None,
                                placements=prompts.PLACEMENTS, conditions=BLUEPRINT_CONDITIONS,
                                placement_prompts=prompts.placement_prompts(tables["reference"]),
                                default_system=prompts.TEMPLATE_DEFAULT_SYSTEM)
            (dest / "README.md").write_text(card, encoding="utf-8")
            info = {"builder": "protocols", "source": source, "options": asdict(options),
                    "spec": spec.as_dict() if spec else None, "summary": summary}
            (dest / BUILD_INFO).write_text(to_json(redact_paths(info)), encoding="utf-8")  # no local paths
    if push_repo:
        push_to_hub(out, push_repo)
    return out
