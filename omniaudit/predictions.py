"""Where each answer came from, and the checks every consumer of a predictions file makes.

``omniaudit judge`` writes, in every predictions row, ``provenance``: the same record for every row of one run::

    {"omniaudit": "0.1.0",
     "dataset": {"name": "thud", "config": "diagnostic", "fingerprint": "sha256:..."},
     "judge": "openai:qwen@http://127.0.0.1:8000/v1",
     "model": {"kind": "openai", "url": ..., "model": "qwen", "served": {"id": "qwen", "owned_by": ...}},
     "sampling": {"temperature": 0.7, "top_p": null, "seed": 0, "runs": 3, "max_tokens": 32},
     "selection": {"conditions": null, "formats": null, "items": 240}}

plus ``finish_reason`` per row (``stop``, ``length``, ...; null where the runner does not say) and, in the file of
one shard of a run (``--shard I/N``), ``shard``. The dataset fingerprint is the content hash of the config's Parquet
files (:mod:`omniaudit.data_builders.fingerprint`); ``model`` is :mod:`~omniaudit.runners.identity`.

:func:`check_predictions` is what every audit does with a file before it reads an answer: one run per file (all rows
the same provenance), made on this build of this dataset (fingerprint and config), whole (no shard, every item of
every run) unless ``partial`` is allowed. Files without ``provenance`` (other harnesses: ``id`` + ``raw``) are
accepted and reported as of unknown provenance. lmms-eval ``--log_samples`` files of a task that ``omniaudit export
lmms-eval`` wrote are read as predictions files: :func:`check_predictions` turns their rows into predictions rows
first (:func:`omniaudit.evaluation.lmms_eval.adopt_log_samples`), with a provenance naming the lmms-eval task.

Rows also carry ``doc_hash`` and ``prompt_hash`` (:func:`omniaudit.runners.rows.row_hashes`): the item as
the judge saw it and the request it was sent. :func:`check_predictions` refuses a file where some rows carry them and
others do not, rows of one item that disagree on them, and, with the dataset at hand, a row whose ``doc_hash`` is not
its item's in the dataset (:func:`check_row_hashes`); files written before the fields existed pass unchecked.
"""

from __future__ import annotations

import contextlib
import json
import numbers
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from omniaudit import __version__
from omniaudit.errors import InputError
from omniaudit.records import canonical, first_difference, missing, value_at
from omniaudit.row_hashes import check_row_hashes
from omniaudit.runs import SAMPLING as SAMPLING  # re-exported: the protocols audit reads it here
from omniaudit.runs import is_blank, run_labels, sampling_settings
from omniaudit.runs import sampling_sentence as sampling_sentence  # re-exported: as SAMPLING

PROVENANCE = "provenance"
UNKNOWN = ("provenance unknown: the file does not say which dataset build, model and sampling its answers came "
           "from (not written by `omniaudit judge`)")


def run_provenance(dataset: str | Path, config: str, fingerprint: str | None, judge: str, model: dict,
                   sampling: dict, selection: dict, runner: dict | None = None) -> dict:
    """The ``provenance`` record of one judge run (see the module docstring); no absolute local paths. ``runner``:
    the runner settings that change what the model is shown or how its answer is read (``--mode``, ``--fps``,
    ``--max-frames``, ``--dialect``, ``--top-logprobs``), recorded where the runner has any."""
    name = Path(dataset).name if Path(dataset).exists() else str(dataset)
    return {"omniaudit": __version__, "dataset": {"name": name, "config": config, "fingerprint": fingerprint},
            "judge": judge, "model": model, "sampling": sampling, "selection": selection,
            **({"runner": runner} if runner else {})}


