"""Put a judge in front of a dataset config and write the predictions file every audit reads.

SPEC: ``hf:PATH_OR_REPO`` (local Transformers model), ``openai:MODEL@URL`` (OpenAI-compatible chat server) or
``scripted:NAME`` (reference judges).

Predictions (JSONL, one row per item and sampled run, run-major in the config's item order):

- ``id``, ``order`` (AB / BA for pairwise trials, else null), ``run`` (0-based, ``runs`` per item);
- ``raw``: the answer text;
- ``label``: the option it names (closed items; null when it names none, and always null for free-form items, which
  are generated, never matched against an option list) and ``parsed`` (``label`` is not null; null for free-form);
  ``unread`` (closed items whose text names no option) says why, a reason code of
  :data:`~.reading.REASONS` (``conflict``, ``negated``, ``hedged``, ``reversed``, ``noise``, ...);
- ``option_probs``: option -> probability for closed items where the runner has them (``hf:`` option logits,
  ``openai:`` servers that return logprobs) and the text agrees with them, else null; ``probs_dropped`` (only where
  they were dropped) says why: the text names no option or another one (:func:`~.reading.agreeing_probs`);
- ``answer_path``: how the answer was read. ``free``: no constraint was asked (every free-form item, and closed items
  under ``answer_format="free"``, the default: the papers' prompts and free text), the text read by
  :func:`~.reading.read_answer`; ``constrained``: the server was asked to constrain the reply to the options
  (``answer_format`` ``choice`` / ``json``, ``openai:`` only) and it conforms, so its option is taken as it stands;
  ``unconstrained``: a constraint was asked but the reply does not conform (the server ignored it), read as free text
  (a run warns, :class:`AnswerFormatWarning`); ``option_scores``: the runner scored the options (``hf:`` closed items
  with ``mode="logits"``). A non-default ``answer_format`` is recorded in the provenance's runner settings;
- ``temperature``, ``top_p``, ``seed``: the run's sampling settings (``seed`` is the run's own: seed + run);
- ``served_model`` and ``system_fingerprint``: the chat completion's own ``model`` and ``system_fingerprint`` (what
  the server says answered), only where the server gives them (``openai:``); a run warns (:class:`ServedModelWarning`)
  when a reply names another model than the one asked for, or the server does not list it under ``/models``;
- ``doc_hash`` and ``prompt_hash`` (SHA-256 hex, as lm-evaluation-harness's): the item as the judge saw it and the
  request as rendered for it, with the runner settings that shape it (:func:`~.rows.row_hashes`); the same in every run
  of an item. A resumed run refuses journal answers kept under other hashes, a merge refuses shards that disagree on
  them, and every audit recomputes ``doc_hash`` from the dataset (files written before these fields pass unchecked);
- ``finish_reason`` (``stop``, ``length``, ...; null where the runner does not say) and ``provenance``: the
  dataset build's fingerprint and config, the judge spec (no credentials), the model's identity, the sampling,
  the item selection and the omniaudit version, the same in every row of the run
  (:mod:`omniaudit.predictions`, which every audit checks).

With ``shard=(I, N)`` only shard I of N is judged (:mod:`~omniaudit.runners.shards`) and each row also carries
``shard``; ``merge_predictions`` joins the N files into the unsharded file, byte for byte. Under a multi-process
launcher (``accelerate launch -m omniaudit judge``), :func:`~.data_parallel.judge_data_parallel` runs rank r of N as
shard r/N and merges the parts on the main process. ``limit=N`` (a smoke run) judges only a seeded, stratified sample
of at most N items of the selection, whole groups (:func:`~.shards.limit_positions`); the provenance's selection
records ``limit`` and ``limit_seed`` beside the selection's full ``items``, so every audit sees an incomplete run
(refused unless ``--partial``), and a limited file never merges with a full one.

Every runner is a :class:`~omniaudit.runners.base.Runner` (``hf:``, ``openai:``, ``scripted:`` and the plugins):
``answer(items, progress=None)`` returns one answer per item, in order: a ``str``, or an
:class:`~omniaudit.runners.items.Answer` (a ``str`` with ``option_probs``); a runner may instead give the
probabilities as ``option_probs`` aligned with its last answers, and the answers' paths as ``answer_paths`` (else
``free``; see ``answer_path`` above). What it can do is declared on it (``accepts``, ``renders``, ...), never probed;
``run_judge`` gives it each run's sampling (``set_sampling``).
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omniaudit.answer_language import language
from omniaudit.errors import InputError
from omniaudit.io import check_out_file, output_lock
from omniaudit.predictions import run_provenance
from omniaudit.runners.base import Runner, as_runner
from omniaudit.runners.factory import input_settings, make_judge, request_settings
from omniaudit.runners.identity import runner_identity
from omniaudit.runners.items import JudgeItem, Sampling, load_items
from omniaudit.runners.journal import Journal, check_kept_hashes, drop_empty_journals, journal_path, read_journal
from omniaudit.runners.options import check_limit, check_sampling
from omniaudit.runners.rows import (
    MIN_USABLE,
    UnusableRun,
    check_usable,
    is_predictions_file,
    listed_answer_path,
    listed_option_probs,
    prediction_row,
    row_hashes,
    served_difference,
    served_fields,
    usable,
    write_jsonl,
)
from omniaudit.runners.shards import shard_positions
from omniaudit.runners.transport import redact

CHUNK = 64  # items answered between two journal writes


class ServedModelWarning(UserWarning):
    """A served model's answers may not be the requested model's: a reply names another model, or the server does
    not list the requested one under ``/models``."""


class AnswerFormatWarning(UserWarning):
    """A server ignored the answer format asked (``--answer-format choice`` / ``json``) on some closed items: their
    replies did not conform and were read as free text (rows with ``answer_path: unconstrained``)."""


def _warn(progress: Callable[[str], None] | None, message: str, category: type[Warning] = ServedModelWarning) -> None:
    """A run's warning (default a :class:`ServedModelWarning`), on stderr and, where the run reports progress, there
    too."""
    warnings.warn(message, category, stacklevel=4)  # at the caller of run_judge
    if progress is not None:
        progress(f"warning: {message}")


def _served_note(identity, rows: list[dict]) -> str | None:
    """Why a served model's answers may not be the requested model's (see :class:`ServedModelWarning`), or None."""
    if not isinstance(identity, dict) or "served" not in identity:
        return None
    asked, notes = identity.get("model"), []
    if identity["served"] is None:
        notes.append(f"the server does not list the model {asked!r} under /models (or has none; the predictions' "
                     "provenance records served: null)")
    named = sorted({r["served_model"] for r in rows if r.get("served_model") not in (None, asked)})
    if named:
        notes.append(f"replies name the model {', '.join(map(repr, named))}, not the one asked for ({asked!r}): "
                     "another model may have answered")
    fingerprints = sorted({r["system_fingerprint"] for r in rows if isinstance(r.get("system_fingerprint"), str)})
    if len(fingerprints) > 1:
        notes.append(f"replies come from {len(fingerprints)} deployments (system_fingerprint "
                     f"{', '.join(map(repr, fingerprints))}): the server changed during the run")
    return "; ".join(notes) or None


def _say(progress: Callable[[str], None] | None, done: int, total: int, prefix: str = ""):
    """The runner's "k/n" progress within a chunk, as overall progress."""
    if progress is None:
        return None

    def say(message: str) -> None:
        k, sep, _ = message.partition("/")
        progress(f"{prefix}{done + int(k)}/{total}" if sep and k.isdigit() else f"{prefix}{message}")
    return say


