"""Build the preference audit dataset: validated pairs -> folds -> priors and slices -> remedies -> Hub layout.

Configs: ``pairs`` (every row, "same" included, with fold, lengths, fold-exclusive priors and slice flags), when
asked, ``source_balanced``, ``length_controlled`` and ``dual_order`` (binary pairs only; priors recomputed within the
config on the same folds), and always ``judge``: zero-shot judging items, both orders of every binary pair, in the
item contract (``omniaudit judge --config judge``; with ``media_dir`` each pair's clip attached, see
:mod:`~omniaudit.data_builders.preference.judge`), and with ``media_dir`` also ``judge_sft`` (the judge items as chat
records for the omni judge, ``training/sft.py``) and ``pairs_media`` (binary pairs with their clip, for Omni ODIN).
One split, ``train``: folds, not splits, separate held-out members.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from omniaudit.data_builders.hub import ParquetSink, configs_metadata, push_to_hub, shard_name
from omniaudit.data_builders.preference import judge, remedies
from omniaudit.data_builders.preference.read import read_preference_table
from omniaudit.data_builders.preference.slices import (
    FOLD_SEED,
    LENGTH_TOLERANCE,
    N_SPLITS,
    annotate,
    assign_folds,
    binary_label,
    win_rates,
)
from omniaudit.data_builders.preference.synthetic import SyntheticSpec, generator_styles, synthesize
from omniaudit.errors import InputError, located
from omniaudit.hub_cards import dataset_card
from omniaudit.io import atomic_dir, local_name

SPLIT = "train"
COLUMN_ORDER = ("id", "name", "model1", "a1", "model2", "a2", "preference", "fold", "len1", "len2", "prior1",
                "prior2", "prior_choice", "is_binary", "length_matched", "counter_stereotypical", "same_generator",
                "source_pair", "dedup_group")
N_DUPLICATE_EXAMPLES = 5


@dataclass(frozen=True)
class PreferenceBuildOptions:
    source_balanced: bool = False
    length_control: float | None = None  # tolerance for the strict length-controlled config
    dual_order: bool = False
    length_tolerance: float = LENGTH_TOLERANCE  # for the length-matched slice flag
    n_splits: int = N_SPLITS
    fold_seed: int = FOLD_SEED
    remedy_seed: int = 0
    media_dir: str | None = None  # folder of clips named <name>.<ext>, attached to the judge items

    def __post_init__(self) -> None:
        """The length tolerances are relative length gaps, in (0, 1]: 0 or less (or nan) would keep no pair and write
        an empty config, more than 1 every pair."""
        for name, flag in (("length_tolerance", "--length-tolerance"), ("length_control", "--length-control")):
            value = getattr(self, name)
            if value is None and name == "length_control":
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 1:
                raise InputError(f"{name} ({flag}) must be a relative length gap in (0, 1]", value=value)


def unique_ids(names: pd.Series) -> pd.Series:
    """Pair ids: the clip name, or ``name#k`` when a name occurs more than once (k counts its rows from 0, skipping
    any ``name#k`` that is already another row's name: names ``x, x, x#0`` give ids ``x#1, x#2, x#0``)."""
    if names.is_unique:
        return names.copy()
    repeated = names.duplicated(keep=False).to_numpy()
    taken = set(names[~repeated])
    counters: dict[str, int] = {}
    ids = names.tolist()
    for i in np.flatnonzero(repeated):
        name, k = ids[i], counters.get(ids[i], 0)
        while f"{name}#{k}" in taken:
            k += 1
        ids[i] = f"{name}#{k}"
        taken.add(ids[i])
        counters[name] = k + 1
    return pd.Series(ids, index=names.index, name=names.name)


def _norm(text: object) -> str:
    return " ".join(str(text).split()).casefold()


_KEY_COLUMNS = ("name", "model1", "a1", "model2", "a2")


def _key_columns(df: pd.DataFrame, normalise: bool) -> list[list[str]]:
    """The name, generator and description columns as lists (``tolist``: one conversion, not a Python iteration over
    the string array), optionally case- and whitespace-normalised."""
    norm = _norm if normalise else str
    return [[norm(v) for v in df[c].tolist()] for c in _KEY_COLUMNS]


def _candidates(df: pd.DataFrame, normalise: bool, columns: list[list[str]] | None = None) -> list[tuple]:
    """Per row: (name, the two (generator, description) candidates in sorted order), optionally case- and
    whitespace-normalised, so a pair and its copy with the candidates swapped get the same key (``columns``: the
    :func:`_key_columns` of ``df`` when the caller has them)."""
    columns = _key_columns(df, normalise) if columns is None else columns
    return [(n, *sorted(((g1, t1), (g2, t2)))) for n, g1, t1, g2, t2 in zip(*columns, strict=True)]


