"""Split a judge run across machines (``--shard I/N``) and merge the shards' predictions into the file an unsharded
run writes, byte for byte.

Items are grouped so that the orders of one trial (AB / BA: ids that differ only in their order suffix) stay in one
shard; groups, in the order they first appear, are dealt round-robin to the N shards, so shards differ by at most
one group. A shard's rows carry ``shard: {index, count, items, position}`` (``items``: the unsharded run's item
count; ``position``: the item's place in it); the merge checks that all N shards of one run are there, each once,
that together they answer every item of every run once, then orders the rows as the unsharded run does (run, then
item) and drops the field. The rows' ``doc_hash`` / ``prompt_hash`` must be in every shard's rows or in none, and
agree for each item (:class:`~omniaudit.row_hashes.RowHashes`): parts made for another version of an
item or another prompt are refused.

The same groups are the units of ``judge --limit N``'s seeded, stratified sample (:func:`limit_positions`), drawn
before the shard split, so limited shards merge into the limited single-process file. One run across the processes
of a multi-process launch is dealt by the same split (:mod:`~.data_parallel`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from omniaudit.errors import InputError
from omniaudit.io import check_out_file
from omniaudit.predictions import PROVENANCE
from omniaudit.records import canonical, first_difference, value_at
from omniaudit.row_hashes import RowHashes
from omniaudit.runners.items import JudgeItem
from omniaudit.runners.rows import is_predictions_file, write_jsonl
from omniaudit.tables import jsonl_objects


def group_key(item: JudgeItem) -> str:
    """The trial an item belongs to: its id without the order suffix ("pairwise/t3/concat/AB" -> ".../concat")."""
    if item.order:
        stripped = re.sub(rf"[/_#:.\-]?{re.escape(item.order)}$", "", item.id, flags=re.IGNORECASE)
        if stripped and stripped != item.id:
            return stripped
    return item.id


def item_groups(items: list[JudgeItem]) -> list[list[int]]:
    """The positions (in ``items``) of each group (:func:`group_key`), groups in the order they first appear."""
    groups: dict[str, list[int]] = {}
    for pos, item in enumerate(items):
        groups.setdefault(group_key(item), []).append(pos)
    return list(groups.values())


def limit_positions(items: list[JudgeItem], limit: int, seed: int | None) -> list[int]:
    """Positions (in ``items``, ascending: the selection's order) of ``judge --limit N``'s sample: a seeded, stratified
    sample of whole item groups (:func:`group_key`: both orders of a pair stay together) holding at most ``limit``
    items.

    ``limit`` counts items, not groups: a group of two orders counts 2, and no group is ever split, so the sample
    holds ``limit`` items or, where the next group would not fit, fewer (at most one group's size less). Strata are
    the items' ``condition`` (a row's condition, else its task; configs without one are one stratum); a group whose
    items differ in it is a stratum of its own combination. Each stratum gets its share of the sample in proportion
    to its items (largest deficit first, so the shares round as evenly as groups allow), and at least one group when
    ``limit`` can hold one group of every stratum. Within a stratum the groups are taken in a seeded shuffle
    (``random.Random(seed)``, ``seed`` None read as 0; strata shuffled in the order they first appear), so one seed
    gives one sample, on every machine and in every shard. A ``limit`` at or above the selection takes every item."""
    import random

    groups = item_groups(items)
    if limit >= len(items):
        return list(range(len(items)))
    strata: dict[tuple, list[list[int]]] = {}
    for group in groups:
        stratum = tuple(sorted({str(items[p].condition) for p in group}))
        strata.setdefault(stratum, []).append(group)
    rng = random.Random(0 if seed is None else seed)
    queues = []
    for members in strata.values():
        members = list(members)
        rng.shuffle(members)
        queues.append(members)
    total = len(items)
    target = [limit * sum(map(len, q)) / total for q in queues]
    used, taken, chosen, left = [0] * len(queues), [0] * len(queues), [], limit

    def take(s: int) -> None:
        nonlocal left
        group = queues[s][taken[s]]
        chosen.extend(group)
        taken[s] += 1
        used[s] += len(group)
        left -= len(group)

    if sum(len(q[0]) for q in queues) <= limit:  # every stratum represented, when the limit allows
        for s in range(len(queues)):
            take(s)
    while True:
        fits = [s for s, q in enumerate(queues) if taken[s] < len(q) and len(q[taken[s]]) <= left]
        if not fits:
            return sorted(chosen)
        take(max(fits, key=lambda s: (target[s] - used[s], -s)))


def shard_positions(items: list[JudgeItem], index: int, count: int) -> list[int]:
    """Positions (in ``items``) of shard ``index`` of ``count``: whole groups, dealt round-robin."""
    groups = item_groups(items)
    if index >= count:
        raise InputError(f"shard {index}/{count}: the index must be below the count")
    if count > len(groups):
        raise InputError(f"{count} shards (--shard I/{count}, or {count} launched processes): the run has only "
                         f"{len(groups)} item group(s) (orders of one trial stay together), so some shards would be "
                         f"empty; use at most {len(groups)}")
    return sorted(pos for g, positions in enumerate(groups) if g % count == index for pos in positions)


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


def merge_predictions(out: str | Path, shards: Sequence[str | Path]) -> dict:
    """Join the shard files of one sharded judge run into ``out`` (atomically), as the unsharded run writes it."""
    out = check_out_file(out, is_predictions_file)
    by_index: dict[int, Path] = {}
    rows: list[dict] = []
    count = n_items = None
    origin: tuple[dict | None, Path] | None = None  # the first file's provenance: every shard must share it
    hashes = RowHashes("shard's row")  # doc_hash / prompt_hash: in every row or none, one per item across the shards
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
            hashes.add(row, file, n)
        rows.extend(shard_rows)
    missing = sorted(set(range(cast(int, count))) - set(by_index))
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
    expected = len(runs) * cast(int, n_items)
    if len(seen) != expected or runs != list(range(len(runs))):
        raise InputError(f"the shards answer {len(seen)} (run, item) pairs but the run had {n_items} items x "
                         f"{len(runs)} run(s) = {expected}; were they written with the same options?")
    rows.sort(key=lambda row: (row.get("run", 0), row["shard"]["position"]))
    for row in rows:
        row.pop("shard")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(out, rows)
    return {"shards": count, "items": n_items, "runs": len(runs), "rows": len(rows)}