@dataclass
class FileProvenance:
    """What one predictions file says of its origin, after :func:`check_predictions`."""

    file: str
    known: bool
    record: dict | None = None
    rows: int = 0
    shard: str | None = None  # "I/N" when the file is one shard of a run
    complete: bool | None = None  # every item of every run answered (None: unknown)
    missing: int = 0  # (item, run) answers the run should have and the file lacks
    finish_reasons: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def summary(self, base: str | Path | None = None) -> dict:
        """For audit.json: the record's main fields, flat. The file is named relative to the output folder ``base``
        when inside it, else by its name, never where it lives on this machine (as the report names it), and so is
        any absolute path in a note. The record's fields (``judge`` included) are kept as the file states them: a
        reader compares them with the file's own provenance."""
        from omniaudit.evaluation.report import shown_path, shown_paths_in

        out = asdict(self)
        record = out.pop("record") or {}
        out.update({"file": shown_path(self.file, base), "notes": [shown_paths_in(n, base) for n in self.notes],
                    "judge": record.get("judge"), "model": record.get("model"),
                    "dataset": record.get("dataset"), "sampling": record.get("sampling"),
                    "omniaudit": record.get("omniaudit")})
        return out


def _records(raw: pd.DataFrame, column: str) -> list:
    values = []
    for value in raw[column].tolist():
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        values.append(None if isinstance(value, float) and value != value else value)
    return values


def _section(record: dict, key: str) -> dict:
    """A provenance section (a JSON object), or {} where the record has none."""
    value = record.get(key)
    return value if isinstance(value, dict) else {}


def run_identity(record: dict) -> dict:
    """What must be equal for answers to belong to one judge run: all but the config answered, its build's
    fingerprint and the item selection (a judge's configs or orders may sit in separate files, or in one)."""
    data = _section(record, "dataset")
    return {**{k: v for k, v in record.items() if k != "selection"},
            "dataset": {k: v for k, v in data.items() if k not in ("config", "fingerprint")}}


def fold_filter(record: dict) -> list[int] | None:
    """The folds a fold-filtered run answered (``omniaudit judge --folds``: ``fold=K`` in its selection's
    conditions), or None for a run over every fold, a merge of cross-fitted judges included."""
    selection = _section(record, "selection")
    folds = [c.partition("=")[2] for c in selection.get("conditions") or () if str(c).startswith("fold=")]
    if not folds or selection.get("out_of_fold"):
        return None
    return sorted(int(f) for f in folds)


def check_predictions(raw: pd.DataFrame, file: str | Path, dataset: str | Path | None, configs: tuple[str, ...],
                      partial: bool = False, rows: list[int] | None = None) -> FileProvenance:
    """Check one predictions file (its rows as read, ``raw``) against the dataset it is audited with.

    Refused (InputError naming the file, the row and the field): rows of different judge runs in one file (another
    judge, model, sampling or dataset; rows of several configs of one run, e.g. samples and ablations
    concatenated, are fine); answers made on another config than ``configs`` or on another build of the dataset
    (its fingerprint differs from the file's); unless ``partial``: one shard of a sharded run, or a config's run that
    lacks answers (fewer rows than items x runs). ``dataset`` None (or not at hand, e.g. a Hub repo not cached)
    skips the fingerprint comparison, with a note.

    The reading hook: rows of an lmms-eval ``--log_samples`` file are first turned, in place, into the predictions
    rows they answer (:func:`omniaudit.evaluation.lmms_eval.adopt_log_samples`; another task's log is refused).
    """
    from omniaudit.evaluation.lmms_eval import adopt_log_samples

    file = str(file)
    rows = rows or list(range(1, len(raw) + 1))
    origin = adopt_log_samples(raw, file, rows)
    out = FileProvenance(file=file, known=False, rows=len(raw), notes=[origin] if origin else [])
    if PROVENANCE not in raw.columns:
        out.notes.append(UNKNOWN)
        return out
    records = _records(raw, PROVENANCE)
    groups: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise InputError("expected a provenance record (a JSON object) as `omniaudit judge` writes it",
                             file=file, row=rows[i], column=PROVENANCE, value=record)
        groups.setdefault(canonical(record), []).append(i)
    first = records[0]
    by_config: dict[object, int] = {}  # a row's config (None where it names none) -> its first member
    for members in groups.values():
        record = records[members[0]]
        where = first_difference(run_identity(first), run_identity(record))
        config = (record.get("dataset") or {}).get("config")
        if where is None and config in by_config:
            where = "dataset.fingerprint" if first_difference(record, records[by_config[config]]) else None
            where = where or "selection"
        if where:
            raise InputError(f"this row comes from another run than row {rows[0]}: its {where} is "
                             f"{value_at(record, where)!r}, not {value_at(first, where)!r}; one predictions file "
                             f"holds one run of one judge (keep runs in separate files)", file=file,
                             row=rows[members[0]], column=PROVENANCE)
        by_config[config] = members[0]
    for members in groups.values():  # once the file is known to hold one run
        _check_config(records[members[0]], raw.iloc[members], file, rows[members[0]], dataset, configs, partial, out)
    _check_rows(raw, first, file, rows)
    _check_served(raw, file, rows, out)
    if origin is None:  # an adopted lmms-eval log's rows carry no omniaudit row hashes
        check_row_hashes(raw, file, rows, records, dataset)
    out.known, out.record = True, first
    if "finish_reason" in raw.columns:
        reasons = raw["finish_reason"].map(lambda v: "unknown" if v is None or v != v else str(v))
        out.finish_reasons = {str(k): int(v) for k, v in reasons.value_counts().sort_index().items()}
    if partial and (out.shard or out.missing):
        out.notes.append(f"partial run ({'shard ' + out.shard if out.shard else f'{out.missing} answers missing'}),"
                         " audited as allowed by --partial: not comparable with a full audit")
    return out


