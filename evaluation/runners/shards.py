"""Split a judge run across machines (``--shard I/N``) and merge the shards' predictions into the file an unsharded
run writes, byte for byte.

Items are grouped so that the orders of one trial (AB / BA: ids that differ only in their order suffix) stay in one
shard; groups, in the order they first appear, are dealt round-robin to the N shards, so shards differ by at most
one group. A shard's rows carry ``shard: {index, count, items, position}`` (``items``: the unsharded run's item
count; ``position``: the item's place in it); the merge checks that all N shards of one run are there, each once,
that together they answer every item of every run once, then orders the rows as the unsharded run does (run, then
item) and drops the field.
"""

from __future__ import annotations

import re
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.evaluation.predictions import PROVENANCE
from omniaudit.evaluation.runners.items import JudgeItem
from omniaudit.io import check_out_file
from omniaudit.records import canonical, first_difference, value_at
from omniaudit.tables import jsonl_objects


def group_key(item: JudgeItem) -> str:
    """The trial an item belongs to: its id without the order suffix ("pairwise/t3/concat/AB" -> ".../concat")."""
    if item.order:
        stripped = re.sub(rf"[/_#:.\-]?{re.escape(item.order)}$", "", item.id, flags=re.IGNORECASE)
        if stripped and stripped != item.id:
            return stripped
    return item.id


def shard_positions(items: list[JudgeItem], index: int, count: int) -> list[int]:
    """Positions (in ``items``) of shard ``index`` of ``count``: whole groups, dealt round-robin."""
    groups: dict[str, list[int]] = {}
    for pos, item in enumerate(items):
        groups.setdefault(group_key(item), []).append(pos)
    if index >= count:
        raise InputError(f"shard {index}/{count}: the index must be below the count")
    if count > len(groups):
        raise InputError(f"--shard {index}/{count}: the run has only {len(groups)} item group(s) (orders of one "
                         f"trial stay together), so some shards would be empty; use at most {len(groups)} shards")
    return sorted(pos for g, positions in enumerate(groups.values()) if g % count == index for pos in positions)


def _read_shard(path: Path) -> list[dict]:
    rows = []
    for n, row in jsonl_objects(path, "a predictions row (a JSON object) per line"):
        shard = row.get("shard")
        if not isinstance(shard, dict) or not {"index", "count", "items", "position"} <= set(shard):
            raise InputError("not a shard of `omniaudit judge --shard I/N` (no 'shard' field)", file=path, row=n)
        rows.append(row)
    if not rows:
        raise InputError("empty predictions file: not a shard of `omniaudit judge --shard I/N`", file=path)
    return rows


def merge_predictions(out: str | Path, shards: list[str | Path]) -> dict:
    """Join the shard files of one sharded judge run into ``out`` (atomically), as the unsharded run writes it."""
    from omniaudit.evaluation.runners.run import is_predictions_file, write_jsonl

    out = check_out_file(out, is_predictions_file)
    by_index: dict[int, Path] = {}
    rows: list[dict] = []
    count = n_items = None
    origin: tuple[dict, Path] | None = None  # the first file's provenance: every shard must share it
    for file in map(Path, shards):
        if file in by_index.values():
            raise InputError("shard file given twice", file=file)
        shard_rows = _read_shard(file)
        for n, row in enumerate(shard_rows, 1):
            record = row.get(PROVENANCE)
            if origin is None:
                origin = (record, file)
            elif canonical(record) != canonical(origin[0]):
                where = first_difference(origin[0], record) if isinstance(record, dict) and origin[0] else "provenance"
                raise InputError(f"this shard comes from another judge run than {origin[1]}: its {where} is "
                                 f"{value_at(record, where)!r}, not {value_at(origin[0], where)!r}; shards of one "
                                 "run share the judge, model, sampling and dataset build", file=file, row=n)
            s = row["shard"]
            if (count, n_items) == (None, None):
                count, n_items = s["count"], s["items"]
            if (s["count"], s["items"]) != (count, n_items):
                raise InputError(f"shard {s['index']}/{s['count']} of a {s['items']}-item run does not belong with "
                                 f"the other files ({count} shards of a {n_items}-item run)", file=file, row=n)
            if by_index.setdefault(s["index"], file) != file:
                raise InputError(f"shard {s['index']}/{count} given twice ({by_index[s['index']]} and {file})",
                                 file=file, row=n)
        rows.extend(shard_rows)
    missing = sorted(set(range(count)) - set(by_index))
    if missing:
        raise InputError(f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing: a merge needs all "
                         f"{count} shards of the run")
    runs = sorted({row.get("run", 0) for row in rows})
    seen: dict[tuple[int, int], Path] = {}
    for row in rows:
        key = (row.get("run", 0), row["shard"]["position"])
        if key in seen:
            raise InputError(f"item '{row['id']}' (run {key[0]}) is answered by two shards",
                             file=by_index[row["shard"]["index"]])
        seen[key] = by_index[row["shard"]["index"]]
    expected = len(runs) * n_items
    if len(seen) != expected or runs != list(range(len(runs))):
        raise InputError(f"the shards answer {len(seen)} (run, item) pairs but the run had {n_items} items x "
                         f"{len(runs)} run(s) = {expected}; were they written with the same options?")
    rows.sort(key=lambda row: (row.get("run", 0), row["shard"]["position"]))
    for row in rows:
        row.pop("shard")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(out, rows)
    return {"shards": count, "items": n_items, "runs": len(runs), "rows": len(rows)}
