"""The Python API: the three jobs of the command line as functions, importable as ``omniaudit.scorecard``,
``omniaudit.audit`` and ``omniaudit.build`` (``import omniaudit`` loads this module only when one is first used).

- :func:`scorecard` takes models through every audit and writes one card (``omniaudit scorecard``), with the
  command's defaults; returns a :class:`~omniaudit.results.ScorecardResult`;
- :func:`audit` audits predictions with a registered audit (:mod:`omniaudit.audits`); returns its
  :class:`~omniaudit.results.AuditResult`;
- :func:`build` builds a dataset in the Hub layout (``omniaudit build NAME``); returns its folder.

Every function writes its output as the command does (atomically, never over a folder omniaudit did not write
unless ``overwrite=True``, refused while another run writes it) and raises :class:`~omniaudit.errors.InputError`,
naming the option, for input it cannot take.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omniaudit.errors import InputError

if TYPE_CHECKING:
    from omniaudit.evaluation.scorecard import ScorecardOptions
    from omniaudit.results import AuditResult, ScorecardResult

Progress = Callable[[str], None] | None
PathLike = str | Path
# the scorecard's sampling when none is given: what `omniaudit scorecard` passes (greedy, no seed sent)
SAMPLING_DEFAULTS = {"temperature": 0.0, "top_p": None, "seed": None}
NOT_RUNNER_OPTIONS = ("sampling", "seed", "refresh_cache")  # make_judge's keywords that are no runner option

_DB = "omniaudit.data_builders"


@dataclasses.dataclass(frozen=True)
class Builder:
    """How :func:`build` calls one data builder: the function (``module:name``), the parameter its input goes to,
    the option dataclasses whose fields are keywords of :func:`build` (parameter -> ``module:Class``, the first to
    declare a field takes it) and the builder's other keyword parameters."""

    function: str
    source: str
    options: dict[str, str]
    keywords: tuple[str, ...] = ()


BUILDERS = {
    "preference": Builder(f"{_DB}.preference:build_preference_dataset", "data",
                          {"options": f"{_DB}.preference:PreferenceBuildOptions",
                           "spec": f"{_DB}.preference:SyntheticSpec"}, ("columns",)),
    "interventions": Builder(f"{_DB}.interventions:build_interventions_dataset", "manifest",
                             {"options": f"{_DB}.interventions:InterventionBuildOptions",
                              "spec": f"{_DB}.interventions:SyntheticClipSpec"}),
    "protocols": Builder(f"{_DB}.protocols:build_protocols_dataset", "clips",
                         {"options": f"{_DB}.protocols:ProtocolBuildOptions",
                          "spec": f"{_DB}.protocols:SpeechSetSpec",
                          "corpus_options": f"{_DB}.protocols.corpora:CorpusOptions"}, ("corpora",)),
    "composition": Builder(f"{_DB}.composition:build_composition_dataset", "samples",
                           {"options": f"{_DB}.composition:CompositionBuildOptions"}, ("n_synthetic",)),
}


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@contextmanager
def _writing(out: PathLike, overwrite: bool, command: str) -> Iterator[Path]:
    """The output folder checked and locked as the command line does it (``out`` as given; a path without a name,
    such as ``.``, made absolute), under the command's output policy."""
    from omniaudit.io import check_out_dir, output_lock, output_policy

    with output_policy(overwrite=overwrite, command=command):
        path = check_out_dir(out)
        with output_lock(path):
            yield path if Path(out).name in ("", "..") else Path(out)


# ---------------------------------------------------------------------------------------------------- scorecard
def runner_defaults() -> dict[str, Any]:
    """The runner options a model gets when none is given: the defaults of
    :func:`~omniaudit.runners.make_judge`, which are those of the command line's flags."""
    from omniaudit.runners import make_judge

    return {name: p.default for name, p in inspect.signature(make_judge).parameters.items()
            if p.kind is p.KEYWORD_ONLY and name not in NOT_RUNNER_OPTIONS}


def scorecard_options(**options: Any) -> ScorecardOptions:
    """The :class:`~omniaudit.evaluation.scorecard.ScorecardOptions` of :func:`scorecard`: ``omniaudit scorecard``'s
    defaults, with ``options`` set. A key is a field of ``ScorecardOptions`` (``audits``, ``size``, ``references``,
    ``limit``, ``data``, ``baseline``, ...), a runner option (:func:`runner_defaults`: ``batch_size``,
    ``max_tokens``, ``dialect``, ...) or a sampling setting (``temperature``, ``top_p``, ``seed``); ``runner`` and
    ``sampling`` may also be given whole, as dicts of those."""
    from omniaudit.evaluation.scorecard import ScorecardOptions

    runner, sampling = {**runner_defaults(), **options.pop("runner", {})}, {**SAMPLING_DEFAULTS,
                                                                          **options.pop("sampling", {})}
    fields = {f.name for f in dataclasses.fields(ScorecardOptions)} - {"runner", "sampling"}
    chosen: dict[str, Any] = {"references": None}  # what the command passes when --references is not given
    for key, value in options.items():
        if key in fields:
            chosen[key] = value
        elif key in runner:
            runner[key] = value
        elif key in sampling:
            sampling[key] = value
        else:
            raise InputError(f"scorecard takes no option {key!r}; its options: {', '.join(sorted(fields))}; runner "
                             f"options: {', '.join(sorted(runner))}; sampling: {', '.join(sampling)}")
    if isinstance(chosen.get("audits"), str):  # "preference,protocols", as --audits takes them
        chosen["audits"] = [a.strip() for a in chosen["audits"].split(",") if a.strip()]
    for key in ("audits", "from_shards"):
        if chosen.get(key) is not None:
            chosen[key] = tuple(chosen[key])
    return ScorecardOptions(**chosen, runner=runner, sampling=sampling)