def _check_served(raw: pd.DataFrame, file: str, rows: list[int], out: FileProvenance) -> None:
    """Who answered, by the server's own word per row (``served_model``, ``system_fingerprint``): replies naming two
    models are two models' answers under one provenance, refused at the first row that names the other one; replies
    from two deployments of one model (the fingerprint changed during the run) are kept, with a note saying how many
    rows each answered."""
    if "served_model" in raw.columns:
        named = raw["served_model"].to_numpy(dtype=object)
        seen = [(i, v) for i, v in enumerate(named) if isinstance(v, str)]
        other = next(((i, v) for i, v in seen if v != seen[0][1]), None)
        if other is not None:
            first = f"{seen[0][1]!r} from row {rows[seen[0][0]]}"
            raise InputError(f"replies of this run name two served models ({first}, {other[1]!r} here): the "
                             "model behind the server changed during the run; one predictions file holds one "
                             "model's answers (rerun the judge against one deployment)",
                             file=file, row=rows[other[0]], column="served_model", value=other[1])
    if "system_fingerprint" in raw.columns:
        counts = raw["system_fingerprint"].map(lambda v: v if isinstance(v, str) else None).value_counts()
        if len(counts) > 1:
            shares = ", ".join(f"{k}: {v} rows" for k, v in sorted(counts.items()))
            out.notes.append(f"answers came from {len(counts)} deployments of the served model (system_fingerprint "
                             f"{shares}): the server changed during the run")


def _check_rows(raw: pd.DataFrame, record: dict, file: str, rows: list[int]) -> None:
    """Rows whose own fields contradict their run's provenance or each other are refused, naming the row: an edited
    or spliced file would otherwise be audited as the run it claims to be. Checked: the sampling settings
    (``temperature``, ``top_p``; ``seed`` = the run's seed + ``run``), ``run`` within the run's ``runs``, and a
    closed answer's ``parsed`` agreeing with its ``label``."""
    sampling = _section(record, "sampling")
    runs, base = sampling.get("runs"), sampling.get("seed")
    columns = set(raw.columns)
    for i, row in enumerate(raw.to_dict("records")):
        for name in ("temperature", "top_p"):
            if name in columns and name in sampling and not _same(row[name], sampling[name]):
                raise InputError(f"{name} {row[name]!r} contradicts the run's provenance ({name} "
                                 f"{sampling[name]!r}): an edited or spliced file?", file=file, row=rows[i],
                                 column=name)
        run = _whole(row.get("run", 0))
        if "run" in columns and isinstance(runs, int) and (run is None or not 0 <= run < runs):
            raise InputError(f"run {row['run']!r} is not one of the run's {runs} runs (0..{runs - 1})", file=file,
                             row=rows[i], column="run")
        seed = _whole(row.get("seed"))
        if isinstance(base, int) and run is not None and seed is not None and seed != base + run:
            raise InputError(f"seed {row['seed']!r} contradicts the run's provenance (seed {base} + run {run})",
                             file=file, row=rows[i], column="seed")
        parsed, label = row.get("parsed"), row.get("label")
        if {"parsed", "label"} <= columns and not missing(parsed) and bool(parsed) == missing(label):
            raise InputError(f"parsed {parsed!r} contradicts label {label!r} (a closed answer is parsed exactly "
                             "when it has a label)", file=file, row=rows[i], column="parsed")