def duplicate_groups(df: pd.DataFrame, columns: list[list[str]] | None = None) -> np.ndarray:
    """Per row, the position of the first row it duplicates (itself when none).

    Duplicates are rows of the same clip name with the same two (generator, description) candidates, in either
    order, after collapsing whitespace and case: exact copies and near-copies alike, since both leak a label into
    another fold. The builder keeps a group in one fold; :func:`duplicate_summary` counts exact and near copies.
    ``columns``: the normalised :func:`_key_columns` of ``df`` when the caller has them.
    """
    first: dict[tuple, int] = {}
    return np.array([first.setdefault(key, i) for i, key in enumerate(_candidates(df, True, columns))],
                    dtype=np.int64)


def duplicate_summary(df: pd.DataFrame) -> dict:
    """Counts for the card and audit.json: rows that exactly repeat an earlier row (``exact``), rows equal to an
    earlier one only after case/whitespace normalisation (``near``), duplicate groups whose labels disagree
    (``conflicting_labels``, after mapping swapped copies to one order) and a few example groups of ids."""
    normalised = _key_columns(df, normalise=True)  # normalised once, for the groups and the canonical order
    group = duplicate_groups(df, normalised)
    exact_keys = _candidates(df, normalise=False)
    n_exact = len(exact_keys) - len(set(exact_keys))
    n_dup = int((group != np.arange(len(df))).sum())
    # the label in a canonical candidate order (swapped copies flip it), to compare the labels of a group
    _, g1, t1, g2, t2 = normalised
    swapped = [(a, b) > (c, d) for a, b, c, d in zip(g1, t1, g2, t2, strict=True)]
    label = np.where(swapped, df["preference"].map({"a1": "a2", "a2": "a1", "same": "same"}), df["preference"])
    ids = next(df[c] for c in ("pair_id", "id", "name") if c in df.columns)
    groups = pd.DataFrame({"group": group, "label": label, "id": ids.astype(str).to_numpy()}).groupby("group")
    sizes = groups.size()
    multi = sizes[sizes > 1].index
    conflicts = int((groups["label"].nunique()[multi] > 1).sum())
    examples = [groups.get_group(g)["id"].tolist() for g in multi[:N_DUPLICATE_EXAMPLES]]
    return {"exact": n_exact, "near": n_dup - n_exact, "groups": len(multi), "conflicting_labels": conflicts,
            "examples": examples}


def _ordered(df: pd.DataFrame) -> pd.DataFrame:
    extra = [c for c in df.columns if c not in COLUMN_ORDER]
    return df[[c for c in COLUMN_ORDER if c in df.columns] + extra].reset_index(drop=True)


def build_tables(pairs: pd.DataFrame, options: PreferenceBuildOptions = PreferenceBuildOptions()) -> dict:
    """Annotated ``pairs``, the requested remedy configs and the ``judge`` items, as DataFrames keyed by config name.

    With ``options.media_dir`` every binary pair's clip is located and probed here, before anything is written."""
    if len(pairs) < options.n_splits:
        raise InputError(f"{len(pairs)} pair(s) cannot be split into {options.n_splits} cross-validation folds; "
                         f"need at least {options.n_splits}")
    df = pairs.copy()
    df.insert(0, "id", unique_ids(df["name"]))
    # KFold over all rows (appendix A), then every duplicate joins the fold of its first occurrence, so a copied
    # pair never sits in another fold than its original (its label would leak into probes and priors)
    first = duplicate_groups(df)
    df["fold"] = assign_folds(len(df), options.n_splits, options.fold_seed)[first]
    df["dedup_group"] = df["id"].to_numpy()[first]
    annotated = annotate(df, options.length_tolerance)
    tables = {"pairs": annotated}
    base_cols = list(df.columns)
    if options.source_balanced:
        tables["source_balanced"] = remedies.source_balanced(annotated, options.remedy_seed)[base_cols]
    if options.length_control is not None:
        tables["length_controlled"] = remedies.length_controlled(annotated, options.length_control)[base_cols]
    if options.dual_order:
        tables["dual_order"] = remedies.dual_order(annotated[base_cols + ["source_pair", "len1", "len2"]])
    for name in list(tables)[1:]:
        tables[name] = annotate(tables[name], options.length_tolerance)
    tables = {name: _ordered(t) for name, t in tables.items()}
    clips = judge.find_clips(tables["pairs"], options.media_dir) if options.media_dir else None
    tables["judge"] = judge.judge_table(tables["pairs"], clips)
    if clips is not None:  # training configs with the clips: judge_sft (omni judge), pairs_media (Omni ODIN)
        tables.update(judge.media_tables(tables["pairs"], tables["judge"], clips))
    return tables