def scorecard(models: Mapping[str, str] | Sequence[str], out: PathLike, *, overwrite: bool = False,
              progress: Progress = None, **options: Any) -> ScorecardResult:
    """Take ``models`` through every registered audit whose item modalities they accept and write one shortcut
    scorecard into ``out``, as ``omniaudit scorecard`` does with the same defaults.

    Args:
        models: ``{name: spec}`` (specs as ``omniaudit judge --judge`` takes them: ``hf:PATH``,
            ``openai:MODEL@URL``, ``scripted:NAME``, a runner plugin), or ``NAME=SPEC`` strings.
        out: the card's folder (``datasets/``, ``models/``, ``scorecard.{json,md,html}``); a rerun reuses what is
            complete.
        overwrite: empty ``out`` first and start afresh (also replaces a folder omniaudit did not write).
        progress: called with each progress message (default: quiet).
        **options: see :func:`scorecard_options`, e.g. ``audits=["preference"]``, ``size="small"``,
            ``references="scripted"``, ``limit=20``, ``batch_size=4``, ``temperature=0.7``.

    Returns:
        The card, read back (:class:`~omniaudit.results.ScorecardResult`).

    Raises:
        InputError: an option out of its range, a malformed model spec, an unknown audit.
        CalibrationFailed: a reference model failed its calibration (unless ``allow_uncalibrated=True``); the card
            is written (``ScorecardResult.read(out)``) and marks those verdicts inconclusive.
    """
    from omniaudit.evaluation.scorecard import run_scorecard
    from omniaudit.io import output_policy
    from omniaudit.results import ScorecardResult

    chosen = scorecard_options(**options)
    named = dict(models) if isinstance(models, Mapping) else list(models)
    with output_policy(overwrite=overwrite, command="omniaudit scorecard"):
        folder = run_scorecard(out, named, chosen, progress)
    return ScorecardResult.read(folder or out)


# -------------------------------------------------------------------------------------------------------- audit
def _prediction_files(predictions: Mapping[str, Any] | None) -> dict[str, dict[str, Path]]:
    """``{model: file | [files] | {config: file}}`` as the registry's ``{model: {config: file}}`` (a file's key is
    its name without the suffix)."""
    out: dict[str, dict[str, Path]] = {}
    for model, given in (predictions or {}).items():
        if isinstance(given, Mapping):
            files = {str(c): Path(f) for c, f in given.items()}
        else:
            listed = [given] if isinstance(given, str | Path) else list(given)
            files = {}
            for i, f in enumerate(map(Path, listed)):
                files[f.stem if f.stem not in files else f"{f.stem}-{i}"] = f
        missing = [str(f) for f in files.values() if not f.is_file()]
        if missing:
            raise InputError(f"predictions of {model}: no such file", file=missing[0])
        out[str(model)] = files
    return out


def audit(name: str, *, dataset: PathLike, out: PathLike, predictions: Mapping[str, Any] | None = None,
          n_resamples: int | None = None, partial: bool = False, extracted: bool = True, overwrite: bool = False,
          progress: Progress = None) -> AuditResult:
    """Audit the predictions of one or more models on ``dataset`` with the registered audit ``name``
    (:mod:`omniaudit.audits`: ``preference``, ``interventions``, ``protocols``, ``composition`` or a plugin's), as
    the scorecard runs it, and the benchmark's own analyses beside it.

    Args:
        name: the audit.
        dataset: its built dataset: a folder (``omniaudit.build``) or a Hub repo id.
        out: the audit's folder (``audit.json``, ``report.md``, tables, figures).
        predictions: ``{model: file}``, ``{model: [files]}`` or ``{model: {config: file}}``: the files of
            ``omniaudit judge`` (or any harness's answers in its layout). None: the preference audit audits the
            benchmark alone; the others need a model's answers.
        n_resamples: bootstrap resamples (default: the audit's own).
        partial: the answers are a sample of each config (a ``--limit`` run).
        extracted: count the answers ``omniaudit judge`` read with an extractor or from a reasoning trace
            (``read_by``); False leaves them out (unread), as ``--exclude-extracted``.
        overwrite: replace ``out`` even when omniaudit did not write it.
        progress: called with each progress message.

    Returns:
        The finished audit (:class:`~omniaudit.results.AuditResult`: its folder and parsed ``audit.json``).
    """
    from omniaudit.audits import get
    from omniaudit.results import AuditOptions

    chosen = get(name)  # an unknown audit fails before anything is read
    files = _prediction_files(predictions)
    options = AuditOptions(n_resamples=n_resamples, partial=partial, extracted=extracted, progress=progress)
    with _writing(out, overwrite, f"omniaudit audit {name}") as folder:
        return chosen.audit(folder, dataset, files, options)