def _served_now(judge: Runner, items: list[JudgeItem], positions: list[int], kept: dict[tuple[int, int], dict],
                base: Sampling) -> dict:
    """What a served model says of itself now: one kept item asked again at its run's sampling, past the response
    cache (a row of its :data:`SERVED_FIELDS`)."""
    run, pos = min((k for k in kept if k[1] in positions), default=(0, positions[0]))
    judge.set_sampling(base.for_run(run))
    refresh, judge.refresh_cache = judge.refresh_cache, True
    try:
        answers = judge.answer([items[positions.index(pos)]])
    finally:
        judge.refresh_cache = refresh
    return served_fields(answers[0]) if answers else {}


def run_judge(dataset: str | Path, config: str, spec: str, out: str | Path, conditions: list[str] | None = None,
              progress: Callable[[str], None] | None = None, formats: list[str] | None = None, *,
              temperature: float = 0.0, top_p: float | None = None, seed: int | None = None, runs: int = 1,
              shard: tuple[int, int] | None = None, min_usable: float = MIN_USABLE, dump_prompts: bool = False,
              limit: int | None = None, keep_journal: bool = False, extractor: str | None = None,
              read_reasoning: bool = False, **judge_options) -> dict:
    """Judge every item of ``config`` (optionally some conditions / formats; only a seeded sample of at most ``limit``
    items of that selection, :func:`~.shards.limit_positions`; shard I of N of those) ``runs`` times and write
    ``out`` (atomically, only after every answer is in).

    Answers are kept as they come in a journal beside ``out`` (chunks of :data:`CHUNK` items), so a killed run
    restarts where it stopped (for every runner; ``openai:`` also has its response cache). ``out``'s
    :func:`~omniaudit.io.output_lock` is held for the whole run, journal included: a second run on the same file
    (another process or thread) is refused at once with an InputError and writes nothing; a killed run's lock is
    released with its process. The journal is created with the first answer, so a run that writes nothing
    (refused, failed or interrupted before its first answer) leaves no journal. ``keep_journal``: keep the journal
    after ``out`` is written (its path in the counts, ``journal``), so a rerun resumes every answer without asking
    again (a data-parallel rank's part, removed by the main process after the merge). A run whose answers are
    mostly unusable (fewer than ``min_usable``, see :func:`check_usable`) writes nothing and raises UnusableRun.
    Every row records its provenance (:mod:`omniaudit.predictions`). ``dump_prompts`` adds a column
    ``rendered_prompt``: the exact prompt of the item as the runner sends it (its ``render(item)``: ``hf:`` the chat
    template's text, ``openai:`` the JSON messages with media as stand-ins without bytes), as lmms-eval's logged
    samples keep theirs.

    Returns counts: items, runs, rows, closed / parsed / with option probabilities, the answer format and the closed
    answers per ``answer_path``, free-form / generated (non-empty), resumed answers, and for remote judges HTTP
    requests, rejected items and replies that were not completions. Closed answers whose server ignored the answer
    format asked warn once (:class:`AnswerFormatWarning`).

    ``extractor``: a runner SPEC that reads the closed replies the rules did not understand (:mod:`~.rescue`); the
    rows it reads say ``read_by: extractor``. ``read_reasoning``: a closed reply that is deliberation only (a
    concluded trace, no visible answer) is read from its trace (:func:`~.rescue.read_traces`, ``read_by:
    reasoning``), before any extractor.
    """
    with output_lock(out):  # from before the first answer to after the final write: one run per output file
        try:
            return _run_judge(dataset, config, spec, out, conditions, progress, formats, temperature=temperature,
                              top_p=top_p, seed=seed, runs=runs, shard=shard, min_usable=min_usable,
                              dump_prompts=dump_prompts, limit=limit, keep_journal=keep_journal, extractor=extractor,
                              read_reasoning=read_reasoning, **judge_options)
        finally:  # a run stopped before its first answer (refused, failed, interrupted) leaves no empty journal
            drop_empty_journals(Path(out))


