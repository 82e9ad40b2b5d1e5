"""The label-following remedy's training set: blueprint items whose supplied label is deranged (never the truth),
beside the same clips with no label, as chat records ``training/sft.py`` trains on.

From a protocols dataset (``omniaudit build protocols``, config ``blueprint``), for every clip:

- its ``wrong_audio`` item (the blueprint with a specialist line ``... classifier predicts "LABEL".`` and the clip)
  once per *wrong* option: the quoted supplied label replaced by that option, so each clip carries all its k-1 wrong
  labels and none equals the gold; the answer is always the gold label;
- its ``audio`` item (the question and the clip, no label), so the task itself is still learned.

With ``cue_conflict=True`` the ``conf_spec`` items of the ``cue_conflict`` config (a specialist sentence with the
quoted label, then the question) are deranged the same way. ``conf_ref`` / ``conf_both`` are left out: their
reference sentence is not quoted and may sit in the system message.

An item is deranged only when its prompt quotes the supplied label exactly once (``"angry"``) and quotes no other
option: an item whose prompt fails that (e.g. a transcript that quotes a label) is skipped, clip by clip, and counted
in the summary and on the card.

Caveat: a model trained only on deranged labels could learn to *avoid* the supplied label (anti-following: here
"anything but the label" is always right). The no-label items keep the answer tied to the audio, and the scorecard's
cue measure (answer = the wrong label, label supplied minus not: its value is on the card, and a value well below 0
is anti-following) and the accuracy on the protocols dataset's ``reference`` items with the *matching* label (which
should not drop below the no-label accuracy) reveal it. Audit on clips this set was not built from: it holds the
blueprint items of its clips, the audit's own wrong-label items among them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.data_builders.hub import (
    ParquetSink,
    check_dataset_folder,
    configs_metadata,
    load_config,
    push_to_hub,
    shard_name,
)
from omniaudit.errors import InputError
from omniaudit.hub_cards import dataset_card
from omniaudit.io import atomic_dir, local_name, redact_paths, to_json

CONFIG = "sft"
SPLIT = "train"
SHORTCUT = "label_following"
SOURCE_CONFIG = "blueprint"
LABEL_CONDITION = "wrong_audio"  # the blueprint item with the supplied label and the clip
PLAIN_CONDITION = "audio"  # the same clip's question without a label
CUE_CONDITIONS = ("conf_spec",)  # cue_conflict items whose supplied label is quoted in the user text
BUILD_INFO = "build_info.json"
COLUMNS = ["id", "attribute", "clip_id", "condition", "options", "gold", "cue", "prompt", "audio_1"]


def features():
    from datasets import Audio, Features, List, Value

    s = Value("string")
    message = List({"role": s, "content": List({"type": s, "text": s})})
    return Features({"id": s, "source_id": s, "clip_id": s, "attribute": s, "condition": s, "supplied": s,
                     "gold": s, "options": List(s), "messages": message, "audio": Audio()})


def quoted(label: str) -> str:
    return f'"{label}"'


def derange_prompt(prompt: str, cue: str, options: list[str]) -> str | None:
    """Why ``prompt`` cannot be deranged (None when it can): it must quote the supplied label ``cue`` exactly once
    and no other option at all, so replacing that one quoted label changes the supplied label and nothing else."""
    if prompt.count(quoted(cue)) != 1:
        return f"the prompt quotes the supplied label {quoted(cue)} {prompt.count(quoted(cue))} times, not once"
    others = [o for o in options if o != cue and quoted(o) in prompt]
    if others:
        return f"the prompt also quotes {', '.join(map(quoted, others))}"
    return None


def _messages(prompt: str, answer: str) -> list[dict]:
    return [{"role": "user", "content": [{"type": "audio", "text": None}, {"type": "text", "text": prompt}]},
            {"role": "assistant", "content": [{"type": "text", "text": answer}]}]


def _record(item: pd.Series, condition: str, prompt: str, supplied: str | None, options: list[str]) -> dict:
    cell = item["audio_1"]
    tail = f"label/{supplied}" if supplied is not None else "no_label"
    return {"id": f"deranged/{item['attribute']}/{item['clip_id']}/{condition}/{tail}", "source_id": item["id"],
            "clip_id": item["clip_id"], "attribute": item["attribute"], "condition": condition, "supplied": supplied,
            "gold": item["gold"], "options": options, "messages": _messages(prompt, item["gold"]),
            "audio": {"bytes": cell["bytes"], "path": cell.get("path")}}


def _label_records(item: pd.Series, options: list[str]) -> list[dict]:
    """One record per wrong option: the quoted supplied label replaced by it (the caller checked the prompt)."""
    cue, gold = item["cue"], item["gold"]
    return [_record(item, item["condition"], item["prompt"].replace(quoted(cue), quoted(w)), w, options)
            for w in options if w != gold]


def _skip_reason(item: pd.Series | None, options: list[str], gold: str, what: str) -> str | None:
    if item is None:
        return f"no {what} item"
    cell = item["audio_1"]
    if not isinstance(cell, dict) or not cell.get("bytes"):
        return f"the {what} item has no embedded audio"
    if item.get("cue") is None or item["cue"] == gold or item["cue"] not in options:
        return f"the {what} item's supplied label {item.get('cue')!r} is not a wrong option"
    return derange_prompt(str(item["prompt"]), item["cue"], options)


def deranged_rows(blueprint: pd.DataFrame, cue_conflict: pd.DataFrame | None = None,
                  seed: int = 0) -> tuple[list[dict], dict]:
    """The records (in a seeded order) and the summary: counts, and the clips skipped with why.

    ``blueprint`` / ``cue_conflict``: the protocols configs' rows (:data:`COLUMNS`). ``seed`` only orders the rows.
    """
    missing = [c for c in COLUMNS if c not in blueprint.columns]
    if missing:
        raise InputError(f"the blueprint config lacks column(s) {missing}")
    by_item = {(r.attribute, r.clip_id, r.condition): row for (_, row), r in
               zip(blueprint.iterrows(), blueprint.itertuples(), strict=True)}
    conflicts = {}
    if cue_conflict is not None:
        conflicts = {(r.attribute, r.clip_id, r.condition): row for (_, row), r in
                     zip(cue_conflict.iterrows(), cue_conflict.itertuples(), strict=True)
                     if r.condition in CUE_CONDITIONS}
    clips = sorted({(a, c) for a, c, _ in by_item})
    rows: list[dict] = []
    skipped: list[dict] = []
    kept_conflicts, skipped_conflicts = 0, []
    per_attribute: dict[str, dict] = {}
    for attribute, clip in clips:
        plain, label = (by_item.get((attribute, clip, c)) for c in (PLAIN_CONDITION, LABEL_CONDITION))
        first = label if label is not None else plain
        options = [str(o) for o in first["options"]]
        gold = first["gold"]
        if gold is None or gold not in options:
            skipped.append({"attribute": attribute, "clip_id": clip, "why": f"gold {gold!r} is not an option"})
            continue
        why = (_skip_reason(label, options, gold, LABEL_CONDITION)
               or (f"no {PLAIN_CONDITION} item" if plain is None else None)
               or (None if isinstance(plain["audio_1"], dict) and plain["audio_1"].get("bytes")
                   else f"the {PLAIN_CONDITION} item has no embedded audio"))
        if why:
            skipped.append({"attribute": attribute, "clip_id": clip, "why": why})
            continue
        rows += _label_records(label, options)
        rows.append(_record(plain, PLAIN_CONDITION, str(plain["prompt"]), None, options))
        facts = per_attribute.setdefault(attribute, {"clips": 0, "k": len(options), "label_rows": 0,
                                                     "no_label_rows": 0, "cue_conflict_rows": 0})
        facts["clips"] += 1
        facts["label_rows"] += len(options) - 1
        facts["no_label_rows"] += 1
        for condition in CUE_CONDITIONS:
            item = conflicts.get((attribute, clip, condition))
            if item is None:
                continue
            why = _skip_reason(item, options, gold, condition)
            if why:
                skipped_conflicts.append({"attribute": attribute, "clip_id": clip, "why": why})
                continue
            rows += _label_records(item, options)
            facts["cue_conflict_rows"] += len(options) - 1
            kept_conflicts += 1
    check_deranged(rows)
    order = np.random.default_rng(seed).permutation(len(rows))
    rows = [rows[i] for i in order]
    summary = {"rows": len(rows), "clips": sum(f["clips"] for f in per_attribute.values()),
               "label_rows": sum(1 for r in rows if r["supplied"] is not None),
               "no_label_rows": sum(1 for r in rows if r["supplied"] is None),
               "cue_conflict_items": kept_conflicts, "attributes": per_attribute,
               "skipped": skipped, "skipped_cue_conflict": skipped_conflicts, "seed": seed,
               "with_cue_conflict": cue_conflict is not None}
    return rows, summary


def check_deranged(rows: list[dict]) -> None:
    """The set's invariants (AssertionError naming the first row that breaks one): no supplied label is the gold;
    every clip with label rows has each of its k-1 wrong labels exactly once per source item, and a no-label row."""
    for r in rows:
        if r["supplied"] is not None and r["supplied"] == r["gold"]:
            raise AssertionError(f"row {r['id']}: the supplied label is the gold label {r['gold']!r}")
    by_item: dict[str, list[str]] = {}
    plain: set[tuple[str, str]] = set()
    for r in rows:
        if r["supplied"] is None:
            plain.add((r["attribute"], r["clip_id"]))
        else:
            by_item.setdefault(r["source_id"], []).append(r["supplied"])
    for r in rows:
        if r["supplied"] is None:
            continue
        wrong = sorted(o for o in r["options"] if o != r["gold"])
        if sorted(by_item[r["source_id"]]) != wrong:
            raise AssertionError(f"item {r['source_id']}: supplied labels {sorted(by_item[r['source_id']])}, "
                                 f"expected each wrong option once: {wrong}")
        if (r["attribute"], r["clip_id"]) not in plain:
            raise AssertionError(f"clip {r['clip_id']} ({r['attribute']}) has label rows but no no-label row")


def _read(dataset: str | Path, cue_conflict: bool) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    folder = Path(dataset)
    if folder.exists() or str(dataset).startswith((".", "/", "~")) or str(dataset).count("/") != 1:
        configs = check_dataset_folder(folder)
        if SOURCE_CONFIG not in configs:
            raise InputError(f"no '{SOURCE_CONFIG}' config (it has {', '.join(sorted(configs))}): not a protocols "
                             f"dataset; build one with `omniaudit build protocols --out DIR`", file=folder)
        if cue_conflict and "cue_conflict" not in configs:
            raise InputError("no 'cue_conflict' config to take conf_spec items from (drop --cue-conflict)",
                             file=folder)
    blueprint = load_config(dataset, SOURCE_CONFIG, columns=COLUMNS)
    conflicts = load_config(dataset, "cue_conflict", columns=COLUMNS) if cue_conflict else None
    return blueprint, conflicts


def _train_command(clone: str) -> str:
    """The card's training command: from a clone and, in the shell form, from a pip install."""
    from omniaudit.launch_files import render_command

    if not clone:
        return clone
    return f"# from a clone of omniaudit\n{clone}\n# from a pip install\n{render_command(clone, 'shell')}"


