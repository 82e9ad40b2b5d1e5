"""SFT-policy negatives (SP): the SFT model's own wrong answers as the rejected side of DPO pairs (Thud appendix A.3).

"Given the same video-question input, we use the reference annotation as the chosen response and treat the SFT
model's incorrect or shortcut-prone output as the rejected response." The policy (any runner SPEC: ``hf:`` the SFT
checkpoint, ``openai:`` a vLLM server holding it, ``scripted:``; or a runner object with ``answer(items)`` in the
Python API; or a predictions file it already wrote with ``omniaudit judge``) answers every item of an intervention
dataset's ``diagnostic`` config (the clip with its own soundtrack + the dimension's question), ``runs`` times with
``temperature`` sampling. Each answer is scored as the intervention audit scores it (the rule-based extractor, or an
``extractor`` judge SPEC as the paper's GPT extractor, then the audit's own correctness rule: a Shift answer needs "not
synchronized" and the right direction). An answer that is

- correct is left out;
- wrong (its fields were read and contradict the target) becomes a pair;
- unparsed (non-empty, but the extractor could not read a verdict: a hedge, a description without one) becomes a pair
  too, as the audit counts it wrong, unless ``parsed_only``;
- empty, or missing from a predictions file, is left out (there is no response to reject).

A policy with no wrong answer gives no pairs: that is an error (nothing is written), not an empty dataset.

A pair is ``chosen`` = the reference answer (``gold``), ``rejected`` = the policy's answer, with the item's clip; the
same answer text sampled in several runs of one item gives one pair. Output: the Hub layout with config ``dpo`` in
exactly the columns and types of ``omniaudit build interventions``' ``dpo`` config (``kind`` = ``sp``, ``id`` =
``<diagnostic id>/sp/<run>``), so a dataset mixture can combine both; plus ``policy_predictions.jsonl`` (the answers
scored) and ``build_info.json`` (counts and settings).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError

CONFIG = "dpo"
SPLIT = "train"
PREDICTIONS = "policy_predictions.jsonl"
BUILD_INFO = "build_info.json"
# what a pair needs from the diagnostic config besides the audit's target columns
ITEM_COLUMNS = ("prompt", "gold", "visual_time", "audio_time", "video")
VERDICT_FIELD = {"sync": "synced", "existence": "audio_state", "consistency": "match"}


@dataclass(frozen=True)
class SPOptions:
    """How the policy is sampled and which answers become pairs."""

    runs: int = 1
    temperature: float = 1.0  # the policy's own distribution, as on-policy negatives are sampled
    top_p: float | None = None
    seed: int = 0
    parsed_only: bool = False  # only answers whose (wrong) verdict the extractor read
    extractor: str | None = None  # judge SPEC for free-form answers (default: the rule-based extractor)


def answer_text(answer: object) -> str:
    """A runner's answer as text: a ``str`` (or ``Answer``), or an object carrying it in ``.raw``."""
    raw = getattr(answer, "raw", answer)
    return "" if raw is None else str(raw)


