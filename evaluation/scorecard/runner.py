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
(:func:`~omniaudit.runners.data_parallel.judge_data_parallel`: rank r judges shard r/N, the main process merges
the parts into the single-process file, byte for byte), and only the main process audits and writes the card; the
other ranks only answer, as the main process asks them (:func:`~.launch.follow_main_process`), and return None.

The options are :mod:`~.options`, the answers :mod:`~.answers`, shards and launches :mod:`~.launch`.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import cast

from omniaudit.audits import get
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard.answers import (
    CANARY,
    STATUS,
    MissingShard,
    ModelAnswers,
    check_limit_fits,
    check_shard_count,
)
from omniaudit.evaluation.scorecard.launch import Orders, check_shard_folders, follow_main_process, write_shard_summary
from omniaudit.evaluation.scorecard.modalities import model_accepts
from omniaudit.evaluation.scorecard.options import (
    MIN_RESAMPLES,
    ScorecardOptions,
    audits_of,
    check_baseline,
    check_options,
    check_reader_checks,
    parse_models,
)
from omniaudit.evaluation.scorecard.rules import shortcuts
from omniaudit.results import AuditOptions, AuditRun
from omniaudit.runners.base import RefusedItems
from omniaudit.runners.factory import input_settings
from omniaudit.runners.rows import UnusableRun

__all__ = ["CANARY", "MIN_RESAMPLES", "CalibrationFailed", "MissingShard", "Scorecard", "ScorecardOptions",
           "check_reader_checks", "default_key", "run_scorecard"]  # read here by the CLI, benchmarks and tests


class CalibrationFailed(RuntimeError):
    """The card is written, but a reference model failed its calibration (the oracle flagged, or a planted model not
    flagged for its own shortcut): the verdicts of the models under test there are inconclusive."""


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


class Scorecard(ModelAnswers):
    """One scorecard run (see the module docstring); its answering half is :class:`~.answers.ModelAnswers`."""

    def __init__(self, out: Path, models: dict[str, str], options: ScorecardOptions,
                 progress: Callable[[str], None] | None = None) -> None:
        self.out, self.models, self.options = out, models, options
        self.say = progress or (lambda _m: None)
        self.audits = audits_of(options)
        self.datasets: dict[str, Path | str] = {}  # audit -> the dataset its models answered
        self._needs: dict[str, dict[str, tuple[str, ...]]] = {}
        self.canaries: dict[str, dict[str, dict]] = {}  # model -> config -> its canary (see _canary)
        # under a multi-process launch (main process): sends one judge run's arguments to the other ranks, which
        # judge their shards of it beside the main process (run_scorecard sets it); None: one process judges
        self.dispatch: Callable[[dict], None] | None = None
        self._samples: dict[tuple[str, str], list[int] | None] = {}  # (dataset, config) -> the --limit sample

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

    def _fingerprint(self, dataset, config: str) -> str | None:
        from omniaudit.data_builders.fingerprint import fingerprint_of

        return fingerprint_of(dataset, config)

    def _audit(self, name: str, audit: str, dataset, files: dict[str, Path], entry: dict, key: str) -> AuditRun:
        """Audit one model's predictions (reused when the folder was made from these very files)."""
        from omniaudit.runners.rows import usable

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


def _against_baseline(options: ScorecardOptions, models: list[str] | dict[str, str], results: dict,
                      verdicts: dict) -> dict | None:
    """The card's comparison with ``--baseline`` (and ``--control``): every model the user named (not the
    references added for calibration) against it."""
    if options.baseline is None:
        return None
    from omniaudit.evaluation.scorecard.baseline import against_baseline

    named = list(models) if isinstance(models, dict) else [str(m).partition("=")[0] for m in models]
    return against_baseline(results, verdicts, options.baseline,
                            [m for m in named if m in results and m != options.baseline],
                            control=options.control, margin=options.margin)


def run_scorecard(out_dir: str | Path, models: list[str] | dict[str, str],
                  options: ScorecardOptions | None = None, progress: Callable[[str], None] | None = None, *,
                  launch: tuple[int, int] | None = None) -> Path | None:
    """Run the scorecard into ``out_dir`` (see the module docstring); returns the folder.

    ``models``: ``NAME=SPEC`` strings or {name: spec}. Refused before any work: a malformed or unknown spec, an
    unknown audit, a folder omniaudit did not write (unless the output policy says overwrite, which empties it).

    ``launch``: (rank, N) of this process in a multi-process launch
    (:func:`~omniaudit.runners.data_parallel.launch_world`): the main process (rank 0) runs the scorecard with
    every judge run split across the N processes and returns the folder; the others answer their shards as it asks
    and return None (their refusals and failures raise
    :class:`~omniaudit.runners.data_parallel.OtherRankReports`: the main process reports them).
    """
    options = options or ScorecardOptions()
    if launch is None:
        return _run_scorecard(out_dir, models, options, progress)
    return _run_launched(out_dir, models, options, progress, *launch)


def _run_launched(out_dir, models, options: ScorecardOptions, progress, rank: int, world: int) -> Path | None:
    """One process of a multi-process launch (see :func:`run_scorecard`)."""
    from omniaudit.runners.data_parallel import OtherRankReports, join_process_group

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
        audits_of(options)
        state = join_process_group(world)
    except InputError as exc:
        if main:
            raise
        raise OtherRankReports(str(exc)) from None
    if not main:
        follow_main_process(state)
        return None
    orders = Orders(state)
    try:
        return _run_scorecard(out_dir, models, options, progress, dispatch=orders.send, world=world)
    finally:
        orders.close()  # the other ranks stop waiting for judge runs, whatever happened here


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
    check_baseline(options.baseline, chosen, options.control, options.margin)
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
        compared = _against_baseline(options, models, results, verdicts)
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