def _run_judge(dataset: str | Path, config: str, spec: str, out: str | Path, conditions: list[str] | None,
               progress: Callable[[str], None] | None, formats: list[str] | None, *, temperature: float,
               top_p: float | None, seed: int | None, runs: int, shard: tuple[int, int] | None, min_usable: float,
               dump_prompts: bool, limit: int | None, keep_journal: bool, extractor: str | None = None,
               read_reasoning: bool = False, **judge_options) -> dict:
    """:func:`run_judge`'s work, under ``out``'s lock."""
    from omniaudit.data_builders.fingerprint import fingerprint_of

    check_out_file(out, is_predictions_file)  # before any judging: never replace a file omniaudit did not write
    check_sampling(temperature, top_p, runs)
    if not 0 <= min_usable <= 1:
        raise InputError("min_usable must be in [0, 1]", value=min_usable)
    check_limit(limit)
    items, positions, selection, n_run = _select_items(dataset, config, conditions, formats, limit, seed, shard)
    base = Sampling(temperature, top_p, seed)
    judge = as_runner(make_judge(spec, sampling=base, **judge_options))
    if dump_prompts and not judge.renders:
        raise InputError(f"{redact(spec)} cannot render its prompts (its runner declares no render): run without "
                         "--dump-prompts")
    sampling = {"temperature": temperature, "top_p": top_p, "seed": seed, "runs": runs,
                "max_tokens": judge_options.get("max_tokens", 32)}
    provenance = run_provenance(dataset, config, fingerprint_of(dataset, config), redact(spec),
                                runner_identity(judge), sampling, selection, input_settings(spec, judge_options))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    journal = journal_path(out, provenance, shard)
    settings = request_settings(spec, judge_options)
    hashed: dict[int, dict[str, str]] = {}  # position -> the item's row hashes, the same in every run

    def hashes(i: int) -> dict[str, str]:
        if i not in hashed:
            hashed[i] = row_hashes(judge, items[i], settings)
        return hashed[i]
    kept = _resumable(journal, out, judge, spec, items, positions, base, hashes, progress)
    resumed = len(kept)
    with Journal(journal, append=bool(kept)) as log:
        for run in range(runs):
            _answer_run(judge, spec, items, positions, base.for_run(run), run, runs, kept, log, provenance, hashes,
                        progress)
    rendered: dict[int, str] = {}  # position -> the item's rendered prompt (--dump-prompts), the same in every run
    rows, asked = [], []
    for run in range(runs):
        for i in range(len(items)):
            row = dict(kept[(run, positions[i])])
            asked.append(items[i])
            if dump_prompts:
                if i not in rendered:
                    rendered[i] = judge.render(items[i])
                row["rendered_prompt"] = rendered[i]
            if shard:
                row["shard"] = {"index": shard[0], "count": shard[1], "items": n_run, "position": positions[i]}
            rows.append(row)
    rows = _settle_served_model(judge, spec, provenance, rows, progress)
    _rescue(list(zip(rows, asked, strict=True)), read_reasoning, extractor, progress, judge_options)
    _warn_ignored_format(judge, spec, rows, judge_options.get("answer_format", "free"), progress)
    try:
        if not spec.startswith("scripted:"):  # reference models refuse by design (e.g. copy-reference, no reference)
            check_usable(rows, spec, min_usable)
    except UnusableRun:
        journal.unlink(missing_ok=True)  # the model's answers, not an interruption: a rerun asks again
        raise
    write_jsonl(out, rows)
    if not keep_journal:
        journal.unlink(missing_ok=True)
    return {**_run_summary(rows, judge, judge_options.get("answer_format", "free")), "items": len(items),
            "runs": runs, "resumed": resumed, "shard": f"{shard[0]}/{shard[1]}" if shard else None,
            "selected": selection["items"], "limit": selection.get("limit"),
            **({"journal": str(journal)} if keep_journal else {})}