def _whole(value) -> int | None:
    """An integer field's value (1 and 1.0 alike), or None when it is missing or not a whole number."""
    if isinstance(value, bool) or missing(value):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    return int(value) if isinstance(value, float) and value.is_integer() else None


def _same(a, b) -> bool:
    """Equal settings, None and NaN alike."""
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return a == b


def _check_config(record: dict, raw: pd.DataFrame, file: str, row: int, dataset: str | Path | None,
                  configs: tuple[str, ...], partial: bool, out: FileProvenance) -> None:
    """The rows of one config of a run: the config this audit reads, this build of it, whole unless ``partial``."""
    from omniaudit.data_builders.fingerprint import fingerprint_of

    meta = record.get("dataset") or {}
    if meta.get("config") not in configs:
        raise InputError(f"these predictions answer config '{meta.get('config')}', but this audit reads "
                         f"{' or '.join(repr(c) for c in configs)}", file=file, row=row, column=PROVENANCE)
    if dataset is not None:
        have = fingerprint_of(dataset, meta["config"])
        if have is None:
            out.notes.append(f"the dataset's files are not at hand ({dataset}), so its fingerprint was not compared")
        elif have != meta.get("fingerprint"):
            raise InputError(f"these predictions were made on another build of the dataset: config "
                             f"'{meta['config']}' of {meta.get('name')} had fingerprint {meta.get('fingerprint')}, "
                             f"and {dataset} has {have} (rebuilt with other data, options or seed?). Run "
                             f"`omniaudit judge` on this dataset, or audit the build the answers were made on",
                             file=file, row=row, column=PROVENANCE)
    shards = raw["shard"].dropna().tolist() if "shard" in raw.columns else []
    if shards:
        s = shards[0] if isinstance(shards[0], dict) else {}
        out.shard = f"{s.get('index')}/{s.get('count')}"
        if not partial:
            raise InputError(f"this file is shard {out.shard} of a judge run, not the whole run; join the shards "
                             f"with `omniaudit merge-predictions` (or pass --partial to audit only these answers)",
                             file=file)
        return
    folds = fold_filter(record)
    if folds is not None:  # one cross-fitted judge's held-out folds: the other folds' answers are elsewhere
        out.complete = False
        if not partial:
            raise InputError(f"this file answers fold(s) {folds} of config '{meta.get('config')}' only (judge "
                             f"--folds); join the fold files of the cross-fitted judges with `omniaudit "
                             f"merge-predictions` (or pass --partial to audit only these answers)", file=file)
        out.notes.append(f"fold-filtered run (folds {folds})")
    n_items, n_runs = (record.get("selection") or {}).get("items"), (record.get("sampling") or {}).get("runs")
    if isinstance(n_items, int) and isinstance(n_runs, int):
        missing = max(0, n_items * n_runs - len(raw))
        out.missing += missing
        out.complete = (out.complete is not False) and missing == 0
        limit = (record.get("selection") or {}).get("limit")  # a smoke run (judge --limit N): incomplete by design
        if missing and not partial and limit is not None:
            raise InputError(f"the run is incomplete: a smoke run of `omniaudit judge --limit {limit}` answered a "
                             f"seeded sample of {limit} of the {n_items} items of config '{meta.get('config')}'; run "
                             f"without --limit for the whole config, or pass --partial to audit only these answers",
                             file=file)
        if missing and not partial:
            raise InputError(f"the run is incomplete: config '{meta.get('config')}' asked {n_items} items x "
                             f"{n_runs} run(s) = {n_items * n_runs} answers and the file has {len(raw)}; a "
                             f"truncated file would count the missing answers as wrong. Rerun `omniaudit judge` "
                             f"(it resumes), or pass --partial", file=file)