def sample_policy(dataset: str | Path, policy, out: str | Path, options: SPOptions = SPOptions(),
                  progress: Callable[[str], None] | None = None, **runner_options) -> Path:
    """Write the policy's answers to every ``diagnostic`` item as an ``omniaudit judge`` predictions file.

    ``policy``: a runner SPEC (through :func:`~omniaudit.runners.run_judge`, ``runner_options`` going to
    the runner: ``max_tokens``, ``batch_size``, ``fps``, ...) or a runner object (``answer(items, progress)``)."""
    from omniaudit.io import atomic_file
    from omniaudit.runners import Sampling, load_items, run_judge
    from omniaudit.runners.base import as_runner
    from omniaudit.runners.options import check_sampling
    from omniaudit.runners.rows import prediction_row

    out = Path(out)
    if isinstance(policy, str):
        run_judge(dataset, "diagnostic", policy, out, progress=progress, temperature=options.temperature,
                  top_p=options.top_p, seed=options.seed, runs=options.runs, **runner_options)
        return out
    if not callable(getattr(policy, "answer", None)):
        raise InputError("the policy must be a runner SPEC (hf:PATH, openai:MODEL@URL, scripted:NAME) or an object "
                         "with answer(items)", value=type(policy).__name__)
    check_sampling(options.temperature, options.top_p, options.runs)
    runner = as_runner(policy)
    items = load_items(dataset, "diagnostic")
    base = Sampling(options.temperature, options.top_p, options.seed)
    rows = []
    for run in range(options.runs):
        sampling = base.for_run(run)
        runner.set_sampling(sampling)
        answers = runner.answer(items, progress)
        if len(answers) != len(items):
            raise InputError(f"the policy returned {len(answers)} answers for {len(items)} items")
        rows += [prediction_row(item, answer_text(a), sampling, None) for item, a in zip(items, answers, strict=True)]
    with atomic_file(out) as tmp:
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def score_answers(predictions: str | Path, diagnostic: pd.DataFrame, options: SPOptions = SPOptions(),
                  **judge_options) -> pd.DataFrame:
    """One row per (diagnostic row, run) of the predictions file: ``id``, ``run``, ``text`` (the answer), ``verdict``
    (correct / wrong / unparsed / empty / missing), scored exactly as the intervention audit scores answers."""
    from omniaudit.data_builders.interventions.diagnostic_answers import (
        TEXT_COLUMNS,
        answers_correct,
        read_predictions,
    )

    path = Path(predictions)
    pred = read_predictions(path, diagnostic, options.extractor, **judge_options)
    if pred.attrs["answer_column"] is None:
        raise InputError(f"the predictions have no answer text ({' or '.join(TEXT_COLUMNS)}), so there is no "
                         f"response to reject; the file has only structured fields", file=path)
    if "run" not in pred.columns:
        pred["run"] = "0"
    merged = pred.merge(diagnostic, on="id", how="left")  # left merge keeps the predictions' (row, run) order
    correct = answers_correct(merged, merged)
    merged["text"] = [answer_text(_none(t)) for t in merged["text"]]
    verdict_field = merged["dimension"].map(VERDICT_FIELD)
    read = np.array([merged.at[k, f] is not None and merged.at[k, f] == merged.at[k, f]
                     for k, f in zip(merged.index, verdict_field, strict=True)], dtype=bool)
    answered = merged["answered"].to_numpy(dtype=bool)
    empty = merged["text"].str.strip().eq("").to_numpy()
    merged["verdict"] = np.select([~answered, correct, empty, ~read], ["missing", "correct", "empty", "unparsed"],
                                  "wrong")
    return merged[["id", "run", "text", "verdict"]]


def _diagnostic(dataset: str | Path):
    """The diagnostic config with its clips left encoded, and its metadata (no clips) as pandas."""
    import datasets

    from omniaudit.data_builders.hub import load_hub_dataset
    from omniaudit.data_builders.interventions.diagnostic_answers import DIAGNOSTIC_COLUMNS

    ds = load_hub_dataset(dataset, "diagnostic")
    missing = [c for c in (*DIAGNOSTIC_COLUMNS, *ITEM_COLUMNS) if c not in ds.column_names]
    if missing:
        raise InputError(f"config 'diagnostic' lacks column(s) {missing}: SP pairs need an intervention dataset "
                         f"(`omniaudit build interventions`); it has {ds.column_names}", file=dataset)
    if isinstance(ds.features["video"], datasets.Video):
        ds = ds.cast_column("video", datasets.Video(decode=False))
    meta = ds.remove_columns("video").select_columns([*DIAGNOSTIC_COLUMNS, *ITEM_COLUMNS[:-1]]).to_pandas()
    return ds, meta


def embedded_clip(cell: dict, dataset: str | Path) -> dict:
    """The clip with its bytes: a path-mode dataset (``--media-mode paths``) loads as ``{"bytes": None, "path":
    "/abs/.../media/x.mp4"}``, which would publish a local path, break when the folder moves and leave the clip out
    of the fingerprint; its file is read (the loader has checked it against the recorded SHA-256) and only its
    name is kept, as an embedded build stores it."""
    if cell.get("bytes") is not None:
        return cell
    path = Path(cell.get("path") or "")
    if not path.is_file():
        raise InputError(f"a diagnostic clip has neither bytes nor a readable file ({path})", file=dataset)
    return {"bytes": path.read_bytes(), "path": path.name}


def _none(value: object) -> object:
    return None if value is None or (isinstance(value, float) and np.isnan(value)) else value