# -------------------------------------------------------------------------------------------------------- build
def _option_objects(builder: Builder, options: dict[str, Any]) -> dict[str, Any]:
    """The builder's option dataclasses made from ``options`` (each flat keyword to the first class declaring it;
    an object given whole under its parameter name has the flat keywords applied to it)."""
    made: dict[str, Any] = {}
    taken: set[str] = set()  # the fields of the classes before this one
    for param, path in builder.options.items():
        cls = _load(path)
        names = {f.name for f in dataclasses.fields(cls)} - taken
        taken |= names
        given = {k: options.pop(k) for k in list(options) if k in names}
        whole = options.pop(param, None)
        if whole is not None and not isinstance(whole, cls):
            raise InputError(f"{param} must be a {cls.__name__}", value=whole)
        if whole is not None or given:
            made[param] = dataclasses.replace(whole, **given) if whole is not None else cls(**given)
    return made


def build(name: str, out: PathLike, source: PathLike | None = None, *, size: str | None = None,
          push_to_hub: str | None = None, overwrite: bool = False, progress: Progress = None,
          **options: Any) -> Path:
    """Build dataset ``name`` in the Hub layout into ``out``, as ``omniaudit build NAME`` does with the same
    defaults (without ``source``: the embedded synthetic default).

    Args:
        name: ``preference``, ``interventions``, ``protocols`` or ``composition`` (any other registered audit builds
            its embedded default, by ``size``).
        out: the dataset's folder.
        source: the builder's input: the pairs file (preference), the video manifest (interventions), the clip
            manifest (protocols), the samples file (composition).
        size: instead of ``source`` and ``options``: the audit's embedded default that the scorecard builds
            (``default``, sized by power, or ``small``).
        push_to_hub: also push the dataset to this Hub dataset repo (private).
        overwrite: replace ``out`` even when omniaudit did not write it.
        progress: called with each progress message (the builders that report progress).
        **options: fields of the builder's option classes, by name: preference ``PreferenceBuildOptions``
            (``source_balanced``, ``length_control``, ``dual_order``, ...) then ``SyntheticSpec`` (``n_pairs``,
            ``seed``, ...) and ``columns``; interventions ``InterventionBuildOptions`` (``shifts``, ``seed``, ...)
            then ``SyntheticClipSpec`` (``n_clips``, ...); protocols ``ProtocolBuildOptions`` (``max_trials``,
            ``seed``, ...), ``SpeechSetSpec`` (``sentences_per_cell``, ...), ``CorpusOptions`` and ``corpora``;
            composition ``CompositionBuildOptions`` (``target``, ``seed``, ...) and ``n_synthetic``. A field two
            classes declare goes to the first; give the second whole (``spec=SpeechSetSpec(seed=1)``).

    Returns:
        The dataset's folder.
    """
    builder = BUILDERS.get(name)
    if size is not None or builder is None:
        return _build_default(name, out, size or "default", source, options, overwrite, progress)
    function = _load(builder.function)
    kwargs = _option_objects(builder, options)
    kwargs |= {k: options.pop(k) for k in builder.keywords if k in options}
    if options:
        known = [f.name for path in builder.options.values() for f in dataclasses.fields(_load(path))]
        raise InputError(f"build {name} takes no option {', '.join(map(repr, options))}; its options: "
                         f"{', '.join(sorted({*known, *builder.options, *builder.keywords}))}")
    accepted = inspect.signature(function).parameters
    extra = {"push_repo": push_to_hub, **({"progress": progress} if "progress" in accepted else {})}
    with _writing(out, overwrite, f"omniaudit build {name}") as folder:
        return Path(function(folder, source, **kwargs, **extra))


def _build_default(name: str, out: PathLike, size: str, source: PathLike | None, options: dict, overwrite: bool,
                   progress: Progress) -> Path:
    """The embedded default of a registered audit (:meth:`omniaudit.audits.Audit.build`), as the scorecard builds
    it."""
    from omniaudit.audits import AUDITS, get

    if name not in AUDITS:
        raise InputError(f"no builder of this name; the builders are {', '.join(BUILDERS)} (and any registered "
                         f"audit's default: {', '.join(AUDITS)})", value=name)
    if source is not None or options:
        raise InputError(f"size builds the {name} audit's embedded default: no source or options", value=size)
    with _writing(out, overwrite, f"omniaudit build {name}") as folder:
        return Path(get(name).build(folder, size, progress))
