"""A scorecard across processes or machines: the other ranks of a multi-process launch answer as the main process
orders (:func:`follow_main_process`); a shard run writes ``shard.json`` (:func:`write_shard_summary`) and a merge of
shard runs takes every shard once (:func:`check_shard_folders`)."""

from __future__ import annotations

import json
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.results import AuditRun


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


def write_shard_summary(out: Path, shard: tuple[int, int], results: dict[str, dict[str, AuditRun]]) -> None:
    """``shard.json``: which shard this folder answered, and each model's status per audit."""
    from omniaudit.io import atomic_file

    summary = {"shard": {"index": shard[0], "count": shard[1]},
               "models": {m: {a: {"status": r.status, "reason": r.reason} for a, r in runs.items()}
                          for m, runs in results.items()}}
    with atomic_file(out / "shard.json") as tmp:
        tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


class Orders:
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
    (:func:`~omniaudit.runners.data_parallel.judge_data_parallel`, beside the main process), until it sends
    ``None``. A judge run that fails or is refused is reported by the main process, which decides whether the
    scorecard goes on (a model not answering is a status, not an end): this rank waits for the next order."""
    from accelerate.utils import broadcast_object_list

    from omniaudit.runners.data_parallel import OtherRankReports, judge_data_parallel

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
