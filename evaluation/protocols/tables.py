"""The cells of the paper's Tables II-V (lalm-judge-protocol-shortcuts), each with its CI, n and parse rate.

``audit.json["tables"]`` repeats the audit's estimates in the layout of the paper, so that every cell carries what a
reader needs to weigh it: ``value``, its 95% cluster-bootstrap ``ci``, ``n`` (items: clips, trials or ordered
items; sampled runs pool, so n counts items, not item-runs) and the ``parse_rate`` estimate of the same items (an
unparseable answer counts as a miss in accuracy and as no follow in RF / follow-cue, so a low parse rate drags both
down). ``metric`` names the estimate the cell is.

- ``II`` (RQ1 specialist copy): judge -> attribute -> blueprint condition: top-1 accuracy.
- ``III`` (RQ2 placement): judge -> attribute -> ``match`` (accuracy with the true label as reference, pooled over
  the placements; they have equal n, so it is their mean), ``parse`` (parse rate over all reference items of the
  attribute) and each placement: reference-follow rate RF on wrong references (eq. 1) with ``normalized`` (eq. 2).
- ``IV`` (RQ3 pairwise): judge -> format -> ``p_a`` and task -> ``lock`` / ``g``.
- ``V`` (cue conflict): judge -> attribute -> ``none`` (audio-only accuracy, the paper's baseline) and follow-cue
  per cue cell.
"""

from __future__ import annotations

BLUEPRINT = ("audio", "skeleton", "descriptors", "true", "wrong", "no_frame", "wrong_audio")
PLACEMENTS = ("before", "after", "system", "rubric")
CUES = ("none", "conf_spec", "conf_ref", "conf_both")


def _get(tree: dict, *keys: str) -> dict | None:
    for key in keys:
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def cell(entry: dict | None, parse: dict | None, metric: str, **extra) -> dict | None:
    """One table cell: the estimate's value, CI and n, the parse-rate estimate of its items, and ``extra``."""
    if not entry:
        return None
    out = {"metric": metric, "value": entry.get("value"), "ci": entry.get("ci"), "n": entry.get("n"),
           "parse_rate": None if not parse else {k: parse.get(k) for k in ("value", "ci", "n")}}
    return {**out, **extra}


def _prune(tree: dict) -> dict:
    """Drop empty branches and missing cells (a judge may answer some configs only)."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict) and "metric" not in value:
            value = _prune(value)
        if value:
            out[key] = value
    return out


def _attributes(result: dict, metric: str, judge: str, config: str | None = None) -> list[str]:
    node = _get(result, metric, judge, *([config] if config else [])) or {}
    return sorted(node)


def table_ii(result: dict, judge: str) -> dict:
    return {a: {c: cell(_get(result, "accuracy", judge, "blueprint", a, c),
                        _get(result, "parse_rate", judge, "blueprint", a, c), "accuracy") for c in BLUEPRINT}
            for a in _attributes(result, "accuracy", judge, "blueprint")}


def table_iii(result: dict, judge: str) -> dict:
    out = {}
    for a in _attributes(result, "rf", judge):
        row = {"match": cell(_get(result, "match_accuracy", judge, a), None, "match_accuracy"),
               "parse": cell(_get(result, "reference_parse_rate", judge, a), None, "reference_parse_rate")}
        for p in PLACEMENTS:
            norm = _get(result, "rf_normalized", judge, a, p)
            row[p] = cell(_get(result, "rf", judge, a, p), _get(result, "parse_rate", judge, "reference", a,
                                                                f"wrong/{p}"), "rf",
                          normalized=None if not norm else {"value": norm.get("value"), "ci": norm.get("ci"),
                                                            "k": norm.get("k")})
        out[a] = row
    return out


def table_iv(result: dict, judge: str) -> dict:
    out: dict = {}
    parse = _get(result, "parse_rate", judge, "pairwise") or {}
    formats = set(_get(result, "lock", judge) or {}) | set(_get(result, "p_a", judge) or {})
    for f in sorted(formats):
        row: dict = {"p_a": cell(_get(result, "p_a", judge, f), _get(parse, "identical", f), "p_a")}
        for t in sorted(_get(result, "lock", judge, f) or {}):
            row[t] = {"lock": cell(_get(result, "lock", judge, f, t), _get(parse, t, f), "lock"),
                      "g": cell(_get(result, "gold_aligned", judge, f, t), _get(parse, t, f), "gold_aligned")}
        out[f] = row
    return out


def table_v(result: dict, judge: str) -> dict:
    out = {}
    for a in _attributes(result, "follow_cue", judge):
        row = {"none": cell(_get(result, "accuracy", judge, "cue_conflict", a, "none"),
                            _get(result, "parse_rate", judge, "cue_conflict", a, "none"), "accuracy")}
        for c in CUES[1:]:
            row[c] = cell(_get(result, "follow_cue", judge, a, c),
                          _get(result, "parse_rate", judge, "cue_conflict", a, c), "follow_cue")
        out[a] = row
    return out


def paper_tables(result: dict) -> dict:
    """``{"II": ..., "III": ..., "IV": ..., "V": ...}``, each judge -> cells (see the module docstring); a table no
    judge answered is left out."""
    builders = {"II": table_ii, "III": table_iii, "IV": table_iv, "V": table_v}
    tables = {name: _prune({j: build(result, j) for j in result["judges"]}) for name, build in builders.items()}
    return {name: table for name, table in tables.items() if table}