def build_deranged_dataset(out_dir: str | Path, dataset: str | Path, seed: int = 0, cue_conflict: bool = False,
                           push_repo: str | None = None,
                           progress: Callable[[str], None] | None = None) -> Path:
    """Write the ``sft`` config of deranged-label and no-label chat records of ``dataset`` (a protocols dataset
    folder or Hub repo) into ``out_dir``, atomically, with its card and ``build_info.json`` (the summary).

    The same input and ``seed`` give byte-identical files; the seed only orders the rows. See the module docstring
    for the caveat (anti-following) the card states.
    """
    from omniaudit.shortcuts import BY_NAME

    say = progress or (lambda _m: None)
    say(f"reading the {SOURCE_CONFIG} config")
    blueprint, conflicts = _read(dataset, cue_conflict)
    say("deranging the supplied labels")
    rows, summary = deranged_rows(blueprint, conflicts, seed)
    if not rows:
        why = summary["skipped"][0]["why"] if summary["skipped"] else "it has no clips"
        raise InputError(f"no clip could be deranged ({len(summary['skipped'])} skipped; the first: {why})",
                         file=dataset)
    source = local_name(dataset) if Path(dataset).exists() else str(dataset)
    remedy = BY_NAME[SHORTCUT].remedy
    train = next((c for c in remedy.commands if "training/" in c), "") if remedy else ""
    out = Path(out_dir)
    with atomic_dir(out) as dest:
        (dest / CONFIG).mkdir()
        sink = ParquetSink(dest / CONFIG / shard_name(SPLIT), features())
        sink.add(rows)
        sink.close()
        metadata = {"pretty_name": "omniaudit label-following remedy (deranged labels)",
                    "tags": ["omniaudit", "audio", "llm-as-a-judge", "shortcut-remedy"],
                    "task_categories": ["audio-classification"],
                    "configs": configs_metadata({CONFIG: [SPLIT]})}
        card = dataset_card("remedy_label_following.md.j2", metadata, source=source, summary=summary,
                            config=CONFIG,
                            train_command=_train_command(train.replace("data/deranged", "PATH_OR_REPO")),
                            cue_conditions=CUE_CONDITIONS)
        (dest / "README.md").write_text(card, encoding="utf-8")
        info = {"builder": "remedy label_following", "source": source, "seed": seed, "cue_conflict": cue_conflict,
                "summary": summary}
        (dest / BUILD_INFO).write_text(to_json(redact_paths(info)), encoding="utf-8")
    if push_repo:
        push_to_hub(out, push_repo)
    return out