def check_same_run(provenances: list[FileProvenance], what: str = "these files") -> None:
    """Refuse files of one judge that come from different judges, models, sampling or datasets (their configs and
    selections may differ: e.g. a judge's orders or configs in separate files)."""
    known = [p for p in provenances if p.known]
    for other in known[1:]:
        where = first_difference(run_identity(known[0].record or {}), run_identity(other.record or {}))
        if where:
            raise InputError(f"{what} do not come from one judge run: its {where} is "
                             f"{value_at(other.record, where)!r} here and {value_at(known[0].record, where)!r} in "
                             f"{known[0].file}", file=other.file)


def provenance_lines(provenances: list[FileProvenance]) -> list[str]:
    """Report lines: one per file, what it says of its origin."""
    lines = []
    for p in provenances:
        if not p.known:
            lines.append(f"- `{Path(p.file).name}`: {UNKNOWN}.")
            continue
        r = p.record or {}
        model, sampling, data = r.get("model") or {}, r.get("sampling") or {}, r.get("dataset") or {}
        who = model.get("served", {}).get("id") if isinstance(model.get("served"), dict) else None
        who = who or model.get("model") or r.get("judge")
        digest = model.get("sha256") or model.get("revision")
        lines.append(f"- `{Path(p.file).name}`: {r.get('judge')} (model {who}{f', {digest}' if digest else ''}) on "
                     f"config `{data.get('config')}` of {data.get('name')} ({data.get('fingerprint')}); temperature "
                     f"{sampling.get('temperature')}, {sampling.get('runs')} run(s), {p.rows} answers"
                     + (f"; finish reasons {p.finish_reasons}" if p.finish_reasons else "")
                     + "".join(f"; {n}" for n in p.notes))
    return lines


def provenance_section(provenances: list[FileProvenance]) -> str:
    """The report's "Where the answers came from" section."""
    return "\n".join(["", "## Where the answers came from", "", *provenance_lines(provenances)]) + "\n"


def label_sources_sentence(src: dict) -> str:
    """How one model's answers were read, in a sentence: rule reader, LLM extractor, option probabilities, given in
    the file, unparsed; with an extractor, its agreement with the rule reader on the answers both read."""
    parts = [f"{src['rule']} read by the rule reader", f"{src['extractor']} filled by the LLM extractor"]
    if src.get("reasoning"):
        parts.append(f"{src['reasoning']} read from the reasoning trace (judge --read-reasoning)")
    if "option_probs" in src:
        parts.append(f"{src['option_probs']} taken from option probabilities")
    languages = src.get("unparsed_languages") or {}
    unglossed = (f" ({sum(languages.values())} in a language no reader glosses: "
                 + ", ".join(f"{lang} {n}" for lang, n in languages.items()) + ")") if languages else ""
    parts += [f"{src['given']} given in the file", f"{src['unparsed']} left unparsed{unglossed}"]
    if src.get("excluded"):
        parts.append(f"{src['excluded']} read by an extractor or from a reasoning trace and left out "
                     "(--exclude-extracted)")
    line = f"{src['answers']} answers: " + ", ".join(parts) + "."
    agreement = src.get("extractor_agreement")
    if agreement is not None:
        rate = "n/a" if agreement["rate"] is None else f"{100 * agreement['rate']:.1f}%"
        line += (f" The extractor agreed with the rule reader on {agreement['agree']} of the {agreement['n']} "
                 f"answers both read ({rate}).")
    return line


ANSWER_COLUMNS = ("prediction", "response", "raw")  # a row's free-form answer, first present; raw: `omniaudit judge`
# ``read_by`` of a closed row the rules did not read from the visible reply: an extractor model read it (`omniaudit
# judge --extractor`) or its reasoning trace was read (`--read-reasoning`). Audits count them apart and leave them out
# with ``--exclude-extracted``.
EXTRACTED = ("extractor", "reasoning")


