"""Dataset mixtures for the training recipes, in alignment-handbook's ``dataset_mixture`` style.

A recipe names either one dataset (``dataset_name`` + ``dataset_config``) or a mixture::

    dataset_mixture:
      datasets:
        - id: data/thud                  # a folder written by omniaudit, a Hub repo id, or a local
          config: dpo                    # .parquet / .jsonl / .json / .csv file (a FineVideo-derived set)
          split: train
          columns: [prompt, chosen, rejected, video]
          kinds: [ctp]                   # omniaudit's own: keep only rows whose `kind` is one of these
          weight: 1.0                    # share of the (selected) rows kept, a seeded sample
        - id: me/finevideo-fv-d
          weight: 0.5
      seed: 0
      test_split_size: 0.05              # held-out share (the same as eval_fraction)

As alignment-handbook's ``get_dataset`` does, each source is loaded, cut to ``columns`` when given, and ``weight``
keeps ``floor(weight * n)`` rows of a shuffle seeded by ``seed``; the sources are concatenated and the mixture is
shuffled with the same seed. Two additions: ``kinds`` selects pair kinds before the weight applies (the ``dpo``
config of ``omniaudit build interventions`` labels every pair ``shift``, ``mute``, ``swap``, ``ctp`` or ``op``, and
``omniaudit build sp-pairs`` labels its pairs ``sp``; ``kind_column`` names another label column, e.g. the task of a
FineVideo set), and a source without ``columns`` keeps the columns every source has, so an omniaudit ``dpo`` config
mixes with a set that has only ``prompt`` / ``chosen`` / ``rejected`` / ``video``. A media column (video, audio,
image) that some sources have and others lack is an error, never silently dropped; media stay encoded (the collators
decode them). Every problem names the source (``dataset_mixture.datasets[i]``) and the key.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, fields
from pathlib import Path

from omniaudit.errors import InputError

MEDIA_COLUMNS = ("video", "audio", "image")
FILE_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MixtureSource:
    """One dataset of a mixture (alignment-handbook's ``DatasetConfig`` keys + ``kinds`` / ``kind_column``)."""

    id: str
    config: str | None = None
    split: str = "train"
    columns: tuple[str, ...] | None = None
    weight: float = 1.0
    kinds: tuple[str, ...] | None = None
    kind_column: str = "kind"

    @property
    def label(self) -> str:
        kinds = f" kinds={','.join(self.kinds)}" if self.kinds else ""
        return f"{self.id}" + (f" [{self.config}]" if self.config else "") + kinds


@dataclass(frozen=True)
class DatasetMixture:
    datasets: tuple[MixtureSource, ...]
    seed: int = 0
    test_split_size: float | None = None


@dataclass
class MixtureResult:
    """The mixed dataset and, per source, its label and the rows it had (after ``kinds``) and contributed."""

    dataset: object
    sources: list[dict] = field(default_factory=list)


def _names(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value or not all(isinstance(v, str) and v for v in value):
        raise InputError("expected a non-empty list of names", column=where, value=value)
    return tuple(value)


def parse_mixture(raw: object, where: str = "dataset_mixture") -> DatasetMixture:
    """A :class:`DatasetMixture` from the recipe's ``dataset_mixture`` mapping; unknown keys and bad values fail,
    naming the key (``dataset_mixture.datasets[1].weight``)."""
    if isinstance(raw, DatasetMixture):
        return raw
    if not isinstance(raw, dict):
        raise InputError("expected a mapping with 'datasets' (and optionally 'seed', 'test_split_size')",
                         column=where, value=raw)
    unknown = sorted(set(raw) - {"datasets", "seed", "test_split_size"})
    if unknown:
        raise InputError(f"unknown key(s) {unknown}; expected datasets, seed, test_split_size", column=where)
    entries = raw.get("datasets")
    if not isinstance(entries, list) or not entries:
        raise InputError("expected a non-empty list of datasets", column=f"{where}.datasets", value=entries)
    keys = {f.name for f in fields(MixtureSource)}
    sources = []
    for i, entry in enumerate(entries):
        at = f"{where}.datasets[{i}]"
        if not isinstance(entry, dict):
            raise InputError("expected a mapping with at least 'id'", column=at, value=entry)
        bad = sorted(set(entry) - keys)
        if bad:
            raise InputError(f"unknown key(s) {bad}; expected {sorted(keys)}", column=at)
        if not isinstance(entry.get("id"), str) or not entry["id"]:
            raise InputError("expected 'id': a dataset folder, a Hub repo id or a data file", column=f"{at}.id",
                             value=entry.get("id"))
        weight = entry.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 < weight <= 1:
            raise InputError("expected a share of the source's rows in (0, 1]", column=f"{at}.weight", value=weight)
        for key in ("config", "split", "kind_column"):
            if key in entry and entry[key] is not None and not isinstance(entry[key], str):
                raise InputError("expected a name", column=f"{at}.{key}", value=entry[key])
        columns = entry.get("columns")
        kinds = entry.get("kinds")
        sources.append(MixtureSource(
            id=entry["id"], config=entry.get("config"), split=entry.get("split") or "train",
            columns=None if columns is None else _names(columns, f"{at}.columns"), weight=float(weight),
            kinds=None if kinds is None else _names(kinds, f"{at}.kinds"),
            kind_column=entry.get("kind_column") or "kind"))
    seed = raw.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError("expected an integer seed", column=f"{where}.seed", value=seed)
    test = raw.get("test_split_size")
    if test is not None and (isinstance(test, bool) or not isinstance(test, int | float) or not 0 < test < 1):
        raise InputError("expected a held-out share in (0, 1)", column=f"{where}.test_split_size", value=test)
    return DatasetMixture(tuple(sources), seed=seed, test_split_size=None if test is None else float(test))


def _load_source(source: MixtureSource, at: str):
    import datasets

    from omniaudit.data_builders.hub import load_hub_dataset

    path = Path(source.id)
    builder = FILE_BUILDERS.get(path.suffix.lower()) if path.is_file() else None
    try:
        if builder:  # a local data file: the `datasets` builder of its type
            return datasets.load_dataset(builder, data_files={source.split: str(path.resolve())}, split=source.split)
        return load_hub_dataset(source.id, source.config, source.split)
    except InputError as exc:
        raise InputError(f"{at}: {exc}") from exc
    except (ValueError, FileNotFoundError) as exc:
        raise InputError(f"{at}: cannot read {builder} file: {type(exc).__name__}: {exc}", file=path) from exc


def _select_kinds(ds, source: MixtureSource, at: str):
    if source.kind_column not in ds.column_names:
        raise InputError(f"{at}: 'kinds' selects on column '{source.kind_column}', which this dataset lacks "
                         f"(it has {ds.column_names}); set kind_column", file=source.id)
    values = ds[source.kind_column]
    present = sorted({str(v) for v in values})
    absent = [k for k in source.kinds if k not in present]
    if absent:
        raise InputError(f"{at}: no rows of kind(s) {absent} in column '{source.kind_column}' (it has {present})",
                         file=source.id)
    wanted = set(source.kinds)
    return ds.select([i for i, v in enumerate(values) if str(v) in wanted])


def _media_undecoded(ds):
    import datasets

    for column in MEDIA_COLUMNS:
        if column in ds.column_names:
            feature = type(ds.features[column])
            if feature in (datasets.Video, datasets.Audio, datasets.Image):
                ds = ds.cast_column(column, feature(decode=False))
    return ds


def load_mixture(mixture: DatasetMixture | dict, required: tuple[str, ...] = ()) -> MixtureResult:
    """The mixed dataset (one ``datasets.Dataset``, shuffled with ``mixture.seed``); ``required`` columns must be in
    every source after its ``columns`` cut. The held-out split (``test_split_size``) is left to the training script
    (``split_eval``), as for a single dataset."""
    import datasets

    mixture = parse_mixture(mixture)
    parts, report = [], []
    for i, source in enumerate(mixture.datasets):
        at = f"dataset_mixture.datasets[{i}] ({source.label})"
        ds = _load_source(source, at)
        if source.kinds:
            ds = _select_kinds(ds, source, at)
        if source.columns:
            missing = [c for c in source.columns if c not in ds.column_names]
            if missing:
                raise InputError(f"{at}: lacks column(s) {missing} named in 'columns'; it has {ds.column_names}",
                                 file=source.id)
            ds = ds.select_columns(list(source.columns))
        missing = [c for c in required if c not in ds.column_names]
        if missing:
            raise InputError(f"{at}: lacks column(s) {missing} that this script needs; it has {ds.column_names}",
                             file=source.id)
        available = len(ds)
        keep = math.floor(source.weight * available + 1e-9)  # alignment-handbook: int(weight * len)
        if keep == 0:
            raise InputError(f"{at}: weight {source.weight} of {available} row(s) keeps none", file=source.id)
        if keep < available:
            ds = ds.shuffle(seed=mixture.seed).select(range(keep))
        parts.append(_media_undecoded(ds))
        report.append({"source": source.label, "rows": available, "kept": keep})
    columns = [c for c in parts[0].column_names if all(c in p.column_names for p in parts)]
    for column in MEDIA_COLUMNS:
        having = [i for i, p in enumerate(parts) if column in p.column_names]
        if having and len(having) < len(parts):
            lacking = [i for i in range(len(parts)) if i not in having]
            raise InputError(f"dataset_mixture: source(s) {having} have a '{column}' column and source(s) {lacking} "
                             f"do not; mix sources of the same modality (a text-only pair has no clip to train on)")
    for i, p in enumerate(parts):
        dropped = [c for c in p.column_names if c not in columns]
        if dropped:
            logger.info("dataset_mixture.datasets[%d]: columns %s are not in every source and are left out", i,
                        dropped)
    parts = [p.select_columns(columns) for p in parts]
    try:  # the first source's types (e.g. a JSONL set's inferred message structs, large_string vs string)
        parts = [parts[0], *(p if p.features == parts[0].features else p.cast(parts[0].features) for p in parts[1:])]
        mixed = datasets.concatenate_datasets(parts)
    except (ValueError, TypeError) as exc:
        features = "; ".join(f"[{i}] {dict(p.features)}" for i, p in enumerate(parts))
        raise InputError(f"dataset_mixture: the sources' column types differ, so they cannot be concatenated "
                         f"({exc}); features: {features}") from exc
    mixed = mixed.shuffle(seed=mixture.seed)
    logger.info("dataset mixture: %s", ", ".join(f"{r['source']}: {r['kept']}/{r['rows']}" for r in report))
    return MixtureResult(mixed, report)
