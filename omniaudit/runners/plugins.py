"""Runners from outside omniaudit: a lab's own backend, registered under a spec prefix of its own.

A *runner factory* makes the runner of a spec ``KIND:REST``: ``factory(rest, sampling=Sampling, seed=int | None)``.
It is registered in code (:func:`register_runner`) or shipped in a package as an entry point of the group
``omniaudit.runners`` (name: the kind, value: ``module:factory``)::

    [project.entry-points."omniaudit.runners"]
    mylab = "mylab_omniaudit:make_runner"

then ``omniaudit judge --judge mylab:some-model ...`` and ``omniaudit scorecard --model x=mylab:some-model`` use it.
The runner it returns is a :class:`~omniaudit.runners.base.Runner` (subclass it and declare what it can do), or any
object that keeps this contract (adapted once, when it is made; one line names what is missing):

- ``answer(items, progress=None) -> list[str]``: one answer text per :class:`~.items.JudgeItem`, in order; a closed
  item's text is read as every free-text answer is (:func:`~.reading.read_answer`: doubt is never read as an option);
- ``identity() -> dict``: what answered, recorded in every row's provenance and compared before answers are reused
  or a run resumes: it must change whenever the answers could (weights, revision, served deployment). Its ``kind`` is
  the spec's prefix;
- optional ``accepts``: the input modalities it takes besides text (``{"audio", "image", "video"}``; default none: the
  scorecard skips audits whose items need others), and ``render(item) -> str`` (``--dump-prompts``).

A plugin answers free text only (``--answer-format free``); the built-in kinds ``hf``, ``openai``, ``scripted`` and
``reward`` cannot be replaced.
"""

from __future__ import annotations

from collections.abc import Callable

from omniaudit.errors import InputError
from omniaudit.runners.base import Runner, as_runner

GROUP = "omniaudit.runners"
BUILT_IN = ("hf", "openai", "scripted", "reward")
_REGISTERED: dict[str, Callable] = {}


def register_runner(kind: str, factory: Callable) -> None:
    """Make ``kind:REST`` specs answer through ``factory(rest, sampling=..., seed=...)`` in this process."""
    if kind in BUILT_IN:
        raise InputError(f"'{kind}' is a built-in runner kind and cannot be replaced", value=kind)
    if not kind.isidentifier() or not kind.islower():
        raise InputError("a runner kind is a lower-case identifier (the spec prefix before ':')", value=kind)
    _REGISTERED[kind] = factory


def unregister_runner(kind: str) -> None:
    _REGISTERED.pop(kind, None)


def _entry_point(kind: str) -> Callable | None:
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group=GROUP) if ep.name == kind]
    if not found:
        return None
    try:
        return found[0].load()
    except Exception as exc:  # noqa: BLE001 - a broken plugin is named, not a traceback from its import
        raise InputError(f"the runner plugin '{kind}' ({found[0].value}) failed to load: {type(exc).__name__}: "
                         f"{exc}") from None


def plugin_kinds() -> list[str]:
    """Every plugin kind this process can make: registered ones, then installed entry points."""
    from importlib.metadata import entry_points

    return sorted(set(_REGISTERED) | {ep.name for ep in entry_points(group=GROUP)} - set(BUILT_IN))


def make_plugin_runner(kind: str, rest: str, **options) -> Runner | None:
    """The runner of ``kind:rest`` from a registered factory or an installed entry point, checked against the
    contract; None when no plugin has that kind."""
    factory = _REGISTERED.get(kind) or _entry_point(kind)
    if factory is None:
        return None
    runner = factory(rest, **options)
    missing = [name for name in ("answer", "identity") if not callable(getattr(runner, name, None))]
    if missing:
        raise InputError(f"the runner plugin '{kind}' made a {type(runner).__name__} without {', '.join(missing)}() "
                         "(see omniaudit.runners.plugins)")
    identity = runner.identity()
    if not isinstance(identity, dict) or identity.get("kind") != kind:
        raise InputError(f"the runner plugin '{kind}': identity() must return a dict whose 'kind' is '{kind}'",
                         value=identity)
    return as_runner(runner)
