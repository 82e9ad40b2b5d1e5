"""Take every model through every registered audit whose item modalities it accepts, then write the card.

The folder (``OUT``) is written in steps, each complete or absent, so a killed run resumes and a rerun reuses what is
complete:

- ``datasets/<audit>/``: the embedded default of each audit (:meth:`omniaudit.audits.Audit.build`), built once
  (atomically); a user's ``--data AUDIT=PATH`` is read where it is;
- ``models/<NAME>/<config>.jsonl``: the predictions (``run_judge``: answers journaled as they come, the file written
  whole at the end); a complete file whose provenance matches this run (dataset fingerprint, judge, sampling, model
  identity for ``hf:``) is reused, a served model's (``openai:``) only while a canary of its answers, asked again,
  is answered the same (:meth:`Scorecard._canary`; else it is asked afresh and its status says why); with
  ``reuse=False`` (``--no-reuse``) every model answers afresh;
- ``models/<NAME>/<audit>/``: the audit's own folder (``audit.json``, ``report.md``, figures), redone only when its
  predictions changed; ``models/<NAME>/status.json`` records each audit's status and the predictions it read;
- ``scorecard.json``, ``scorecard.md``, ``scorecard.html``, ``figures/``: written last (each file atomically) from the
  statuses, with the folder's ``.omniaudit.json`` marker.

``oracle`` (``scripted:oracle``) always runs: the calibration row every number is read against.

Across machines: ``shard=(I, N)`` answers only shard I of N of every item config (``run_judge`` shards: whole trials,
dealt round-robin) into its own folder and writes ``shard.json`` instead of the card; a run with ``from_shards`` (the
N shard folders) merges each model's answers (``merge_predictions``: every shard once, one run, byte-identical to the
unsharded file) and audits and writes the card as an unsharded run would. The embedded defaults are deterministic,
so every machine builds the same dataset (the merge checks the fingerprints).

A smoke run: ``limit=N`` has every model answer only ``run_judge``'s seeded, stratified sample of at most N items of
every item config (``judge --limit``: whole item groups, :func:`~omniaudit.runners.shards.limit_positions`),
the audits read those incomplete runs as partial runs, and the card is marked a smoke run whose verdicts are not
valid (the calibration of the reference models is not checked: too few items to hold them to it). The limit is part
of every reuse key: a limited run's answers and audits are never reused by a full run, nor a full run's by a limited
one.

Data parallel: under a multi-process launch (``accelerate launch -m omniaudit scorecard``, ``launch=(rank, N)``) the
main process (rank 0) does everything but the answering: each judge run it needs is dealt to every rank
(:func:`~omniaudit.runners.shards.judge_data_parallel`: rank r judges shard r/N, the main process merges
the parts into the single-process file, byte for byte), and only the main process audits and writes the card; the
other ranks only answer, as the main process asks them (:func:`follow_main_process`), and return None.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from omniaudit.audits import SIZES, get
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard.modalities import dataset_modalities, model_accepts
from omniaudit.evaluation.scorecard.references import reference_models, tiers_of
from omniaudit.evaluation.scorecard.rules import shortcuts
from omniaudit.results import AuditOptions, AuditRun
from omniaudit.runners.plugins import BUILT_IN
from omniaudit.runners.run import (
    MIN_USABLE,
    RefusedItems,
    UnusableRun,
    check_limit,
    check_runner_options,
    check_sampling,
    input_settings,
)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
STATUS = "status.json"
MIN_RESAMPLES = 200  # fewer bootstrap resamples make the percentile tails (2.5%, 97.5%) of every CI unreliable
CANARY = 8  # answers of a kept predictions file of a served model asked again before it is reused
CANARY_SEED = 0


class CalibrationFailed(RuntimeError):
    """The card is written, but a reference model failed its calibration (the oracle flagged, or a planted model not
    flagged for its own shortcut): the verdicts of the models under test there are inconclusive."""


class MissingShard(InputError):
    """A merge of shard runs that lacks a shard's answers (or holds another run's)."""


@dataclass(frozen=True)
class ScorecardOptions:
    """How the scorecard runs. ``runner``: the runner options of ``make_judge`` / ``run_judge`` (``batch_size``,
    ``mode``, ``max_tokens``, ``dialect``, ``cache_dir``, ...); ``sampling``: ``temperature``, ``top_p``, ``seed``
    (default greedy)."""

    audits: tuple[str, ...] | None = None  # default: every registered audit
    data: dict[str, str] = field(default_factory=dict)  # audit -> the user's built dataset
    min_usable: float = MIN_USABLE  # a model with fewer usable answers is "not answering" on that audit
    n_resamples: int = 1000
    size: str = "default"  # the embedded defaults: "default" (sized by power) or "small" (smoke runs)
    allow_uncalibrated: bool = False  # write the card even when a reference model fails its calibration
    # the planted-shortcut reference tiers run beside the oracle: "scripted" (rules), "learned" (trained tiny
    # models), "all"; True means "scripted" (references.tiers_of)
    references: tuple[str, ...] | str | bool = ()
    runner: dict = field(default_factory=dict)
    sampling: dict = field(default_factory=dict)
    shard: tuple[int, int] | None = None  # answer only shard I of N of every item config; no audit, no card
    from_shards: tuple[str | Path, ...] = ()  # the OUT folders of the N shard runs, merged before the audits
    reuse: bool = True  # False: every model answers afresh (no kept predictions or statuses; datasets are kept)
    # model name -> a hand-labelled readings.csv (`omniaudit readings sample`, truth filled): the card reports the
    # readers' agreement on that model's own replies and warns below evaluation.readings.GOAL
    reader_checks: dict[str, str] = field(default_factory=dict)
    # a smoke run: every judge run answers a seeded, stratified sample of at most this many items per config (judge
    # --limit; the sampling seed draws it), audited as partial runs; the card's verdicts are marked not valid
    limit: int | None = None
    baseline: str | None = None  # a model every other model under test is compared with (paired changes)


def check_options(options: ScorecardOptions) -> None:
    """Every option in its range, before any dataset is built or any model asked: InputError naming the option and
    its range (a wrong option is the user's to fix, never a model's "not answering")."""
    n = options.n_resamples
    if not (isinstance(n, int) and not isinstance(n, bool) and n >= MIN_RESAMPLES):
        raise InputError(f"n_resamples must be an integer >= {MIN_RESAMPLES} (fewer resamples make the CIs' "
                         "percentile tails unreliable)", value=n)
    if not 0 <= options.min_usable <= 1:
        raise InputError("min_usable must be in [0, 1]", value=options.min_usable)
    check_sampling(options.sampling.get("temperature", 0.0), options.sampling.get("top_p"))
    check_runner_options(options.runner)
    if options.shard and options.from_shards:
        raise InputError("a shard run (--shard) and a merge of shard runs (--from-shards) are separate runs")
    if options.size not in SIZES:
        raise InputError(f"size must be one of {', '.join(SIZES)}", value=options.size)
    check_limit(options.limit)
    reference_models(tiers_of(options.references))  # an unknown tier, or learned ones not installed


def check_reader_checks(files: dict[str, str], models: dict[str, str]) -> None:
    """Each hand-labelled readings file names a model of the card and can be read, before any work."""
    from omniaudit.evaluation.readings import agreement

    unknown = sorted(set(files) - set(models))
    if unknown:
        raise InputError(f"--reader-check names no model of this card: {', '.join(unknown)} (models: "
                         f"{', '.join(models)})")
    for file in files.values():
        agreement(file)


def check_baseline(baseline: str | None, models: dict[str, str]) -> None:
    """``--baseline`` names a model of this card, before any work."""
    if baseline is not None and baseline not in models:
        raise InputError(f"--baseline names no model of this card (models: {', '.join(models)})", value=baseline)


def parse_models(specs: list[str] | dict[str, str], references: tuple[str, ...] | str | bool = ()) -> dict[str, str]:
    """``NAME=SPEC`` -> {name: spec}, ``oracle`` added (and the planted references of the tiers ``references``
    names: :func:`~omniaudit.evaluation.scorecard.references.tiers_of`)."""
    pairs = list(specs.items()) if isinstance(specs, dict) else []
    for text in [] if isinstance(specs, dict) else specs:
        name, sep, spec = str(text).partition("=")
        if not sep or ":" in name or not spec:
            raise InputError("a model must look like NAME=SPEC (hf:PATH, openai:MODEL@URL or scripted:NAME)",
                             value=text)
        pairs.append((name, spec))
    models: dict[str, str] = {}
    for name, spec in pairs:
        if not NAME.match(name):
            raise InputError("a model name is letters, digits, '.', '_' or '-' (it names a folder)", value=name)
        if name in models:
            raise InputError("two models have the same name", value=name)
        models[name] = spec
    wanted = {r.name: r.spec for r in reference_models(tiers_of(references))}
    for name, spec in wanted.items():
        if spec not in models.values():
            models[name if name not in models else f"{name}-reference"] = spec
    return models


def _audits(options: ScorecardOptions) -> list[str]:
    from omniaudit.audits import AUDITS

    names = list(options.audits or AUDITS)
    for name in [*names, *options.data]:
        get(name)  # unknown: InputError listing the audits
    unknown = sorted(set(options.data) - set(names))
    if unknown:
        raise InputError(f"--data for audits that are not run ({', '.join(unknown)})")
    return names


def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


@functools.cache
def code_digest(package: str) -> str:
    """The sources of an omniaudit package (every ``.py`` under it, by relative path), hashed: a stamp that changes
    whenever its code does (a wheel installed without sources falls back to the version)."""
    import importlib

    from omniaudit import __version__

    root = Path(cast(str, importlib.import_module(package).__file__)).parent
    files = sorted(root.rglob("*.py"))
    digest = hashlib.sha256(__version__.encode())
    for file in files:
        digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def default_key(audit: str, size: str = "default") -> str:
    """What an embedded default is: the audit's build (its code, description and parameters at ``size``) and the
    builders' code (a folder built by another key is rebuilt, so a changed size or builder never reuses a stale
    dataset)."""
    import inspect

    entry = get(audit)
    try:
        code = inspect.getsource(type(entry).build)
    except (OSError, TypeError):  # installed without sources: the builders' digest stands for it
        code = type(entry).build.__qualname__
    return _digest(code, entry.describe(size), entry.build_parameters(size), code_digest("omniaudit.data_builders"))


def _file_digest(path: Path) -> str:
    from omniaudit.data_builders.fingerprint import file_digest

    return file_digest(path)


class Scorecard:
    """One scorecard run (see the module docstring)."""

    def __init__(self, out: Path, models: dict[str, str], options: ScorecardOptions,
                 progress: Callable[[str], None] | None = None) -> None:
        self.out, self.models, self.options = out, models, options
        self.say = progress or (lambda _m: None)
        self.audits = _audits(options)
        self.datasets: dict[str, Path | str] = {}  # audit -> the dataset its models answered
        self._needs: dict[str, dict[str, tuple[str, ...]]] = {}
        self.canaries: dict[str, dict[str, dict]] = {}  # model -> config -> its canary (see _canary)
        # under a multi-process launch (main process): sends one judge run's arguments to the other ranks, which
        # judge their shards of it beside the main process (run_scorecard sets it); None: one process judges
        self.dispatch: Callable[[dict], None] | None = None
        self._samples: dict[tuple[str, str], list[int] | None] = {}  # (dataset, config) -> the --limit sample

    # ---- up front: modalities, datasets -------------------------------------------------------------------------
    def needs(self, audit: str) -> dict[str, tuple[str, ...]]:
        """config -> modalities of an audit's items (the user's dataset's, else the registry's)."""
        if audit not in self._needs:
            configs = get(audit).item_configs
            self._needs[audit] = ({c: dataset_modalities(self.options.data[audit], c) for c in configs}
                                  if audit in self.options.data else dict(configs))
        return self._needs[audit]

    def runner(self, spec: str) -> dict:
        """The runner options of one model: ``answer_format`` only for servers (``openai:``), which can constrain
        their answers; reference and local models answer as they do (scripted by rule, ``hf:`` closed items by
        option scores already)."""
        if spec.startswith("openai:"):
            return self.options.runner
        return {k: v for k, v in self.options.runner.items() if k != "answer_format"}

    def plan(self) -> dict[str, dict[str, str | None]]:
        """model -> audit -> None (run it) or why it is skipped; checked before any model call."""
        needs = {a: self.needs(a) for a in self.audits}
        plan: dict[str, dict[str, str | None]] = {}
        for name, spec in self.models.items():
            self.say(f"{name}: checking what it takes")
            accepts = model_accepts(spec, self.runner(spec))
            plan[name] = {}
            for audit in self.audits:
                missing = sorted({m for mods in needs[audit].values() for m in mods} - accepts)
                plan[name][audit] = (f"{spec} takes no {', '.join(missing)} input (it takes "
                                     f"{', '.join(sorted(accepts))}); the {audit} items carry it" if missing else None)
        return plan

    def dataset(self, audit: str) -> Path | str:
        if audit in self.options.data:
            return self.options.data[audit]
        from omniaudit.io import atomic_file, read_marker, remove_path

        folder = self.out / "datasets" / audit
        stamp = folder.with_name(f"{audit}.default.json")  # which default the folder holds
        key = default_key(audit, self.options.size)
        try:
            built = json.loads(stamp.read_text(encoding="utf-8")).get("key")
        except (OSError, ValueError, AttributeError):
            built = None
        if folder.is_dir() and read_marker(folder) and built == key:
            return folder
        if folder.exists():  # another default (its sizes or its builder changed): built afresh, never reused
            self.say(f"the {audit} default changed: rebuilding it")
            remove_path(folder)
        self.say(f"building the {audit} default")
        say = lambda m, a=audit: self.say(f"building the {a} default: {m}")  # noqa: E731
        entry = get(audit)
        entry.build(folder, self.options.size, say)
        with atomic_file(stamp) as tmp:
            stamped = {"audit": audit, "default": entry.describe(self.options.size), "key": key}
            tmp.write_text(json.dumps(stamped) + "\n", encoding="utf-8")
        return folder

    # ---- one model ------------------------------------------------------------------------------------------------
    def _reusable(self, path: Path, dataset, config: str, spec: str, runs: int) -> bool:
        """A complete predictions file of this very run (dataset build, judge, sampling, model)."""
        from omniaudit.data_builders.fingerprint import fingerprint_of
        from omniaudit.runners.identity import local_model_identity
        from omniaudit.runners.transport import redact

        try:
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            record = rows[0]["provenance"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return False
        kind, _, rest = spec.partition(":")
        sampling = {**self._sampling(), "runs": runs, "max_tokens": self.options.runner.get("max_tokens", 32)}
        shard = rows[0].get("shard")
        selection = record.get("selection") if isinstance(record.get("selection"), dict) else {}
        sample = self.sample(dataset, config)  # a smoke run's sample (None: every item)
        # a limited run's answers only for the same limit and seed, a full run's only for a full run (a limit at or
        # above a config's items takes every item and records none: that file is the full run's)
        limited = (selection.get("limit"), selection.get("limit_seed"))
        if limited != ((None, None) if sample is None else (self.options.limit, self.limit_seed())):
            return False
        expected = (selection.get("items", -1) if sample is None else len(sample)) * runs
        complete = (shard is not None and (shard.get("index"), shard.get("count")) == self.options.shard
                    if self.options.shard else shard is None and len(rows) == expected)
        same = (complete and record.get("dataset", {}).get("fingerprint") == fingerprint_of(dataset, config)
                and record.get("judge") == redact(spec) and record.get("sampling") == sampling
                and record.get("runner", {}) == input_settings(spec, self.runner(spec)))
        if same and kind == "hf":
            same = record.get("model") == local_model_identity(rest)
        elif same and kind not in BUILT_IN:  # a plugin's own word on what answers, as its rows recorded it
            same = record.get("model") == self._model_identity(spec)
        return bool(same)

    def _sampling(self) -> dict:
        s = self.options.sampling
        return {"temperature": s.get("temperature", 0.0), "top_p": s.get("top_p"), "seed": s.get("seed")}

    def limit_seed(self) -> int:
        """The seed of a smoke run's sample, as ``run_judge`` draws it: the sampling seed (None: 0)."""
        seed = self._sampling()["seed"]
        return 0 if seed is None else seed

    def sample(self, dataset, config: str) -> list[int] | None:
        """A smoke run's sample of ``config`` (``limit``): the positions, in the config's item order, that
        ``run_judge(limit=...)`` answers (:func:`~omniaudit.runners.shards.limit_positions`, on the items'
        ids, orders and conditions only: no media read); None without a limit or when the limit holds every item."""
        from omniaudit.runners.shards import limit_positions

        if self.options.limit is None:
            return None
        key = (str(dataset), config)
        if key not in self._samples:
            items = _light_items(dataset, config)
            self._samples[key] = (None if self.options.limit >= len(items)
                                  else limit_positions(items, self.options.limit, self.limit_seed()))
        return self._samples[key]

    def predictions(self, name: str, spec: str, audit: str, dataset) -> dict[str, Path]:
        """config -> predictions file of one model (run or reused); UnusableRun / InputError propagate. A kept file
        is reused unless ``reuse`` is off, and a served model's only while its canary holds (:meth:`_canary`); a
        served model asked afresh for either reason is asked past its response cache (which its new replies
        refresh)."""
        from omniaudit.runners.run import run_judge

        files = {}
        for config in self.needs(audit):
            path = self.out / "models" / name / f"{config}.jsonl"
            runs = get(audit).runs.get(config, 1)
            if self.options.from_shards:  # merged every time (cheap): a re-done shard is never missed
                self._merge(name, audit, config, path)
                if not self._reusable(path, dataset, config, spec, runs):
                    raise MissingShard(f"the merged shards of {name}'s {config} answers are not answers of this run "
                                       "(another dataset build, judge, sampling, runner setting or model): run the "
                                       "shards with the same models, options and --data", file=path)
                self._check_usable(path, spec)
                files[config] = path
                continue
            served = spec.startswith("openai:")
            keep = self.options.reuse and self._reusable(path, dataset, config, spec, runs)
            changed = keep and served and not self._canary(name, spec, config, path, dataset)
            if not keep or changed:
                self.say(f"{name}: {audit}: {config}")
                refresh = {"refresh_cache": True} if served and (changed or not self.options.reuse) else {}
                progress = lambda m, c=config: self.say(f"{name}: {audit}: {c} {m}")  # noqa: E731
                options = {"runs": runs, **self._sampling(), **self.runner(spec), **refresh,
                           **({"limit": self.options.limit} if self.options.limit is not None else {})}
                if self.dispatch is not None:  # every rank judges its shard; the main process merges them
                    from omniaudit.runners.shards import judge_data_parallel

                    order = {"dataset": dataset, "config": config, "spec": spec, "out": path,
                             "min_usable": self.options.min_usable, "options": options}
                    self.dispatch(order)
                    judge_data_parallel(dataset, config, spec, path, progress=progress,
                                        min_usable=self.options.min_usable, **options)
                else:  # a shard keeps every answer: --min-usable holds for the whole run, checked once merged
                    run_judge(dataset, config, spec, path, progress=progress, min_usable=0 if self.options.shard
                              else self.options.min_usable, shard=self.options.shard, **options)
            files[config] = path
        return files

    def _canary(self, name: str, spec: str, config: str, path: Path, dataset) -> bool:
        """Do a served model's kept answers still stand? :data:`CANARY` of them (a sample drawn with a fixed seed) are
        asked again through the same runner at the file's own sampling, past the response cache, and compared (the
        option named, else the text). False when any differs, when the server says another model or deployment answers
        now (the rows' ``served_model`` / ``system_fingerprint`` differ from the kept ones), or when answers sampled
        without a seed cannot be compared: the user is told (naming the changed items) and the status records it
        (``canary``). A server that does not answer cannot be checked: its kept answers are reused, with a warning."""
        import random

        from omniaudit.errors import ServiceError
        from omniaudit.runners.run import answer_again, served_difference

        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        picks = sorted(random.Random(CANARY_SEED).sample(range(len(rows)), min(CANARY, len(rows))))
        sampling = self._sampling()
        if sampling["temperature"] > 0 and sampling["seed"] is None:
            return self._canary_says(name, config, len(picks), None, f"{name}: its {config} answers were sampled "
                                     "without a seed and cannot be checked against the server: asked afresh")
        # a row's position in the config's item order: a shard's rows say it; a smoke run's rows are its sample's
        order = self.sample(dataset, config) or list(range(rows[0]["provenance"]["selection"]["items"]))
        asked = [(rows[k]["run"], (rows[k].get("shard") or {}).get("position", order[k % len(order)]))
                 for k in picks]
        try:
            again = answer_again(dataset, config, spec, asked, **sampling,
                                 **{**self.runner(spec), "refresh_cache": True})
        except ServiceError as exc:
            self._canary_says(name, config, len(picks), None, f"{name}: the server did not answer, so its kept "
                              f"{config} answers could not be checked and are reused ({exc})")
            return True
        moved = served_difference(rows, again)  # another model or deployment: none of the kept answers stand
        if moved:
            changed = list(dict.fromkeys(str(rows[k]["id"]) for k in picks))
            return self._canary_says(name, config, len(picks), changed, f"{name}: the server's model changed since "
                                     f"its {config} answers were kept ({moved}): not reused, every item is asked "
                                     "afresh")
        changed = list(dict.fromkeys(str(rows[k]["id"]) for k, row in zip(picks, again, strict=True)
                                     if (row["id"], _said(row)) != (rows[k]["id"], _said(rows[k]))))
        return self._canary_says(name, config, len(picks), changed, f"{name}: the server's answers to {config} "
                                 f"changed since they were kept (asked again, items {', '.join(changed)} are "
                                 "answered otherwise): not reused, every item is asked afresh" if changed else None)

    def _canary_says(self, name: str, config: str, asked: int, changed: list[str] | None, note: str | None) -> bool:
        """Record a canary's outcome (``changed``: None when it could not compare); tell the user ``note``. True:
        the kept answers stand."""
        self.canaries.setdefault(name, {})[config] = {"asked": asked, "changed": changed, "note": note}
        if note:
            self.say(note)
        return changed == []

    def _merge(self, name: str, audit: str, config: str, path: Path) -> None:
        """Join the shard runs' answers of one model and config into ``path`` (``merge_predictions``: every shard
        once, all from one run); a shard run that found the model not answering makes it not answering here."""
        from omniaudit.runners.shards import merge_predictions

        missing: list[tuple[Path, str | None]]  # (shard run, why)
        refused: list[tuple[Path, str | None]]
        files, missing, refused = [], [], []
        for folder in map(Path, self.options.from_shards):
            file = folder / "models" / name / f"{config}.jsonl"
            if file.is_file():
                files.append(file)
                continue
            try:
                entry = json.loads((file.parent / STATUS).read_text(encoding="utf-8")).get(audit) or {}
            except (OSError, ValueError):
                entry = {}
            (refused if entry.get("status") == "not answering" else missing).append((folder, entry.get("reason")))
        if missing:
            raise MissingShard(f"no answers of {name} to {config} in the shard run(s) "
                               f"{', '.join(str(f) for f, _ in missing)}: did they finish (scorecard --shard I/N "
                               "with the same models)?")
        if refused:  # the runner refused the items in a shard (every shard would): not answering
            raise RefusedItems(f"{refused[0][1]} (shard run {refused[0][0]})")
        self.say(f"{name}: merging {len(files)} shards of {config}")
        try:
            merge_predictions(path, files)
        except InputError as exc:  # a shard missing or given twice, shards of different runs: not the model's doing
            raise MissingShard(str(exc)) from exc

    def _check_usable(self, path: Path, spec: str) -> None:
        """--min-usable on a merged run (shards keep every answer), as ``run_judge`` checks an unsharded one."""
        from omniaudit.runners.run import check_usable

        if not spec.startswith("scripted:"):
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            try:
                check_usable(rows, spec, self.options.min_usable)
            except InputError:
                path.unlink()  # not this run's answers to keep: a rerun asks the shards again
                raise

    def run_model(self, name: str, spec: str, plan: dict[str, str | None]) -> dict[str, AuditRun]:
        from omniaudit.io import atomic_file

        folder = self.out / "models" / name
        folder.mkdir(parents=True, exist_ok=True)
        try:
            kept = json.loads((folder / STATUS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            kept = {}
        runs: dict[str, AuditRun] = {}
        for audit in self.audits:
            if plan[audit] is not None:
                runs[audit] = AuditRun("skipped", reason=plan[audit])
                continue
            dataset = self.dataset(audit)
            key = _digest(spec, str(dataset), {c: self._fingerprint(dataset, c) for c in self.needs(audit)},
                          self.options.min_usable, self._sampling(), self.options.n_resamples,
                          input_settings(spec, self.runner(spec)), self.options.runner.get("max_tokens", 32),
                          self._model_identity(spec), self.options.shard, code_digest("omniaudit.evaluation"),
                          *([] if self.options.limit is None else [{"limit": self.options.limit}]))
            entry = kept.get(audit) or {}
            if (self.options.reuse and entry.get("key") == key and entry.get("status") == "not answering"
                    and not entry.get("predictions")):
                runs[audit] = AuditRun("not answering", dataset=dataset, name=name, reason=entry.get("reason"),
                                       parse_rate=entry.get("parse_rate"))
            else:
                runs[audit] = self._answer(name, spec, audit, dataset, entry, key)
            canary = {c: self.canaries[name][c] for c in self.needs(audit) if c in self.canaries.get(name, {})}
            entry = {"status": runs[audit].status, "reason": runs[audit].reason, "key": key,
                     "parse_rate": runs[audit].parse_rate,
                     "predictions": {c: _file_digest(f) for c, f in runs[audit].files.items()},
                     **({"canary": canary} if canary else {})}
            kept[audit] = entry
            with atomic_file(folder / STATUS) as tmp:
                tmp.write_text(json.dumps(kept, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return runs

    def _answer(self, name: str, spec: str, audit: str, dataset, entry: dict, key: str) -> AuditRun:
        """The model's answers to one audit (run or reused), audited; "not answering" when it said too little or
        cannot answer these items (any other InputError is the user's: it propagates)."""
        try:
            files = self.predictions(name, spec, audit, dataset)
        except (UnusableRun, RefusedItems) as exc:
            rate = exc.usable / exc.total if isinstance(exc, UnusableRun) and exc.total else None
            return AuditRun("not answering", dataset=dataset, name=name, reason=str(exc), parse_rate=rate)
        if self.options.shard:
            return AuditRun("answered", dataset=dataset, files=files, name=name)
        return self._audit(name, audit, dataset, files, entry, key)

    def _model_identity(self, spec: str) -> dict | None:
        """A local model's identity (a checkpoint rewritten in place is another model), else None."""
        from omniaudit.runners.identity import local_model_identity

        kind, _, rest = spec.partition(":")
        if kind not in BUILT_IN:
            from omniaudit.runners.identity import runner_identity
            from omniaudit.runners.run import make_judge

            return runner_identity(make_judge(spec, **self.runner(spec)))
        return local_model_identity(rest) if kind == "hf" else None

    def _fingerprint(self, dataset, config: str) -> str | None:
        from omniaudit.data_builders.fingerprint import fingerprint_of

        return fingerprint_of(dataset, config)

    def _audit(self, name: str, audit: str, dataset, files: dict[str, Path], entry: dict, key: str) -> AuditRun:
        """Audit one model's predictions (reused when the folder was made from these very files)."""
        from omniaudit.runners.run import usable

        folder = self.out / "models" / name / audit
        digests = {c: _file_digest(f) for c, f in files.items()}
        rows = [json.loads(line) for f in files.values() for line in f.read_text("utf-8").splitlines()]
        unread = Counter(r["unread"] for r in rows if r.get("unread"))
        run = AuditRun("ran", folder, dataset, files, name, parse_rate=sum(map(usable, rows)) / len(rows),
                       unread=dict(sorted(unread.items())))
        if not (entry.get("status") in ("ran", "not answering") and entry.get("key") == key
                and entry.get("predictions") == digests and (folder / "audit.json").is_file()):
            self.say(f"{name}: auditing {audit}")
            # a smoke run's answers are a sample of each config: audited as the partial runs they are
            try:
                options = AuditOptions(n_resamples=self.options.n_resamples, partial=self.options.limit is not None,
                                       progress=lambda m: self.say(f"{name}: {audit} audit: {m}"), benchmark=False)
                get(audit).audit(folder, dataset, {name: files}, options)
            except InputError as exc:
                if self.options.limit is not None:  # e.g. an audit that reads whole groups (protocols) or every
                    # sample (composition), which a sample of a few items per config cannot give: not a failure
                    return AuditRun("skipped", dataset=dataset, files=files, name=name,
                                    reason=f"not audited in this smoke run: the {audit} audit cannot read a sample "
                                           f"of its items ({exc})")
                return AuditRun("failed", dataset=dataset, files=files, name=name, reason=str(exc))
        read = get(audit).coverage(folder)
        if read is not None:
            run.parse_rate = read
            if read < self.options.min_usable:  # free text the audit cannot read: no answers, not a finding
                run.status = "not answering"
                run.reason = (f"the audit read {read:.0%} of {name}'s answers (at least "
                              f"{self.options.min_usable:.0%} needed, --min-usable)")
        return run


def _light_items(dataset, config: str) -> list:
    """The items of a config as far as grouping and sampling go (id, order, condition: a row's condition, else its
    task, as :func:`~omniaudit.runners.items.load_items` reads them), in the config's order, without
    reading a prompt or a medium."""
    from omniaudit.data_builders.hub import load_hub_dataset
    from omniaudit.runners.items import JudgeItem

    ds = load_hub_dataset(dataset, config)
    table = ds.select_columns([c for c in ("id", "order", "condition", "task") if c in ds.column_names]).to_dict()
    n = len(table["id"])
    column = lambda c: table.get(c) or [None] * n  # noqa: E731
    return [JudgeItem(id=str(i), prompt="", order=o or None, condition=c or t)
            for i, o, c, t in zip(table["id"], column("order"), column("condition"), column("task"), strict=True)]


def check_limit_fits(card: Scorecard, limit: int) -> None:
    """A smoke run's limit holds at least one whole item group of every item config (both orders of a pair are
    judged together): InputError naming the audit, the config and its smallest group, before any model call."""
    from omniaudit.runners.shards import item_groups

    for audit, dataset in card.datasets.items():
        for config in card.needs(audit):
            smallest = min(map(len, item_groups(_light_items(dataset, config))))
            if smallest > limit:
                raise InputError(f"--limit {limit} holds no whole item group of {audit} {config} (the orders of one "
                                 f"trial are judged together: its groups have {smallest} or more items): raise "
                                 "--limit", value=limit)


def _said(row: dict) -> str:
    """What a predictions row answered: the option it named, else its text."""
    return row["label"] if row.get("label") is not None else str(row.get("raw", "")).strip()


def _against_baseline(baseline: str | None, models: list[str] | dict[str, str], results: dict,
                      verdicts: dict) -> dict | None:
    """The card's comparison with ``--baseline``: every model the user named (not the references added for
    calibration) against it."""
    if baseline is None:
        return None
    from omniaudit.evaluation.scorecard.baseline import against_baseline

    named = list(models) if isinstance(models, dict) else [str(m).partition("=")[0] for m in models]
    return against_baseline(results, verdicts, baseline, [m for m in named if m in results and m != baseline])


def check_shard_folders(folders: tuple[str | Path, ...]) -> None:
    """The folders of a merge are the N shard runs of one sharding, each once (their ``shard.json``); InputError
    naming the folder otherwise, before any work."""
    seen: dict[int, Path] = {}
    count = None
    for folder in map(Path, folders):
        try:
            shard = json.loads((folder / "shard.json").read_text(encoding="utf-8"))["shard"]
            index, n = int(shard["index"]), int(shard["count"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a finished scorecard shard run (no readable shard.json: {exc})",
                             file=folder) from exc
        if count is not None and n != count:
            raise InputError(f"shard {index}/{n} does not belong with the others ({count} shards)", file=folder)
        if index in seen:
            raise InputError(f"shard {index}/{n} given twice ({seen[index]} and {folder})", file=folder)
        count, seen[index] = n, folder
    absent = sorted(set(range(count or 0)) - set(seen))
    if absent:
        raise InputError(f"--from-shards lacks shard(s) {', '.join(f'{i}/{count}' for i in absent)} of {count}")


def check_shard_count(card: Scorecard, shard: tuple[int, int]) -> None:
    """Every item config (a smoke run's sample of it) can be dealt into the N shards (whole trials, none empty), N
    shard runs or N launched processes: InputError before any model call, never a model's "not answering"."""
    from omniaudit.runners.shards import shard_positions

    for audit, dataset in card.datasets.items():
        for config in card.needs(audit):
            items = _light_items(dataset, config)
            sample = card.sample(dataset, config)
            items = items if sample is None else [items[p] for p in sample]
            try:
                shard_positions(items, *shard)
            except InputError as exc:
                raise InputError(f"{audit} {config}: {exc}") from exc


def write_shard_summary(out: Path, shard: tuple[int, int], results: dict[str, dict[str, AuditRun]]) -> None:
    """``shard.json``: which shard this folder answered, and each model's status per audit."""
    from omniaudit.io import atomic_file

    summary = {"shard": {"index": shard[0], "count": shard[1]},
               "models": {m: {a: {"status": r.status, "reason": r.reason} for a, r in runs.items()}
                          for m, runs in results.items()}}
    with atomic_file(out / "shard.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


def run_scorecard(out_dir: str | Path, models: list[str] | dict[str, str],
                  options: ScorecardOptions | None = None, progress: Callable[[str], None] | None = None, *,
                  launch: tuple[int, int] | None = None) -> Path | None:
    """Run the scorecard into ``out_dir`` (see the module docstring); returns the folder.

    ``models``: ``NAME=SPEC`` strings or {name: spec}. Refused before any work: a malformed or unknown spec, an
    unknown audit, a folder omniaudit did not write (unless the output policy says overwrite, which empties it).

    ``launch``: (rank, N) of this process in a multi-process launch
    (:func:`~omniaudit.runners.shards.launch_world`): the main process (rank 0) runs the scorecard with
    every judge run split across the N processes and returns the folder; the others answer their shards as it asks
    and return None (their refusals and failures raise
    :class:`~omniaudit.runners.shards.OtherRankReports`: the main process reports them).
    """
    options = options or ScorecardOptions()
    if launch is None:
        return _run_scorecard(out_dir, models, options, progress)
    return _run_launched(out_dir, models, options, progress, *launch)


def _run_launched(out_dir, models, options: ScorecardOptions, progress, rank: int, world: int) -> Path | None:
    """One process of a multi-process launch (see :func:`run_scorecard`)."""
    from omniaudit.runners.shards import OtherRankReports, join_process_group

    main = rank == 0
    try:  # before the processes meet: every rank checks the same options alike, and only the main one says why
        if options.shard:
            raise InputError(f"--shard {options.shard[0]}/{options.shard[1]} cannot be combined with a multi-process "
                             f"launch (WORLD_SIZE={world}): the launch's processes are the shards already (rank r of "
                             "N answers shard r/N of every judge run); drop --shard, or run each shard as a single "
                             "process")
        check_options(options)
        check_reader_checks(options.reader_checks, parse_models(models, options.references))
        check_shard_folders(options.from_shards)
        _audits(options)
        state = join_process_group(world)
    except InputError as exc:
        if main:
            raise
        raise OtherRankReports(str(exc)) from None
    if not main:
        follow_main_process(state)
        return None
    orders = _Orders(state)
    try:
        return _run_scorecard(out_dir, models, options, progress, dispatch=orders.send, world=world)
    finally:
        orders.close()  # the other ranks stop waiting for judge runs, whatever happened here


class _Orders:
    """The main process's side of a launch: each judge run it needs is sent to every other rank (a broadcast over the
    launch's process group, gloo), then ``None`` when there are no more."""

    def __init__(self, state) -> None:
        self.state = state

    def send(self, order: dict | None) -> None:
        from accelerate.utils import broadcast_object_list

        broadcast_object_list([order], from_process=0)

    def close(self) -> None:
        self.send(None)
        self.state.wait_for_everyone()


def follow_main_process(state) -> None:
    """A non-main rank of a launched scorecard: judge this rank's shard of each judge run the main process sends
    (:func:`~omniaudit.runners.shards.judge_data_parallel`, beside the main process), until it sends
    ``None``. A judge run that fails or is refused is reported by the main process, which decides whether the
    scorecard goes on (a model not answering is a status, not an end): this rank waits for the next order."""
    from accelerate.utils import broadcast_object_list

    from omniaudit.runners.shards import OtherRankReports, judge_data_parallel

    while True:
        box = [None]
        broadcast_object_list(box, from_process=0)
        order = box[0]
        if order is None:
            state.wait_for_everyone()
            return
        try:
            judge_data_parallel(order["dataset"], order["config"], order["spec"], order["out"],
                                min_usable=order["min_usable"], **order["options"])
        except OtherRankReports:
            continue


def _run_scorecard(out_dir: str | Path, models: list[str] | dict[str, str], options: ScorecardOptions,
                   progress: Callable[[str], None] | None, dispatch: Callable[[dict], None] | None = None,
                   world: int | None = None) -> Path:
    """:func:`run_scorecard` in one process, or as the main process of a launch of ``world`` processes
    (``dispatch``: sends a judge run to the other ranks)."""
    from omniaudit.evaluation.scorecard.card import write_card
    from omniaudit.io import check_out_dir, current_policy, output_lock, remove_path, write_marker

    check_options(options)
    chosen = parse_models(models, options.references)
    check_reader_checks(options.reader_checks, chosen)
    check_baseline(options.baseline, chosen)
    check_shard_folders(options.from_shards)
    out = check_out_dir(out_dir)
    if out == Path.cwd().resolve():
        raise InputError("the scorecard needs a folder of its own; choose --out DIR", file=out_dir)
    with output_lock(out):
        card = Scorecard(out, chosen, options, progress)
        card.dispatch = dispatch
        plan = card.plan()  # before any dataset is built or any model answers
        if current_policy().overwrite and out.exists():  # --overwrite: start afresh (once the inputs are checked)
            remove_path(out)
        out.mkdir(parents=True, exist_ok=True)
        # while it works, the marker covers whole folders: what a killed run leaves (journals, temporaries) stays
        # omniaudit's, so the rerun that resumes it is not refused; the final marker lists every file
        write_marker(out, files=["datasets", "models", "figures", "scorecard.json", "scorecard.md", "scorecard.html",
                                 "shard.json"])
        for audit in card.audits:
            if any(plan[m][audit] is None for m in chosen):
                card.datasets[audit] = card.dataset(audit)
        if options.limit is not None:
            check_limit_fits(card, options.limit)
        if options.shard or (world and not options.from_shards):  # N shard runs, or N processes judging
            check_shard_count(card, options.shard or (0, cast(int, world)))  # world is set when no --shard
        results = {name: card.run_model(name, spec, plan[name]) for name, spec in chosen.items()}
        if options.shard:  # answers only: the audits need every shard (--from-shards merges them)
            write_shard_summary(out, options.shard, results)
            write_marker(out)
            return out
        verdicts = {name: shortcuts(runs) for name, runs in results.items()}
        compared = _against_baseline(options.baseline, models, results, verdicts)
        data = write_card(out, card, results, verdicts, compared)
        write_marker(out)
    # a smoke run's calibration is not checked (too few items to hold the references to it): it never fails
    failed = {s: c["why"] for s, c in data["calibration"].items() if c["ok"] is False}
    if failed and not options.allow_uncalibrated:
        what = "; ".join(f"{s} ({', '.join(w)})" for s, w in failed.items())
        raise CalibrationFailed(f"calibration failed for {what}"
                                + f": the card ({out / 'scorecard.md'}) marks those verdicts inconclusive "
                                "(--allow-uncalibrated accepts it)")
    return out