def summarize(df: pd.DataFrame) -> dict:
    """Counts per slice and whole-dataset generator win rates (the numbers on the card and in audit.json)."""
    label = binary_label(df["preference"])
    binary = df[df["is_binary"]]
    gens = sorted(set(df["model1"]) | set(df["model2"]))
    return {
        "n_pairs": len(df),
        "n_binary": int(df["is_binary"].sum()),
        "n_same": int((~df["is_binary"]).sum()),
        "n_a1": int((label == 1).sum()),
        "n_a2": int((label == 0).sum()),
        "generators": gens,
        "win_rates": {g: v["win_rate"] for g, v in win_rates(df["model1"].to_numpy(), df["model2"].to_numpy(),
                                                              label).items()},
        "slices": {
            "full": int(len(binary)),
            "length_matched": int(binary["length_matched"].sum()),
            "counter_stereotypical": int(binary["counter_stereotypical"].sum()),
            "same_generator": int(binary["same_generator"].sum()),
        },
        "prior_agreement": float(((binary["prior_choice"] == binary["preference"]).sum()) / max(len(binary), 1)),
        "source_pairs": {k: int(v) for k, v in binary["source_pair"].value_counts().sort_index().items()},
        # a dual_order table holds every pair twice by design: count copies among its source pairs
        "duplicates": duplicate_summary(df.drop_duplicates("pair_id") if "pair_id" in df.columns else df),
    }


def render_card(tables: dict[str, pd.DataFrame], source: str, options: PreferenceBuildOptions,
                spec: SyntheticSpec | None, generator_spellings: list[dict] | None = None) -> str:
    """The dataset card; ``generator_spellings``: generator names read as one (they differed only in case)."""
    metadata = {
        "pretty_name": "omniaudit preference audit dataset",
        "tags": ["omniaudit", "preference", "shortcut-audit", "emoprefer"],
        "task_categories": ["text-classification"],
        "configs": configs_metadata({name: [SPLIT] for name in tables}, default="pairs"),
    }
    styles = generator_styles(spec) if spec else []
    return dataset_card(
        "preference.md.j2", metadata,
        source=source, options=asdict(options), spec=spec.as_dict() if spec else None, styles=styles,
        summary=summarize(tables["pairs"]),
        config_sizes={name: len(t) for name, t in tables.items()},
        judge=judge.summarize(tables["judge"]), judge_prompts=judge.PROMPTS,
        generator_spellings=generator_spellings or [],
    )


def write_preference_dataset(out_dir: str | Path, tables: dict[str, pd.DataFrame], card: str) -> Path:
    """Write every config and the card, atomically replacing ``out_dir``; the configs with clips (``judge``,
    ``judge_sft``, ``pairs_media``) are written in small row groups with their clips read as they are written (memory
    stays flat in the number of clips)."""
    with atomic_dir(out_dir) as tmp:
        for name, table in tables.items():
            (tmp / name).mkdir()
            path = tmp / name / shard_name(SPLIT)
            if name not in judge.MEDIA_CONFIGS:
                pq.write_table(pa.Table.from_pandas(table, preserve_index=False), path)
                continue
            feats = judge.config_features(name, table)
            sink = ParquetSink(path, feats, rows_per_group=16)
            for start in range(0, len(table), sink.rows_per_group):
                sink.add(judge.records(table, start, start + sink.rows_per_group, feats))
            sink.close()
        (tmp / "README.md").write_text(card, encoding="utf-8")
    return Path(out_dir)


def build_from_source(data: str | Path | None, columns: dict[str, str] | None = None,
                      options: PreferenceBuildOptions = PreferenceBuildOptions(),
                      spec: SyntheticSpec | None = None) -> tuple[dict[str, pd.DataFrame], str, str]:
    """(tables, source description, card) built from a file, or from the embedded default when ``data`` is None."""
    if data is None:
        spec = spec or SyntheticSpec()
        raw, source = synthesize(spec), "embedded synthetic default"
    else:
        spec = None
        raw, source = read_preference_table(data, columns), str(data)
    with located(data):
        tables = build_tables(raw, options)
    card = render_card(tables, local_name(source), options, spec,  # the card: the file name only
                       raw.attrs.get("generator_spellings"))
    return tables, source, card


def build_preference_dataset(out_dir: str | Path, data: str | Path | None = None,
                             columns: dict[str, str] | None = None,
                             options: PreferenceBuildOptions = PreferenceBuildOptions(),
                             spec: SyntheticSpec | None = None, push_repo: str | None = None) -> Path:
    """Read (or synthesise), build and write the Hub-layout dataset; optionally push it. Returns ``out_dir``."""
    tables, _, card = build_from_source(data, columns, options, spec)
    out = write_preference_dataset(out_dir, tables, card)
    if push_repo:
        push_to_hub(out, push_repo)
    return out
