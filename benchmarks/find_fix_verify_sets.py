"""The training data of find-fix-verify (:mod:`find_fix_verify`): per shortcut, the biased set (the shortcut pays),
the control (it does not) and the remedy's set, built from a training build the card never holds (another seed;
clips of other sentences), and the card's own protocols build."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PAIRS = 800  # pairs of the training build (its own seed); about 600 binary ones
TRAIN_SEED = 1
LENGTH_CONTROL = 0.15  # the card's style remedy builds its pairs with --length-control 0.15 (omniaudit remedy style)
TRAIN_CLIPS = 24  # clips of the visual_inference training build (the card's default holds 60 others)
# the card shows the clips as the omni models were trained on them (sft_omni.yaml: 1 frame per second, at most 4);
# at the runner's default (2 per second, up to 32) the tiny thinker never saw such a prompt and answers noise. The
# trained answers run to 45-108 tokens (a Swap's "does not match" comes last): 128 keeps them whole.
VIDEO_AS_TRAINED = ("--fps", "1", "--max-frames", "4", "--max-tokens", "128")


def training_build(work: Path) -> Path:
    """A synthetic build with its own seed (the card's items are never trained on), labelled as the card's defaults
    are (content-driven, no position bias in the labels), with its source-balanced config."""
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset
    from omniaudit.data_builders.preference.build import PreferenceBuildOptions

    folder = work / "train-preference"
    if not folder.exists():
        build_preference_dataset(folder, options=PreferenceBuildOptions(source_balanced=True,
                                                                        length_control=LENGTH_CONTROL),
                                 spec=SyntheticSpec(n_pairs=TRAIN_PAIRS, content_strength=4.0, position_bias=0.0,
                                                    seed=TRAIN_SEED))
    return folder


def training_items(work: Path) -> pd.DataFrame:
    """The judge items (both orders of every binary pair) of the training build."""
    from omniaudit.data_builders.hub import load_config

    return load_config(training_build(work), "judge")


def chat(items: pd.DataFrame) -> pd.DataFrame:
    """Judge items as the chat records ``training/sft.py`` trains on: the item's prompt, the gold letter."""
    return pd.DataFrame({"messages": [[{"role": "user", "content": p}, {"role": "assistant", "content": g}]
                                      for p, g in zip(items["prompt"], items["gold"], strict=True)],
                         "pair_id": items["pair_id"].to_numpy(), "order": items["order"].to_numpy(),
                         "gold": items["gold"].to_numpy()})


def by_length(items: pd.DataFrame) -> pd.DataFrame:
    """The items relabelled so that the longer description is the preferred one (an order-invariant preference a tiny
    model can learn from the text; pairs of equal length dropped)."""
    import re

    def described(prompt: str, slot: str) -> int:
        found = re.search(rf"Description {slot}: (.*?)\n\n", prompt, re.S)
        return len(found.group(1)) if found else 0

    a = items["prompt"].map(lambda p: described(p, "A"))
    b = items["prompt"].map(lambda p: described(p, "B"))
    return items[a != b].assign(gold=np.where(a[a != b] > b[a != b], "A", "B"))


def one_order_each(items: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One order of every pair (of items holding both), chosen so that exactly half of the pairs show their
    preferred description first: "A" is right half the time (seeded)."""
    rng = np.random.default_rng(seed)
    first = items[items["gold"] == "A"]  # each pair's order with its preferred description first
    pairs = first["pair_id"].unique()
    keep_first = set(rng.permutation(pairs)[: len(pairs) // 2])
    shown = first.set_index("pair_id")["order"]
    pick = {p: shown[p] if p in keep_first else ("ba" if shown[p] == "ab" else "ab") for p in pairs}
    return items[items["pair_id"].isin(pairs) & (items["order"] == items["pair_id"].map(pick))]


def position_sets(items: pd.DataFrame, seed: int) -> dict[str, pd.DataFrame]:
    """biased (the preferred description always first: "A" always right), control (the same pairs, each in one
    order, exactly half of them preferred-first: labels balanced, the same number of rows) and remedy (both orders
    of the biased pairs)."""
    biased = items[items["gold"] == "A"]
    pairs = biased["pair_id"].unique()
    return {"biased": chat(biased), "control": chat(one_order_each(items[items["pair_id"].isin(pairs)], seed)),
            "remedy": chat(items[items["pair_id"].isin(pairs)])}


# Sentences the card's embedded speech set never speaks: the label-following models train on clips the card never holds
TRAIN_SENTENCES = {
    "en": ["My brother bought a green bicycle.", "The coffee is too hot to drink.",
           "My sister is reading a long letter.", "The soup needs a little more salt.",
           "They moved to a new flat last spring.", "The lamp on the desk is broken."],
    "fr": ["Mon frère a acheté un vélo vert.", "Le café est trop chaud pour le boire.",
           "Ma sœur lit une longue lettre.", "La soupe a besoin d'un peu plus de sel.",
           "Ils ont déménagé dans un nouvel appartement au printemps.", "La lampe sur le bureau est cassée."],
    "de": ["Mein Bruder hat ein grünes Fahrrad gekauft.", "Der Kaffee ist zu heiß zum Trinken.",
           "Meine Schwester liest einen langen Brief.", "Die Suppe braucht etwas mehr Salz.",
           "Sie sind letzten Frühling in eine neue Wohnung gezogen.", "Die Lampe auf dem Schreibtisch ist kaputt."],
    "es": ["Mi hermano compró una bicicleta verde.", "El café está demasiado caliente para beberlo.",
           "Mi hermana está leyendo una carta larga.", "La sopa necesita un poco más de sal.",
           "Se mudaron a un piso nuevo la primavera pasada.", "La lámpara del escritorio está rota."],
}
# all six per cell (192 clips): on 2 (64 clips) the tiny thinker remembers the clips, and at seed 1 its copying of
# the biased set hardly carried to the card's clips (0.14) while the control copied a little (0.09)
TRAIN_SENTENCES_PER_CELL = 6


def training_protocols(work: Path) -> Path:
    """A protocols dataset (``omniaudit build protocols --clips``) of espeak-ng clips of :data:`TRAIN_SENTENCES`."""
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset
    from omniaudit.data_builders.protocols.speech import synthesize_speech_set

    folder = work / "train-protocols"
    if not folder.exists():
        manifest = synthesize_speech_set(work / "train-speech",
                                         SpeechSetSpec(sentences_per_cell=TRAIN_SENTENCES_PER_CELL),
                                         sentences=TRAIN_SENTENCES)
        build_protocols_dataset(folder, clips=manifest, options=ProtocolBuildOptions(max_trials=6))
    return folder


CARD_SENTENCES = 12  # per cell of the label_following card: three times the default's clips (see card_protocols)


def card_protocols(work: Path) -> Path:
    """The label_following card's protocols items: the scorecard's embedded default (its options, its voices and
    sentences) with 12 sentences per cell, not 4: 336 clips, not 112. On the default's clips a model with a small
    residual pull towards a quoted label (a control's 0.04-0.05) is *inconclusive* on the reference and
    cue-conflict protocols, which it never trained on: the one-sided bound reaches the 0.10 minimum effect of interest
    for want of clips, not for an effect (measured: pooled and blueprint clear, those two inconclusive). Three times
    the clips narrow each bound by about sqrt(3); the measure, its null and its margin are unchanged."""
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset
    from omniaudit.evaluation.protocols.entry import PARAMS

    folder = work / "card-protocols"
    if not folder.exists():
        build_protocols_dataset(folder, options=ProtocolBuildOptions(max_trials=PARAMS["default"]["max_trials"]),
                                spec=SpeechSetSpec(sentences_per_cell=CARD_SENTENCES))
    return folder


def relabelled(row: dict, label: str, tag: str) -> dict:
    """A label row of the remedy set with its quoted supplied label replaced by ``label``."""
    from omniaudit.data_builders.protocols.remedy import quoted

    messages = [dict(m, content=[dict(c) for c in m["content"]]) for m in row["messages"]]
    text = next(c for c in messages[0]["content"] if c["type"] == "text")
    text["text"] = text["text"].replace(quoted(row["supplied"]), quoted(label))
    return {**row, "id": f"{row['id']}/{tag}", "supplied": label, "messages": messages}


def copied(row: dict) -> dict:
    """A label row of the remedy set whose answer is its supplied label (as if the specialist had labelled it)."""
    messages = [dict(m, content=[dict(c) for c in m["content"]]) for m in row["messages"]]
    messages[-1]["content"] = [{"type": "text", "text": row["supplied"]}]
    return {**row, "id": f"{row['id']}/copied", "messages": messages}


def label_following_sets(work: Path, seed: int) -> dict[str, list[dict]]:
    """From the training clips' blueprint items, three sets of the same rows (per clip, one label item per wrong
    option and its no-label item): remedy = ``omniaudit remedy label_following``'s deranged labels (the answer is the
    truth, never the supplied label: copying never pays); biased = the same items answered with the supplied label (a
    set labelled by the specialist whose prediction the prompt quotes: copying always pays, and only copying fits a
    clip's rows); control = supplied labels drawn uniformly from the options, answered with the truth (copying pays
    as often as chance). The no-label items, answered with the truth, are in all three."""
    from omniaudit.data_builders.hub import load_config
    from omniaudit.data_builders.protocols.remedy import COLUMNS, deranged_rows

    build = training_protocols(work)
    blueprint = load_config(build, "blueprint", columns=COLUMNS)
    conflicts = load_config(build, "cue_conflict", columns=COLUMNS)
    remedy, _ = deranged_rows(blueprint, conflicts, seed=seed)  # `omniaudit remedy label_following --cue-conflict`
    rng = np.random.default_rng(seed)
    biased = [copied(r) if r["supplied"] else r for r in remedy]
    control = [relabelled(r, str(rng.choice(r["options"])), "random") if r["supplied"] else r for r in remedy]
    return {"biased": biased, "control": control, "remedy": remedy}


def write_audio_set(folder: Path, rows: list[dict], name: str) -> Path:
    """Chat records with an audio column, as ``omniaudit remedy label_following`` writes them (config ``sft``)."""
    from omniaudit.data_builders.hub import ParquetSink, configs_metadata, shard_name
    from omniaudit.data_builders.protocols.remedy import features
    from omniaudit.io import atomic_dir

    if (folder / name / "README.md").is_file():
        return folder / name
    with atomic_dir(folder / name) as dest:
        (dest / "sft").mkdir()
        sink = ParquetSink(dest / "sft" / shard_name("train"), features())
        sink.add(rows)
        sink.close()
        (dest / "README.md").write_text("---\n" + json.dumps({"configs": configs_metadata({"sft": ["train"]})}) +
                                        f"\n---\n# find_fix_verify: {name}\n\n{len(rows)} chat records with "
                                        "audio (benchmarks/find_fix_verify.py).\n", encoding="utf-8")
    return folder / name


def write_set(folder: Path, table: pd.DataFrame, name: str) -> Path:
    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset

    card = "---\n" + json.dumps({"configs": configs_metadata({"sft": ["train"]})}) + "\n---\n" + (
        f"# find_fix_verify: {name}\n\n{len(table)} chat records of judge items (benchmarks/find_fix_verify.py).\n")
    if (folder / name / "README.md").is_file():  # written by an earlier shortcut of this run
        return folder / name
    return write_hub_dataset(folder / name, {"sft": {"train": table}}, card)


def reward_pairs(work: Path, labels: str) -> Path:
    """The pairs a style reward model trains on, as a Hub-layout ``pairs`` config (what ``training/reward_odin.py``
    reads): ``length``, the training build's binary pairs with the longer description preferred (pairs of equal
    length dropped), ``source-balanced``, its source-balanced pairs with their human labels, or
    ``length-controlled``, its length-controlled pairs (relative gap under 0.15) with their human labels."""
    from omniaudit.data_builders.hub import configs_metadata, load_config, write_hub_dataset

    folder = work / "data" / f"pairs-{labels}"
    if (folder / "README.md").is_file():
        return folder
    build = training_build(work)
    if labels == "length":
        pairs = load_config(build, "pairs")
        pairs = pairs[pairs["is_binary"].astype(bool) & (pairs["len1"] != pairs["len2"])]
        pairs = pairs.assign(preference=np.where(pairs["len1"] > pairs["len2"], "a1", "a2"))
    else:
        pairs = load_config(build, labels.replace("-", "_"))
        pairs = pairs[pairs["preference"].isin(["a1", "a2"])]
    card = "---\n" + json.dumps({"configs": configs_metadata({"pairs": ["train"]})}) + "\n---\n" + (
        f"# find_fix_verify: {labels} pairs\n\n{len(pairs)} binary pairs (benchmarks/find_fix_verify.py).\n")
    return write_hub_dataset(folder, {"pairs": {"train": pairs.reset_index(drop=True)}}, card)


def training_sets(work: Path, shortcut: str, labels: str, seed: int) -> dict[str, Path]:
    """The biased, control and remedy sets of ``shortcut``, written once under ``work/data`` and named by what they
    hold (a set two shortcuts share, the length-labelled balanced one, is trained once)."""
    if shortcut == "label_following":
        sets = label_following_sets(work, seed)
        names = {"biased": "labels-copied", "control": "labels-random", "remedy": "labels-deranged"}
        return {role: write_audio_set(work / "data", sets[role], names[role]) for role in names}
    items = training_items(work)
    length = by_length(items) if labels == "length" else items
    tables = position_sets(length, seed)
    names = {"biased": f"{labels}-preferred-first", "control": f"{labels}-one-order",
             "remedy": f"{labels}-both-orders"}
    return {role: write_set(work / "data", tables[role], names[role]) for role in ("biased", "control", "remedy")}


def training_interventions(work: Path) -> Path:
    """An interventions build of clips the card never holds (its own seed): the ``sft`` config (every variant's
    question answered truthfully) and the ``dpo`` config (Shift / Mute / Swap and CTP preference pairs)."""
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset

    folder = work / "train-interventions"
    if not folder.exists():
        build_interventions_dataset(folder, spec=SyntheticClipSpec(n_clips=TRAIN_CLIPS, width=160, height=120, fps=12,
                                                                   seed=TRAIN_SEED))
    return folder


def visual_sets(work: Path) -> dict[str, Path]:
    """biased = the SFT rows of the Original clips only (the sound always matches the picture: answering from the
    picture always pays, as in the natural videos Thud's models learn from); control = the SFT rows of every variant
    (Original, Shift, Mute, Swap: only listening pays); remedy = the build's DPO pairs (Thud's SFT-then-DPO)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset

    build = training_interventions(work)
    rows = pq.read_table(sorted((build / "sft").glob("*.parquet")))
    out = {"remedy": build}
    for role, table in (("biased", rows.filter(pc.equal(rows["intervention"], "original"))), ("control", rows)):
        folder = work / "data" / f"interventions-{role}"
        if not (folder / "README.md").is_file():
            card = "---\n" + json.dumps({"configs": configs_metadata({"sft": ["train"]})}) + "\n---\n" + (
                f"# find_fix_verify: {role}\n\n{table.num_rows} chat records with clips.\n")
            write_hub_dataset(folder, {"sft": {"train": table}}, card)
        out[role] = folder
    return out
