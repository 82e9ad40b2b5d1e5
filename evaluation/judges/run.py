"""Put a judge in front of a dataset config and write the predictions file every audit reads.

SPEC: ``hf:PATH_OR_REPO`` (local Transformers model), ``openai:MODEL@URL`` (OpenAI-compatible chat server) or
``scripted:NAME`` (reference judges). Predictions (JSONL, one row per item): ``id``, ``order`` (AB / BA for pairwise
trials, else null), ``raw`` (the judge's answer text), ``label`` (the option it names, or null) and ``parsed``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.evaluation.judges.items import load_items, parse_answer
from omniaudit.io import check_out_file, looks_like


def is_predictions_file(path: Path) -> bool:
    """An earlier predictions file of ``omniaudit judge`` (which a rerun may replace)."""
    return looks_like(path, {"id", "order", "raw", "label", "parsed"})


def default_cache() -> Path:
    return Path(os.environ.get("OMNIAUDIT_CACHE", Path.home() / ".cache" / "omniaudit")) / "judge-responses"


def make_judge(spec: str, *, seed: int = 0, batch_size: int = 8, mode: str = "logits", concurrency: int = 4,
               max_retries: int = 5, cache_dir: str | Path | None = None, api_key_env: str = "OPENAI_API_KEY",
               max_tokens: int = 32):
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise InputError("judge must look like hf:PATH_OR_REPO, openai:MODEL@URL or scripted:NAME", value=spec)
    if kind == "scripted":
        from omniaudit.evaluation.judges.scripted import ScriptedJudge

        return ScriptedJudge(rest, seed)
    if kind == "openai":
        from omniaudit.evaluation.judges.openai_compat import OpenAIJudge

        model, at, url = rest.rpartition("@")
        if not at or not model or not url.startswith(("http://", "https://")):
            raise InputError("openai judge must look like openai:MODEL@http(s)://HOST[:PORT]/v1", value=spec)
        return OpenAIJudge(model, url, cache_dir or default_cache(), concurrency=concurrency, max_retries=max_retries,
                           api_key_env=api_key_env, max_tokens=max_tokens)
    if kind == "hf":
        from omniaudit.evaluation.judges.hf import HFJudge

        return HFJudge(rest, batch_size=batch_size, mode=mode, max_new_tokens=max_tokens)
    raise InputError("unknown judge kind; expected hf:, openai: or scripted:", value=spec)


def run_judge(dataset: str | Path, config: str, spec: str, out: str | Path, conditions: list[str] | None = None,
              progress: Callable[[str], None] | None = None, formats: list[str] | None = None,
              **judge_options) -> dict:
    """Judge every item of ``config`` (optionally some conditions / formats) and write ``out`` (atomically).

    Returns counts: items, parsed, HTTP requests and rejected items (remote judges).
    """
    check_out_file(out, is_predictions_file)  # before any judging: never replace a file omniaudit did not write
    items = load_items(dataset, config, conditions, formats)
    judge = make_judge(spec, **judge_options)
    raws = judge.answer(items, progress)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    parsed = 0
    with tmp.open("w", encoding="utf-8") as fh:
        for item, raw in zip(items, raws, strict=True):
            label = parse_answer(raw, item.options)
            parsed += label is not None
            fh.write(json.dumps({"id": item.id, "order": item.order, "raw": raw, "label": label,
                                 "parsed": label is not None}, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
    return {"items": len(items), "parsed": parsed, "requests": getattr(judge, "requests_sent", None),
            "rejected": getattr(judge, "rejected", None)}