def _rescue(pairs: list[tuple[dict, JudgeItem]], read_reasoning: bool, extractor: str | None, progress,
            judge_options: dict) -> None:
    """The closed rows the rules left unread, read from a concluded trace (``read_reasoning``) and then by the
    ``extractor`` (:mod:`~.rescue`), in place."""
    from omniaudit.runners.rescue import read_traces, rescue_unread

    if read_reasoning:
        read_traces(pairs)
    if extractor:
        rescue_unread(pairs, extractor, progress,
                      **{k: v for k, v in judge_options.items() if k in ("cache_dir", "api_key_env", "dialect")})


def _select_items(dataset: str | Path, config: str, conditions: list[str] | None, formats: list[str] | None,
                  limit: int | None, seed: int | None, shard: tuple[int, int] | None
                  ) -> tuple[list[JudgeItem], list[int], dict, int]:
    """(this shard's items, their positions in the run, the selection the provenance records, the run's items)."""
    items = load_items(dataset, config, conditions, formats)
    selection: dict[str, Any] = {"conditions": conditions, "formats": formats, "items": len(items)}
    if limit is not None and limit < len(items):  # a smoke run: a seeded sample (a larger limit changes nothing)
        from omniaudit.runners.shards import limit_positions

        sample_seed = 0 if seed is None else seed
        sample = [items[p] for p in limit_positions(items, limit, sample_seed)]
        if not sample:  # every group is larger than the limit (both orders of a pair stay together)
            raise InputError(f"--limit {limit} holds no whole item group of config '{config}' (the orders of one "
                             "trial are judged together): raise --limit", value=limit)
        items = sample
        selection["limit"], selection["limit_seed"] = limit, sample_seed
    positions = shard_positions(items, *shard) if shard else list(range(len(items)))
    return [items[p] for p in positions], positions, selection, len(items)


