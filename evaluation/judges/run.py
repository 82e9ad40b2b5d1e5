"""Put a judge in front of a dataset config and write the predictions file every audit reads.

SPEC: ``hf:PATH_OR_REPO`` (local Transformers model), ``openai:MODEL@URL`` (OpenAI-compatible chat server) or
``scripted:NAME`` (reference judges).

Predictions (JSONL, one row per item and sampled run, run-major in the config's item order):

- ``id``, ``order`` (AB / BA for pairwise trials, else null), ``run`` (0-based, ``runs`` per item);
- ``raw``: the answer text;
- ``label``: the option it names (closed items; null when it names none, and always null for free-form items, which
  are generated, never matched against an option list) and ``parsed`` (``label`` is not null; null for free-form);
- ``option_probs``: option -> probability for closed items where the runner has them (``hf:`` option logits,
  ``openai:`` servers that return logprobs), else null;
- ``temperature``, ``top_p``, ``seed``: the run's sampling settings (``seed`` is the run's own: seed + run).

With ``shard=(I, N)`` only shard I of N is judged (:mod:`~omniaudit.evaluation.judges.shards`) and each row also
carries ``shard``; ``merge_predictions`` joins the N files into the unsharded file, byte for byte.

Runner protocol (``hf:``, ``openai:``, ``scripted:``): ``answer(items, progress=None)`` returns one answer per item,
in order: a ``str``, or an :class:`~omniaudit.evaluation.judges.items.Answer` (a ``str`` with ``option_probs``); a
runner may instead expose the probabilities as a list attribute ``option_probs`` aligned with its last answers. The
runner reads its sampling settings from its ``sampling`` attribute (:class:`Sampling`; ``hf:`` from its
``temperature`` / ``top_p`` / ``seed``), which ``run_judge`` sets before each run (:func:`apply_sampling`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.evaluation.judges.items import JudgeItem, Sampling, load_items, parse_answer
from omniaudit.evaluation.judges.shards import shard_positions
from omniaudit.io import check_out_file, looks_like


def is_predictions_file(path: Path) -> bool:
    """An earlier predictions file of ``omniaudit judge`` (which a rerun may replace)."""
    return looks_like(path, {"id", "order", "raw", "label", "parsed"})


def default_cache() -> Path:
    return Path(os.environ.get("OMNIAUDIT_CACHE", Path.home() / ".cache" / "omniaudit")) / "judge-responses"


def check_sampling(temperature: float, top_p: float | None, runs: int = 1) -> None:
    if not (temperature >= 0 and temperature == temperature):
        raise InputError("temperature must be >= 0", value=temperature)
    if top_p is not None and not 0 < top_p <= 1:
        raise InputError("top_p must be in (0, 1]", value=top_p)
    if runs < 1:
        raise InputError("runs must be >= 1", value=runs)


def make_judge(spec: str, *, sampling: Sampling | None = None, seed: int | None = None, batch_size: int = 8,
               mode: str = "logits", concurrency: int = 4, max_retries: int = 5, cache_dir: str | Path | None = None,
               use_cache: bool = True, api_key_env: str = "OPENAI_API_KEY", max_tokens: int = 32,
               dialect: str = "vllm", timeout_s: float = 120.0, top_logprobs: int = 10, fps: float = 2.0,
               max_frames: int = 32):
    """A runner for ``spec``. ``sampling`` (default: greedy, with ``seed``) is what it samples with."""
    sampling = sampling or Sampling(seed=seed)
    check_sampling(sampling.temperature, sampling.top_p)
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError("judge must look like hf:PATH_OR_REPO, openai:MODEL@URL or scripted:NAME", value=spec)
    if kind == "scripted":
        from omniaudit.evaluation.judges.scripted import ScriptedJudge

        return ScriptedJudge(rest, sampling=sampling)
    if kind == "openai":
        from omniaudit.evaluation.judges.openai_compat import OpenAIJudge

        model, at, url = rest.rpartition("@")
        if not at or not model or not url.startswith(("http://", "https://")):
            raise InputError("openai judge must look like openai:MODEL@http(s)://HOST[:PORT]/v1", value=spec)
        return OpenAIJudge(model, url, (cache_dir or default_cache()) if use_cache else None,
                           concurrency=concurrency, max_retries=max_retries, timeout_s=timeout_s,
                           max_tokens=max_tokens, api_key_env=api_key_env, dialect=dialect, sampling=sampling,
                           top_logprobs=top_logprobs, fps=fps, max_frames=max_frames)
    if kind == "hf":
        from omniaudit.evaluation.judges.hf import HFJudge

        judge = HFJudge(rest, batch_size=batch_size, mode=mode, max_new_tokens=max_tokens, fps=fps,
                        max_frames=max_frames)
        apply_sampling(judge, sampling)
        return judge
    raise InputError("unknown judge kind; expected hf:, openai: or scripted:", value=spec)


def apply_sampling(judge, sampling: Sampling) -> None:
    """Give a runner the run's sampling settings: its ``sampling`` attribute (``openai:``, ``scripted:``), and for
    ``hf:``, which reads ``temperature`` / ``top_p`` / ``seed`` attributes, those (a local sampler always needs a
    seed: without one, run r uses r)."""
    judge.sampling = sampling
    if hasattr(judge, "temperature"):
        judge.temperature = sampling.temperature
        judge.top_p = 1.0 if sampling.top_p is None else sampling.top_p
        judge.seed = sampling.seed if sampling.seed is not None else sampling.run


def _option_probs(judge, answers: list, i: int) -> dict[str, float] | None:
    probs = getattr(answers[i], "option_probs", None)
    if probs is None:
        listed = getattr(judge, "option_probs", None)
        if isinstance(listed, list) and len(listed) == len(answers):
            probs = listed[i]
    return {str(k): float(v) for k, v in probs.items()} if probs else None


def prediction_row(item: JudgeItem, raw: str, sampling: Sampling, probs: dict[str, float] | None) -> dict:
    """One predictions row (see the module docstring)."""
    raw = str(raw)
    label = None
    if item.closed:
        label = parse_answer(raw, item.options)
        if label is None and probs and not raw.strip():  # a runner that scored the options without writing text
            label = max(item.options, key=lambda o: probs.get(o, 0.0))
    else:
        probs = None  # a free-form item is never scored against options
    record = sampling.record()
    return {"id": item.id, "order": item.order, "run": record.pop("run"), "raw": raw, "label": label,
            "parsed": (label is not None) if item.closed else None, "option_probs": probs, **record}


def run_judge(dataset: str | Path, config: str, spec: str, out: str | Path, conditions: list[str] | None = None,
              progress: Callable[[str], None] | None = None, formats: list[str] | None = None, *,
              temperature: float = 0.0, top_p: float | None = None, seed: int | None = None, runs: int = 1,
              shard: tuple[int, int] | None = None, **judge_options) -> dict:
    """Judge every item of ``config`` (optionally some conditions / formats; shard I of N) ``runs`` times and write
    ``out`` (atomically, only after every answer is in).

    Returns counts: items, runs, rows, closed / parsed / with option probabilities, free-form / generated (non-empty),
    and for remote judges HTTP requests, rejected items and replies that were not completions.
    """
    check_out_file(out, is_predictions_file)  # before any judging: never replace a file omniaudit did not write
    check_sampling(temperature, top_p, runs)
    items = load_items(dataset, config, conditions, formats)
    n_items = len(items)
    positions = shard_positions(items, *shard) if shard else list(range(n_items))
    items = [items[p] for p in positions]
    base = Sampling(temperature, top_p, seed)
    judge = make_judge(spec, sampling=base, **judge_options)
    rows = []
    for run in range(runs):
        sampling = base.for_run(run)
        apply_sampling(judge, sampling)
        say = progress if runs == 1 or progress is None else (lambda m, r=run: progress(f"run {r + 1}/{runs}: {m}"))
        answers = judge.answer(items, say)
        if len(answers) != len(items):
            raise InputError(f"{spec} returned {len(answers)} answers for {len(items)} items")
        for i, (item, answer) in enumerate(zip(items, answers, strict=True)):
            row = prediction_row(item, answer, sampling, _option_probs(judge, answers, i))
            if shard:
                row["shard"] = {"index": shard[0], "count": shard[1], "items": n_items, "position": positions[i]}
            rows.append(row)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    closed = [r for r in rows if r["parsed"] is not None]
    free = [r for r in rows if r["parsed"] is None]
    return {"items": len(items), "runs": runs, "rows": len(rows), "closed": len(closed),
            "parsed": sum(r["parsed"] for r in closed),
            "with_probs": sum(r["option_probs"] is not None for r in closed),
            "free_form": len(free), "generated": sum(bool(r["raw"].strip()) for r in free),
            "requests": getattr(judge, "requests_sent", None), "rejected": getattr(judge, "rejected", None),
            "not_completions": getattr(judge, "not_completions", None),
            "shard": f"{shard[0]}/{shard[1]}" if shard else None}
