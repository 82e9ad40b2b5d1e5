"""A matched, per-sample null for the dominance share: what a content-blind model's failures would read as.

The dominance share (:func:`.failure_modes.cohort_decomposition`) is not 0.5 under "no modality decides": an
ablated answer that agrees with the failed one *by chance* reads as "not moved", and with a handful of possible
answers chance agreement is common. So each sample gets its own null.

**Per sample** ``i`` (:func:`dominance_test`): ``d_i`` = the share of its classified failed runs (runs pooled) whose
mode is a dominance (text / audio / image / video); each sample weighs once however many runs failed it, so answers
repeated across runs are not counted twice. Samples whose full inputs are byte-identical (:func:`input_units`: a
builder can draw one configuration twice; the default's ``SpokenPositionColour`` had 18) are one sample, their runs
pooled: a model answers them as one input, so counted apart they were one answer counted several times (on 128
synthetic samples, 111 selected and 87 inputs, a content-blind greedy model's share spread 1.3 times its standard
error; the default's 155 samples are 153 inputs since its rows have 1,215 configurations). ``p0_i`` = the chance
that a failure of a *content-blind, prior-free* model on this very sample is classified as a dominance, given the
sample's ablation structure (which classifying ablations it has, which of its inputs are byte-identical), maximised
over the policies below. ``value`` = mean ``d_i``, ``null`` = mean ``p0_i`` over the same samples.

**Policies** (a model that cannot read the content): every answer is a uniform draw from the sample's answer
vocabulary ``V``, and

- ``iid``: every item (sample or ablated copy) in every run gets its own draw;
- ``per_input``: a deterministic function of the input (a hash of prompt and media): byte-identical inputs (e.g. the
  ``text_only`` copies of the samples of one question, the ``drop_image`` copies of samples with one spoken
  instruction) get one draw, in every run, distinct inputs independent ones;
- ``worst``: the largest over every policy that answers each group of identical items of the sample with one or with
  separate draws, in any split (``iid`` is all split, ``per_input`` none); this is ``p0_i``. Mixing policies across
  runs or items cannot exceed it (a share conditioned on the failure is a ratio of linear functions of the mixing
  weights, largest at a vertex).

Policies outside this class can reach 1 but are not a null: a guess distribution that favours some answer, a guess
vocabulary narrower than ``V``, or an answer that depends only on the text and which media slots are present (the
same answer to every sample of a question; on the default build it would read as image dominance, p0 0.78 / 0.81 for
3 / 4 answers, since ``drop_image`` removes the slot and ``mute_audio`` keeps a silent one) are *priors*: the answer
follows the text, not the media, which is the text-dominance shortcut the share is there to catch.

**Exact computation** (:func:`null_probability`): the full answer ``f`` is a draw conditioned on being wrong
(``f != gold``); a draw independent of ``f`` equals it with probability exactly ``1 / |V|`` whatever ``f`` is (the
uniform draw does not care which non-gold answer ``f`` is), identical inputs sharing ``f``'s draw always equal it, and
distinct draws are independent given ``f``. So every move pattern's probability is a product over the sample's draws,
and enumerating the ``2 ** (draws - 1)`` patterns through :func:`.failure_modes.mode_of` gives P(dominance) /
P(classified) with no sampling error. Answers are compared by normalised exact match (the audit's default matcher);
a judge that also merges rephrasings can only make chance agreement more likely, so with a judge the null is a lower
bound.

**The answer vocabulary** ``V``: the sample's ``answer_vocabulary`` (the builder writes the gold answers of all
samples of its template; composition items have no ``options``), with the sample's own gold added, normalised like the
grader (``"Five"`` and ``"5"`` are one answer), at least 2 (a failure needs a non-gold answer). Without that column:
the gold answers of the samples of the same template. Why the template's gold answers: they are the answers a
question of that template is known to have, the smallest vocabulary a guesser of that question plausibly draws from;
a larger one (all counts, "Insufficient Information") lowers chance agreement, so the template's golds give the
largest (most cautious) null.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd

from omniaudit.answer_match import normalize
from omniaudit.evaluation.composition.failure_modes import CLASSIFIED, CLASSIFYING, mode_of

POLICIES = ("iid", "per_input", "worst")
NULL_POLICY = "worst"  # the policy p0_i is read from
FULL = "full"  # the intact sample among a sample's items
INPUT_COLUMNS = ("system", "prompt", "media", "video_audio")
MEDIA_COLUMNS = ("video", "image", "audio")
METHOD = ("value: the mean over samples with a classified failure of d_i (the share of the sample's classified failed "
          "runs that are a dominance mode; samples with byte-identical inputs are one sample, their runs pooled, "
          "named by their first id); null: the mean over the same samples of p0_i, the largest chance, over "
          "content-blind prior-free policies (answers uniform over the template's gold answers, drawn i.i.d. per run "
          "and item, or once per identical input, or any split in between), that a failure on that sample with its "
          "ablations and shared inputs reads as dominance, computed exactly under normalised exact match.")


@dataclass(frozen=True)
class Structure:
    """What the null of one sample depends on: its items (``full`` then its classifying ablations, sorted), which
    items are the same input (per item, the index of the first item with its input) and the vocabulary size."""

    items: tuple[str, ...]
    identity: tuple[int, ...]
    k: int


def _cell_digest(cell: dict | None) -> bytes:
    """SHA-256 of one encoded media cell (its bytes; a cell stored by path: the file's bytes, else the path)."""
    if cell is None:
        return b"-"
    data = cell.get("bytes")
    if data is None:
        path = Path(str(cell.get("path") or ""))
        data = path.read_bytes() if path.is_file() else f"path:{path}".encode()
    return hashlib.sha256(data).digest()


def input_key(row: dict) -> str:
    """What the model is given for one item, as a SHA-256 hex digest: ``system``, ``prompt``, the media order,
    whether a video's soundtrack is input, and the bytes of each media cell (their file names are not sent)."""
    h = hashlib.sha256()
    for column in INPUT_COLUMNS:
        value = row.get(column)
        h.update(repr(list(value) if isinstance(value, list | tuple) else value).encode() + b"\0")
    for column in MEDIA_COLUMNS:
        h.update(_cell_digest(row.get(column)))
    return h.hexdigest()


def read_inputs(dataset: str | Path, batch_size: int = 32) -> pd.DataFrame:
    """Every item of the ``samples`` and ``ablations`` configs: ``id``, ``sample_id``, ``item`` (``full`` or the
    ablation), ``input`` (:func:`input_key`), ``template`` and, for samples, ``answer`` and ``vocabulary`` (the
    ``answer_vocabulary`` column, None without it). Media are read encoded, in batches (bounded memory)."""
    import datasets

    from omniaudit.data_builders.hub import load_hub_dataset

    rows = []
    for config in ("samples", "ablations"):
        ds = load_hub_dataset(dataset, config)
        for column, feature in ds.features.items():
            if isinstance(feature, datasets.Audio | datasets.Image | datasets.Video):
                ds = ds.cast_column(column, type(feature)(decode=False))
        template = "template_id" if "template_id" in ds.column_names else "template_name"
        for batch in ds.iter(batch_size=batch_size):
            for k in range(len(batch["id"])):
                row = {c: v[k] for c, v in batch.items()}
                sample = config == "samples"
                rows.append({"id": row["id"], "sample_id": row["id"] if sample else row["sample_id"],
                             "item": FULL if sample else row["ablation"], "input": input_key(row),
                             "template": row.get(template), "answer": row.get("answer") if sample else None,
                             "vocabulary": row.get("answer_vocabulary") if sample else None})
    return pd.DataFrame(rows, columns=["id", "sample_id", "item", "input", "template", "answer", "vocabulary"])


def vocabulary_sizes(samples: pd.DataFrame) -> pd.Series:
    """Sample id -> |V|: its ``vocabulary`` (else its template's gold answers) with its own gold, normalised, at
    least 2 (``samples``: ``id``, ``template``, ``answer``, ``vocabulary``)."""
    golds = samples.groupby("template")["answer"].apply(list).to_dict()
    sizes = {}
    for r in samples.itertuples():
        words = list(r.vocabulary) if r.vocabulary is not None else golds.get(r.template, [])
        normal = {normalize(str(w)) for w in [*words, r.answer] if str(w).strip()}
        sizes[r.id] = max(2, len(normal))
    return pd.Series(sizes, dtype=int)


def input_units(inputs: pd.DataFrame) -> dict[str, str]:
    """Sample id -> the first (sorted) id of the samples whose full input is byte-identical to its own (``inputs``
    as :func:`read_inputs` returns it): a repeated sample is one input, answered as one."""
    full = inputs[inputs["item"] == FULL]
    ids = full["sample_id"].astype(str)
    first = ids.groupby(full["input"].to_numpy()).transform("min")
    return dict(zip(ids, first, strict=True))


def structures(inputs: pd.DataFrame) -> dict[str, Structure]:
    """Sample id -> its :class:`Structure` (``inputs`` as :func:`read_inputs` returns it)."""
    samples = inputs[inputs["item"] == FULL]
    sizes = vocabulary_sizes(samples)
    classifying = inputs[(inputs["item"] == FULL) | inputs["item"].isin(CLASSIFYING)]
    out = {}
    for sid, group in classifying.groupby("sample_id", sort=True):
        if sid not in sizes.index:  # ablations of no sample: nothing to audit
            continue
        keyed = dict(zip(group["item"], group["input"], strict=True))
        items = (FULL, *sorted(name for name in keyed if name != FULL))
        keys = [keyed[name] for name in items]
        out[str(sid)] = Structure(items, tuple(keys.index(key) for key in keys), int(sizes[sid]))
    return out


def _set_partitions(members: list[int]) -> list[list[list[int]]]:
    """Every partition of ``members`` into blocks."""
    if not members:
        return [[]]
    first, rest = members[0], members[1:]
    out = []
    for partition in _set_partitions(rest):
        out.append([[first], *partition])
        out += [[*partition[:j], [first, *block], *partition[j + 1:]] for j, block in enumerate(partition)]
    return out


def _refinements(identity: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every way to split the groups of identical items into blocks sharing one draw (block labels per item)."""
    groups = [[j for j, g in enumerate(identity) if g == label] for label in dict.fromkeys(identity)]
    out = []
    for choice in itertools.product(*(_set_partitions(group) for group in groups)):
        labels = [0] * len(identity)
        for block in (b for partition in choice for b in partition):
            for j in block:
                labels[j] = min(block)
        out.append(tuple(labels))
    return out


def _dominance_given_failure(items: tuple[str, ...], blocks: tuple[int, ...], k: int) -> float | None:
    """P(dominance | classified) of a failure whose items are answered by one draw per block (``blocks``: per item,
    its block's label; item 0 is the failed full answer): a block other than the full answer's agrees with it with
    probability 1 / k, independently."""
    others = sorted({b for b in blocks if b != blocks[0]})
    dominance = classified = 0.0
    for agree in itertools.product((True, False), repeat=len(others)):
        agrees = dict(zip(others, agree, strict=True))
        p = 1.0
        for a in agree:
            p *= 1 / k if a else 1 - 1 / k
        moved = {name: b != blocks[0] and not agrees[b] for name, b in zip(items[1:], blocks[1:], strict=True)}
        mode = mode_of(moved)
        if mode in CLASSIFIED:
            classified += p
            dominance += p * mode.endswith("_dominance")
    return dominance / classified if classified > 0 else None


@cache
def null_probability(structure: Structure, policy: str = NULL_POLICY) -> float | None:
    """P(a content-blind failure on a sample of this structure is classified as dominance | it is classified), under
    ``policy`` (:data:`POLICIES`, see the module docstring); None when no failure of it can be classified."""
    if policy == "iid":
        candidates = [tuple(range(len(structure.items)))]
    elif policy == "per_input":
        candidates = [structure.identity]
    elif policy == "worst":
        candidates = _refinements(structure.identity)
    else:
        raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")
    values = [v for blocks in candidates
              if (v := _dominance_given_failure(structure.items, blocks, structure.k)) is not None]
    return max(values) if values else None


def sample_nulls(by_sample: dict[str, Structure]) -> dict[str, dict[str, float | None]]:
    """Sample id -> policy -> p0 (:func:`null_probability`)."""
    return {sid: {policy: null_probability(s, policy) for policy in POLICIES} for sid, s in by_sample.items()}


def dominance_test(records: list[dict] | pd.DataFrame, nulls: dict[str, dict[str, float | None]],
                   units: dict[str, str] | None = None) -> dict:
    """The dominance share per sample against its matched null (see the module docstring).

    ``records``: one model's failed samples over all its runs (:func:`.failure_modes.decompose`'s sample records:
    ``id``, ``mode``); ``nulls``: :func:`sample_nulls`; ``units``: :func:`input_units` (samples with one input are one
    sample, named by its first id; None: every sample its own). Returns ``per_sample`` (id -> d_i),
    ``null_per_sample`` (id -> p0_i), ``merged`` (id -> the sample ids it pools, where several), ``value``,
    ``null``, ``null_by_policy`` (each policy's mean p0 over the same samples), ``n_samples`` and ``method``; ``value``
    and ``null`` None without a classified failure. Only classified failures count: an ``ungraded`` one (an ablated
    answer no reader read) and a sample whose own answer is ungraded (no failure at all) drop out of the share and
    of the null alike, so the two stay over the same samples.
    """
    frame = pd.DataFrame(records, columns=["id", "mode"]) if not isinstance(records, pd.DataFrame) else records
    frame = frame[frame["mode"].isin(CLASSIFIED)]
    ids = frame["id"].astype(str)
    known = ids.map(lambda sid: nulls.get(sid, {}).get(NULL_POLICY) is not None).astype(bool)
    frame, ids = frame[known], ids[known]
    unit = ids.map(lambda sid: (units or {}).get(sid, sid))
    shares = frame["mode"].str.endswith("_dominance").groupby(unit, sort=True).mean()
    members = {u: sorted(set(g)) for u, g in ids.groupby(unit, sort=True)}

    def mean(values: list[float]) -> float | None:
        return float(sum(values) / len(values)) if values else None

    def p0(u: str, policy: str) -> float | None:  # equal over one input's copies; their mean if not
        return mean([nulls[sid][policy] for sid in members[u] if nulls[sid][policy] is not None])

    per_sample = {u: float(shares[u]) for u in shares.index}
    null_per_sample = {u: p0(u, NULL_POLICY) for u in per_sample}
    by_policy = {p: mean([v for u in per_sample if (v := p0(u, p)) is not None]) for p in POLICIES}
    return {"per_sample": per_sample, "null_per_sample": null_per_sample,
            "merged": {u: m for u, m in members.items() if len(m) > 1},
            "value": mean(list(per_sample.values())), "null": mean(list(null_per_sample.values())),
            "null_by_policy": by_policy, "n_samples": len(per_sample), "method": METHOD}
