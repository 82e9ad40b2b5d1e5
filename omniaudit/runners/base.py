"""The one runner contract. Every runner (``hf:``, ``openai:``, ``scripted:`` and the plugins) is a :class:`Runner`:
it answers items and says what answers; what it can do beyond that is declared, never probed.

- ``answer(items, progress)``: one answer per item, in order (text, or an :class:`~.items.Answer` with option
  probabilities, finish reason and the served model);
- ``identity()``: what answers (``kind`` and ``model``; a server also its ``served`` model), recorded in every row's
  provenance and compared before answers are reused;
- ``accepts``: the media kinds it encodes besides text (``audio``, ``image``, ``video``, ``video+audio``); items
  carrying others are refused before any call;
- ``renders``: ``render(item)`` gives the request as it is sent (``--dump-prompts``, a row's ``prompt_hash``);
- ``set_sampling(sampling)``: the run's temperature, top-p and seed, before each run;
- ``prepare(items)``: settle what depends on the items before answering or resuming (``--dialect auto``);
- ``refresh_cache``: a runner with a response cache asks past it while this is set;
- after ``answer``: ``answer_paths`` and ``option_probs`` (aligned with the last answers, where it knows them) and,
  for a served runner, ``requests_sent``, ``rejected``, ``not_completions`` and ``where`` (its URL).

A runner that cannot answer the items as asked raises :class:`RefusedItems`.
"""

from __future__ import annotations

from typing import Any

from omniaudit.errors import InputError
from omniaudit.runners.items import JudgeItem, Sampling


class RefusedItems(InputError):
    """A runner that cannot answer the items as asked (an option-picking scripted model on free-form items, a server
    rejecting them): the model does not answer them, no option or input of the run is wrong."""


class Runner:
    """Base of every runner (see the module docstring)."""

    accepts: frozenset[str] | set[str] = frozenset()
    renders: bool = False
    refresh_cache: bool = False  # a runner with a response cache asks past it while set
    sampling: Sampling | None = None
    answer_paths: list[str] | None = None  # per answer of the last call: free, constrained or unconstrained
    option_probs: list | None = None  # per answer of the last call: its option probabilities, where separate
    requests_sent: int | None = None
    rejected: int | None = None
    not_completions: int | None = None
    where: str | None = None  # a served runner's URL (credentials redacted by whoever shows it)

    def answer(self, items: list[JudgeItem], progress=None) -> list[Any]:
        raise NotImplementedError

    def identity(self, refresh: bool = False) -> dict:
        raise NotImplementedError

    def render(self, item: JudgeItem) -> str:
        raise InputError(f"{type(self).__name__} cannot render its prompts (it declares renders = False): run "
                         "without --dump-prompts")

    def set_sampling(self, sampling: Sampling) -> None:
        self.sampling = sampling

    def prepare(self, items: list[JudgeItem]) -> None:
        """Settle what depends on the items before answering or resuming them (nothing by default)."""


class PluginRunner(Runner):
    """A runner that does not subclass :class:`Runner` (a plugin written against the duck-typed contract), adapted
    once, when it is made: its ``answer`` and ``identity``, and its ``accepts`` and ``render`` where it has them."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.accepts = frozenset(getattr(inner, "accepts", ()) or ())
        self.renders = callable(getattr(inner, "render", None))

    def render(self, item: JudgeItem) -> str:
        return self.inner.render(item) if self.renders else super().render(item)

    def set_sampling(self, sampling: Sampling) -> None:
        """The run's sampling, also on the adapted object (its ``sampling``, as runners have always been given it)."""
        self.sampling = sampling
        self.inner.sampling = sampling

    def answer(self, items: list[JudgeItem], progress=None) -> list[Any]:
        return self.inner.answer(items, progress)

    def identity(self, refresh: bool = False) -> dict:
        return self.inner.identity()


def as_runner(judge: Any) -> Runner:
    """``judge`` as a :class:`Runner`: itself when it is one, else wrapped (:class:`PluginRunner`)."""
    return judge if isinstance(judge, Runner) else PluginRunner(judge)