@dataclass
class PredictionFile:
    """One predictions file, read once by :func:`read_prediction_file` with the checks every audit makes done.

    ``records`` holds every record as read (CSV cells as text) for what only one audit reads (structured fields, a
    pair's ``p_a1``); ``rows`` is each record's row number for errors (CSV data row, JSONL line); ``ids`` the key
    column as text; ``runs`` each record's run (text; None without a ``run`` column); ``answers`` the free-form
    answer ('' where empty; None when the file has no answer column) and ``answer_column`` where it came from;
    ``sampling`` the settings the file records (:func:`sampling_settings`); ``provenance`` its checked provenance.
    What an answer means (an option, P(a1), a sync verdict) is the audit's to read.
    """

    path: Path
    records: pd.DataFrame
    rows: list[int]
    key: str
    ids: pd.Series
    runs: list[str] | None
    answers: list[str] | None
    answer_column: str | None
    sampling: dict
    provenance: FileProvenance

    def run_numbers(self) -> list[int]:
        """Each record's run as a whole number >= 0 (0 for every row without a ``run`` column); another run value
        is an error naming its row."""
        if self.runs is None:
            return [0] * len(self.records)
        out = []
        for row, run in zip(self.rows, self.runs, strict=True):
            with contextlib.suppress(ValueError):
                if float(run).is_integer() and float(run) >= 0:
                    out.append(int(float(run)))
                    continue
            raise InputError("expected a run index (0, 1, ...)", file=self.path, row=row, column="run", value=run)
        return out

    def labels(self, extracted: bool = True) -> list[str | None]:
        """The ``label`` column, stripped; None where it is empty or ``parsed`` says false (no option was read), and
        without ``extracted`` where the rules did not read it (:meth:`extracted`)."""
        if "label" not in self.records.columns:
            return [None] * len(self.records)
        parsed = self.records["parsed"] if "parsed" in self.records.columns else [True] * len(self.records)
        left_out = [None] * len(self.records) if extracted else self.extracted()
        return [None if is_blank(label) or str(ok).strip().lower() in ("false", "0") or out else str(label).strip()
                for label, ok, out in zip(self.records["label"], parsed, left_out, strict=True)]

    def extracted(self) -> list[str | None]:
        """What read each record's label where it was not the rules on the visible reply (its ``read_by``, one of
        :data:`EXTRACTED`), else None."""
        if "read_by" not in self.records.columns:
            return [None] * len(self.records)
        by = ["" if is_blank(v) else str(v).strip() for v in self.records["read_by"]]
        return [v if v in EXTRACTED else None for v in by]


def read_prediction_file(path: str | Path, dataset: str | Path | None, configs: tuple[str, ...],
                         partial: bool = False, *, keys: tuple[str, ...] = ("id",),
                         needs: tuple[str, ...] = (), expected: str = "",
                         answer_columns: tuple[str, ...] = ANSWER_COLUMNS, known=None,
                         unknown: str = "id not in the dataset") -> PredictionFile:
    """Read one predictions file (CSV, TSV, JSONL or Parquet) as every audit does.

    In order: the records are read (:func:`omniaudit.tables.read_records`); the provenance is checked
    (:func:`check_predictions`: this build of ``dataset``'s ``configs``, a whole run unless ``partial``); the file
    must have a key column (the first of ``keys`` present) and, when ``needs`` is given, one of those columns, else
    the error says ``expected`` (what the audit reads, in its words) and lists the file's columns; with ``known``
    (the dataset's ids), a key outside it is an error naming its row (``unknown`` says what it is); a ``run`` column
    must name a run on every row. An empty file is an error.
    """
    from omniaudit.tables import read_records

    path = Path(path)
    raw, rows = read_records(path)
    provenance = check_predictions(raw, path, dataset, configs, partial, rows)
    key = next((k for k in keys if k in raw.columns), None)
    if key is None or (needs and not set(needs) & set(raw.columns)):
        raise InputError(f"{expected or 'expected columns ' + ' and '.join(keys)}; the file has {list(raw.columns)}",
                         file=path)
    if raw.empty:
        raise InputError("no rows", file=path)
    ids = raw[key].map(lambda v: "" if is_blank(v) else str(v).strip())
    if known is not None:
        outside = ~ids.isin(known)
        if outside.any():
            i = int(outside.to_numpy().argmax())
            raise InputError(f"{unknown} ({int(outside.sum())} unknown {key}(s))", file=path, row=rows[i],
                             column=key, value=raw[key].iloc[i])
    column = next((c for c in answer_columns if c in raw.columns), None)
    answers = None if column is None else [v if isinstance(v, str) else "" if is_blank(v) else str(v)
                                           for v in raw[column].tolist()]
    return PredictionFile(path, raw, rows, key, ids, run_labels(raw, path, rows), answers, column,
                          sampling_settings(raw), provenance)