def build_sp_pairs(out_dir: str | Path, dataset: str | Path, policy=None, predictions: str | Path | None = None,
                   options: SPOptions = SPOptions(), progress: Callable[[str], None] | None = None,
                   push_to_hub: str | None = None, **runner_options) -> dict:
    """Sample ``policy`` on ``dataset``'s diagnostic items (or read its ``predictions``), keep its wrong answers as
    rejected responses and write the ``dpo`` config to ``out_dir`` (atomically). Returns the counts."""
    from omniaudit.data_builders.hub import ParquetSink, configs_metadata, shard_name
    from omniaudit.data_builders.hub import push_to_hub as push
    from omniaudit.data_builders.interventions.build import _messages, features
    from omniaudit.hub_cards import dataset_card
    from omniaudit.io import atomic_dir, local_name, redact_paths

    say = progress or (lambda _m: None)
    if (policy is None) == (predictions is None):
        raise InputError("give either a policy to sample (SPEC or runner) or the predictions file it wrote")
    if predictions is not None and not Path(predictions).is_file():
        raise InputError("predictions file not found", file=predictions)
    say("reading the diagnostic items")
    ds, meta = _diagnostic(dataset)
    with atomic_dir(out_dir) as tmp:
        answers_file = tmp / PREDICTIONS
        if policy is not None:
            say("sampling the policy")
            sample_policy(dataset, policy, answers_file, options, progress, **runner_options)
        else:
            shutil.copyfile(predictions, answers_file.with_suffix(Path(predictions).suffix.lower()))
            answers_file = answers_file.with_suffix(Path(predictions).suffix.lower())
        say("scoring the answers")
        judge_options = {k: v for k, v in runner_options.items() if k in ("cache_dir", "use_cache")}
        scored = score_answers(answers_file, meta, options, **judge_options)
        keep = scored["verdict"].eq("wrong") | (scored["verdict"].eq("unparsed") & (not options.parsed_only))
        position = {i: k for k, i in enumerate(meta["id"])}
        candidates = scored[keep].copy()
        candidates["position"] = candidates["id"].map(position).astype(int)
        candidates["answer"] = candidates["text"].str.strip()
        gold = meta["gold"].str.strip().to_numpy()[candidates["position"].to_numpy()]
        candidates = candidates[candidates["answer"].to_numpy() != gold]  # the reference itself is never rejected
        pairs = candidates.drop_duplicates(["id", "answer"]).sort_values("position", kind="stable")
        if pairs.empty:  # an empty config would not even load; nothing is written
            counts = scored["verdict"].value_counts().to_dict()
            dropped = "; parsed_only drops the unparsed ones" if options.parsed_only else ""
            raise InputError(f"no SP pairs: none of the policy's {len(scored)} answers is a wrong, non-empty answer "
                             f"({counts}{dropped})", file=answers_file.name)
        say(f"writing {len(pairs)} pairs")
        (tmp / CONFIG).mkdir()
        sink = ParquetSink(tmp / CONFIG / shard_name(SPLIT), features()[CONFIG])
        clips = ds.select_columns(["video"])
        for pair in pairs.itertuples(index=False):
            item = meta.iloc[pair.position]
            sink.add([{"id": f"{pair.id}/sp/{pair.run}", "source_id": item["source_id"], "kind": "sp",
                       "intervention": item["intervention"], "offset_s": _none(item["offset_s"]),
                       "visual_time": _none(item["visual_time"]), "audio_time": _none(item["audio_time"]),
                       "perturbed_field": None, "prompt": _messages("user", item["prompt"], video=True),
                       "chosen": _messages("assistant", item["gold"]),
                       "rejected": _messages("assistant", pair.text),
                       "video": embedded_clip(clips[int(pair.position)]["video"], dataset)}])
        sink.close()
        summary = _summary(scored, candidates, pairs, meta, options)
        named = policy if isinstance(policy, str) or policy is None else type(policy).__name__
        info = redact_paths({"source": local_name(dataset), "policy": named,
                             "predictions": None if predictions is None else local_name(predictions),
                             "options": asdict(options), "summary": summary})  # published: no local paths
        (tmp / BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        metadata = {"pretty_name": "omniaudit SFT-policy negatives (SP)",
                    "tags": ["omniaudit", "audio-visual", "shortcut-audit", "thud", "dpo"],
                    "task_categories": ["video-text-to-text"],
                    "configs": configs_metadata({CONFIG: [SPLIT]})}
        (tmp / "README.md").write_text(dataset_card("sp_pairs.md.j2", metadata, info=info), encoding="utf-8")
    if push_to_hub:
        push(out_dir, push_to_hub)
    return summary


def _summary(scored: pd.DataFrame, candidates: pd.DataFrame, pairs: pd.DataFrame, meta: pd.DataFrame,
             options: SPOptions) -> dict:
    verdicts = scored["verdict"].value_counts()
    by = meta.set_index("id").loc[pairs["id"], ["intervention", "dimension"]]
    return {"items": len(meta), "runs": int(scored["run"].nunique()), "answers": len(scored),
            **{v: int(verdicts.get(v, 0)) for v in ("correct", "wrong", "unparsed", "empty", "missing")},
            "duplicates": len(candidates) - len(pairs), "pairs": len(pairs),
            "pairs_by": {f"{i}/{d}": int(n) for (i, d), n in by.groupby(["intervention", "dimension"]).size().items()}}
