"""What a scorecard is asked to do (:class:`ScorecardOptions`: audits, data, sampling, runner options, shards, a
smoke run's limit, a baseline) and the checks every option passes before any dataset is built or any model asked;
the models named (:func:`parse_models`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from omniaudit.audits import SIZES, get
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard.references import reference_models, tiers_of
from omniaudit.runners.options import check_limit, check_runner_options, check_sampling
from omniaudit.runners.rows import MIN_USABLE

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MIN_RESAMPLES = 200  # fewer bootstrap resamples make the percentile tails (2.5%, 97.5%) of every CI unreliable


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
    # a model trained as the others were but without the remedy: each model's task accuracy against it, paired, and
    # held when the 95% interval of the change stays above -margin (a non-inferiority test, never two point values)
    control: str | None = None
    margin: float = 0.05


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


def check_baseline(baseline: str | None, models: dict[str, str], control: str | None = None,
                   margin: float = 0.05) -> None:
    """``--baseline`` (and ``--control``) name models of this card, before any work."""
    if baseline is not None and baseline not in models:
        raise InputError(f"--baseline names no model of this card (models: {', '.join(models)})", value=baseline)
    if control is not None and (baseline is None or control not in models or control == baseline):
        raise InputError("--control names a model of this card other than the --baseline, given with it (models: "
                         f"{', '.join(models)})", value=control)
    if not 0 < margin < 1:
        raise InputError("--margin must be in (0, 1): the accuracy a remedy may lose against the control",
                         value=margin)


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


def audits_of(options: ScorecardOptions) -> list[str]:
    from omniaudit.audits import AUDITS

    names = list(options.audits or AUDITS)
    for name in [*names, *options.data]:
        get(name)  # unknown: InputError listing the audits
    unknown = sorted(set(options.data) - set(names))
    if unknown:
        raise InputError(f"--data for audits that are not run ({', '.join(unknown)})")
    return names