def _resumable(journal: Path, out: Path, judge, spec: str, items: list[JudgeItem], positions: list[int],
               base: Sampling, hashes: Callable[[int], dict[str, str]], progress) -> dict[tuple[int, int], dict]:
    """The answers a killed run left in its journal that still stand: (run, position) -> row; none when the server's
    model changed since (never two served models in one file); their row hashes are checked against the items."""
    lines: dict[tuple[int, int], int] = {}
    kept = read_journal(journal, lines)
    if kept and spec.startswith("openai:"):
        differ = served_difference(kept.values(), [_served_now(judge, items, positions, kept, base)])
        if differ:
            _warn(progress, f"{redact(spec)}: the server's model changed since the answers kept in {journal.name} "
                            f"({differ}): not resumed, every item is asked afresh")
            judge.refresh_cache = True  # the response cache holds the old model's replies too
            return {}
    if kept:
        judge.prepare(items)  # e.g. --dialect auto: decided on every item, as the run was
        index = {p: i for i, p in enumerate(positions)}
        kept = {k: row for k, row in kept.items() if k[1] in index}  # (the journal is this shard's: all are)
        check_kept_hashes(kept, lines, journal, out, lambda pos: hashes(index[pos]))
    return kept


def _answer_run(judge, spec: str, items: list[JudgeItem], positions: list[int], run_sampling: Sampling, run: int,
                runs: int, kept: dict, log, provenance: dict, hashes: Callable[[int], dict[str, str]],
                progress) -> None:
    """Answer run ``run``'s items not yet kept, a chunk at a time, each row journaled as it comes."""
    judge.set_sampling(run_sampling)
    prefix = "" if runs == 1 else f"run {run + 1}/{runs}: "
    todo = [i for i in range(len(items)) if (run, positions[i]) not in kept]
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start:start + CHUNK]
        done = len(items) - len(todo) + start
        answers = judge.answer([items[i] for i in chunk], _say(progress, done, len(items), prefix))
        if len(answers) != len(chunk):
            raise InputError(f"{spec} returned {len(answers)} answers for {len(chunk)} items")
        for k, (i, answer) in enumerate(zip(chunk, answers, strict=True)):
            row = prediction_row(items[i], answer, run_sampling, listed_option_probs(judge, answers, k), provenance,
                                 getattr(answer, "finish_reason", None), served_fields(answer),
                                 listed_answer_path(judge, answers, k), hashes(i))
            kept[(run, positions[i])] = row
            log.write(json.dumps({"run": run, "pos": positions[i], "row": row}, ensure_ascii=False) + "\n")
        log.flush()


def _settle_served_model(judge, spec: str, provenance: dict, rows: list[dict], progress) -> list[dict]:
    """The rows with the served model as the server named it once the run is done (see runner_identity), and a
    warning when it is unlisted or differs from the one asked for."""
    model = provenance["model"]
    if isinstance(model, dict) and "served" in model and model["served"] is None:
        final = {**provenance, "model": runner_identity(judge, refresh=True)}
        rows = [{**row, "provenance": final} for row in rows]
        model = final["model"]
    note = _served_note(model, rows)
    if note:
        _warn(progress, f"{redact(spec)}: {note}")
    return rows


def _warn_ignored_format(judge, spec: str, rows: list[dict], answer_format: str, progress) -> None:
    ignored = sum(r.get("answer_path") == "unconstrained" for r in rows)
    if ignored:
        where = redact(judge.where or spec)
        _warn(progress, f"the server at {where} ignored --answer-format {answer_format} on {ignored} of "
                        f"{sum(r['parsed'] is not None for r in rows)} closed answers; their text was read as free "
                        "text", AnswerFormatWarning)


def _run_summary(rows: list[dict], judge, answer_format: str) -> dict:
    """What a judge run answered: rows, closed and parsed answers, probabilities, unread reasons, requests."""
    closed = [r for r in rows if r["parsed"] is not None]
    free = [r for r in rows if r["parsed"] is None]
    return {"rows": len(rows), "closed": len(closed), "parsed": sum(r["parsed"] for r in closed),
            "with_probs": sum(r["option_probs"] is not None for r in closed),
            "probs_dropped": sum("probs_dropped" in r for r in closed),
            "unread": dict(sorted(Counter(r["unread"] for r in closed if r.get("unread")).items())),
            "languages": dict(Counter(language(r["raw"]) for r in closed if r.get("unread") == "language")
                              .most_common()),
            "reasoning": sum("reasoning_chars" in r for r in rows),
            "extracted": sum(r.get("read_by") == "extractor" for r in closed),
            "from_reasoning": sum(r.get("read_by") == "reasoning" for r in closed),
            "answer_format": answer_format,
            "answer_paths": dict(sorted(Counter(r.get("answer_path", "free") for r in closed).items())),
            "free_form": len(free), "generated": sum(bool(r["raw"].strip()) for r in free),
            "usable": sum(map(usable, rows)),
            "requests": judge.requests_sent, "rejected": judge.rejected, "not_completions": judge.not_completions}


def answer_again(dataset: str | Path, config: str, spec: str, picks: list[tuple[int, int]], *,
                 temperature: float = 0.0, top_p: float | None = None, seed: int | None = None,
                 **judge_options) -> list[dict]:
    """Ask ``spec`` again for some answers of a run of ``config``, as :func:`run_judge` asked them: ``picks`` are
    (run, position) pairs (position: the item's place in the config's item order), each asked at its run's sampling
    by the same runner and read the same way (:func:`prediction_row`). Returns their rows (without provenance) in the
    order of ``picks``; nothing is written. The scorecard's canary: a kept predictions file of a served model is
    checked against what the server answers now."""
    check_sampling(temperature, top_p)
    items = load_items(dataset, config)
    base = Sampling(temperature, top_p, seed)
    judge = as_runner(make_judge(spec, sampling=base, **judge_options))
    rows: dict[tuple[int, int], dict] = {}
    for run in sorted({r for r, _ in picks}):
        sampling = base.for_run(run)
        judge.set_sampling(sampling)
        positions = [p for r, p in picks if r == run]
        answers = judge.answer([items[p] for p in positions])
        if len(answers) != len(positions):
            raise InputError(f"{redact(spec)} returned {len(answers)} answers for {len(positions)} items")
        for k, p in enumerate(positions):
            rows[(run, p)] = prediction_row(items[p], answers[k], sampling, listed_option_probs(judge, answers, k),
                                            served=served_fields(answers[k]),
                                            path=listed_answer_path(judge, answers, k))
    return [rows[pick] for pick in picks]


