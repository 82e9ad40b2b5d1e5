"""What a finished audit folder holds, read generically: its headline metrics and tables (from ``audit.json`` and
the CSV files the audit wrote, never from the Markdown report), its figures, and a predictions file's summary.

The experiment tracker (:mod:`omniaudit.evaluation.tracking`) logs these; anything else that reads finished audits
(a scorecard, a leaderboard) reads them here too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from omniaudit.errors import InputError

AUDITS = ("preference", "interventions", "protocols", "composition")
PROTOCOL_METRICS = ("accuracy", "parse_rate", "rf", "rf_normalized", "lock", "gold_aligned", "p_a", "follow_cue")
TEMPORAL = ("offset_mae", "direction_accuracy", "shift_yes_no", "sync_binary_accuracy", "sync_three_way_accuracy",
            "offset_within_tolerance")




def _number(value: object) -> float | None:
    """A loggable scalar: bools and ints as floats, None and non-numbers as None (NaN stays NaN)."""
    if isinstance(value, bool | int | float):
        return float(value)
    return None


def _put(out: dict[str, float], key: str, value: object) -> None:
    number = _number(value)
    if number is not None:
        out[key] = number


def estimates(tree: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], dict]]:
    """Every estimate in a nested audit.json section: a dict with a scalar ``value`` (plus ``ci``, ``n``, ...),
    with the keys that lead to it."""
    if isinstance(tree, dict):
        if "value" in tree and not isinstance(tree["value"], dict | list):
            yield path, tree
            return
        for key, sub in tree.items():
            yield from estimates(sub, (*path, str(key)))


def _ci(entry: dict, key: str = "ci") -> dict[str, float | None]:
    ci = entry.get(key)
    lo, hi = (ci if isinstance(ci, list | tuple) and len(ci) == 2 else (None, None))
    return {"ci_low": _number(lo), "ci_high": _number(hi)}


def _estimate_row(entry: dict) -> dict:
    """value, ci_low, ci_high and the estimate's other scalar fields (n, k, n_correct, ...)."""
    row = {"value": _number(entry.get("value")), **_ci(entry)}
    row.update({k: v for k, v in entry.items() if k not in ("value", "ci") and not isinstance(v, dict | list)})
    return row


def _preference_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, slices in audit.get("predictors", {}).items():
        for slice_name, entry in slices.items():
            for field in ("waf", "accuracy", "prior_following"):
                _put(out, f"{field}/{name}/{slice_name}", entry.get(field))
            if "mcnemar" in entry:
                _put(out, f"mcnemar_p/{name}/{slice_name}", entry["mcnemar"].get("p"))
    for name, meta in audit.get("judges", {}).items():
        _put(out, f"judges/{name}/order_agreement", meta.get("order_agreement"))
        _put(out, f"judges/{name}/n_ties", meta.get("n_ties"))
    dataset = audit.get("dataset", {})
    for field in ("n_pairs", "n_binary", "n_same", "prior_agreement"):
        _put(out, f"dataset/{field}", dataset.get(field))
    for slice_name, n in dataset.get("slices", {}).items():
        _put(out, f"dataset/slices/{slice_name}", n)
    classifier = audit.get("source_classifier") or {}
    for field in ("accuracy_mean", "accuracy_sd", "chance", "majority"):
        _put(out, f"source_classifier/{field}", classifier.get(field))
    controls = audit.get("controls") or {}
    permutation, swap = controls.get("identity_permutation") or {}, controls.get("counterfactual_swap") or {}
    _put(out, "controls/identity_permutation/waf_mean", permutation.get("mean"))
    _put(out, "controls/identity_permutation/waf_sd", permutation.get("sd"))
    for field in ("identity_flip_rate", "length_flip_rate"):
        _put(out, f"controls/counterfactual_swap/{field}", swap.get(field))
    return out


def _interventions_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for dimension, entry in audit.get("dimensions", {}).items():
        for field in ("orig", "interv", "gap"):
            _put(out, f"dimensions/{dimension}/{field}", entry.get(field))
    _put(out, "avg_gap", audit.get("avg_gap"))
    for mode, rate in audit.get("failure_modes", {}).items():
        _put(out, f"failure_modes/{mode}", rate)
    for name in TEMPORAL:
        _put(out, name, (audit.get(name) or {}).get("value"))
    for band, entry in audit.get("sync_by_offset", {}).items():
        _put(out, f"sync_by_offset/{band}", entry.get("value"))
    for path, entry in estimates(audit.get("coverage", {}), ("coverage",)):
        _put(out, "/".join(path), entry["value"])
    _put(out, "n_rows", audit.get("n_rows"))
    _put(out, "n_source_clips", audit.get("n_source_clips"))
    return out


def _protocols_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for metric in PROTOCOL_METRICS:
        for path, entry in estimates(audit.get(metric, {}), (metric,)):
            _put(out, "/".join(path), entry["value"])
    for judge, n in audit.get("n_answered", {}).items():
        _put(out, f"n_answered/{judge}", n)
    return out


def _composition_metrics(audit: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    accuracy = audit.get("accuracy", {})
    overall = accuracy.get("overall", {})
    _put(out, "accuracy/overall", overall.get("mean"))
    _put(out, "accuracy/overall_sd", overall.get("sd"))
    for scope in ("by_category", "by_tier", "by_template"):
        for name, entry in accuracy.get(scope, {}).items():
            _put(out, f"accuracy/{scope}/{name}", entry.get("mean"))
    failures = audit.get("failure_modes", {}).get("overall", {})
    _put(out, "failure_modes/n_failures", failures.get("n_failures"))
    for mode, rate in failures.get("rates", {}).items():
        _put(out, f"failure_modes/{mode}", rate)
    for field in ("n_samples", "exact_match_rate", "judge_yes_rate", "n_judged", "n_unparsed_verdicts"):
        _put(out, field, audit.get(field))
    _put(out, "n_runs", len(audit.get("runs", [])))
    entropy = audit.get("entropy_gap") or {}
    for model, res in entropy.get("models", {}).items():
        _put(out, f"entropy_gap/{model}/overall", (res.get("overall") or {}).get("value"))
        for category, gap in (res.get("by_category") or {}).items():
            _put(out, f"entropy_gap/{model}/{category}", gap.get("value"))
    _put(out, "entropy_gap/pooled_z", (entropy.get("pooled_z") or {}).get("value"))
    return out


METRICS = {"preference": _preference_metrics, "interventions": _interventions_metrics,
           "protocols": _protocols_metrics, "composition": _composition_metrics}


def audit_metrics(kind: str, audit: dict) -> dict[str, float]:
    """The headline numbers of one audit's ``audit.json``, flattened to ``a/b/c`` keys (point estimates; the CIs are
    in the tables). ``kind`` is the audit: preference, interventions, protocols or composition."""
    if kind not in METRICS:
        raise InputError(f"no tracked metrics for this audit; expected one of {', '.join(AUDITS)}", value=kind)
    return METRICS[kind](audit)


def _read_csv(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / name
    return pd.read_csv(path, keep_default_na=False, na_values=[""]) if path.is_file() else None


def _preference_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    judges = set(audit.get("judges", {}))
    rows = []
    for name, slices in audit.get("predictors", {}).items():
        for slice_name, entry in slices.items():
            test = entry.get("mcnemar") or {}
            rows.append({"predictor": name, "kind": "judge" if name in judges else "probe", "slice": slice_name,
                         "waf": entry.get("waf"), **_ci(entry), "n": entry.get("n"),
                         "accuracy": entry.get("accuracy"), "prior_following": entry.get("prior_following"),
                         "ties": entry.get("ties"), "mcnemar_reference": test.get("reference"),
                         "mcnemar_b": test.get("b"), "mcnemar_c": test.get("c"), "mcnemar_p": test.get("p")})
    tables = {"waf": pd.DataFrame(rows)}
    win_rates = audit.get("dataset", {}).get("win_rates", {})
    tables["win_rates"] = pd.DataFrame({"generator": list(win_rates), "win_rate": list(win_rates.values())})
    pairs = [{"pairing": pairing, "n": e.get("n"), "first": e.get("first"), "first_win_rate": e.get("first_win_rate"),
              **{f"accuracy/{k}": v for k, v in (e.get("accuracy") or {}).items()}}
             for pairing, e in audit.get("source_pairs", {}).items()]
    tables["source_pairs"] = pd.DataFrame(pairs)
    if (predictions := _read_csv(folder, "predictions.csv")) is not None:
        tables["predictions"] = predictions
    return tables


def _interventions_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    from omniaudit.evaluation.interventions.audit import FAILURE_MODES

    rows = []
    for dimension, entry in audit.get("dimensions", {}).items():
        row = {"dimension": dimension, "intervention": entry.get("intervention")}
        for field in ("orig", "interv", "gap"):
            row[field] = entry.get(field)
            ci = (entry.get("ci") or {}).get(field) or [None, None]
            row[f"{field}_ci_low"], row[f"{field}_ci_high"] = ci
        row.update({f"n_{k}": v for k, v in (entry.get("n") or {}).items()}, n_clips=entry.get("n_clips"))
        rows.append(row)
    tables = {"dimensions": pd.DataFrame(rows)}
    modes = audit.get("failure_modes", {})
    ci, n = audit.get("failure_modes_ci", {}), audit.get("failure_modes_n", {})
    tables["failure_modes"] = pd.DataFrame([
        {"mode": m, "group": FAILURE_MODES.get(m, ("", ""))[0], "description": FAILURE_MODES.get(m, ("", ""))[1],
         "rate": rate, "ci_low": (ci.get(m) or [None, None])[0], "ci_high": (ci.get(m) or [None, None])[1],
         "n": n.get(m)} for m, rate in modes.items()])
    tables["sync_by_offset"] = pd.DataFrame([{"band_s": band, **_estimate_row(e)}
                                             for band, e in audit.get("sync_by_offset", {}).items()])
    tables["temporal"] = pd.DataFrame([{"metric": name, **_estimate_row(audit[name])}
                                       for name in TEMPORAL if isinstance(audit.get(name), dict)])
    tables["coverage"] = pd.DataFrame([{"dimension": path[0], "measure": path[1], **_estimate_row(e)}
                                       for path, e in estimates(audit.get("coverage", {}))])
    return tables


def _protocols_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    rows = [{"metric": metric, "judge": path[0], "cell": "/".join(path[1:]), **_estimate_row(entry)}
            for metric in PROTOCOL_METRICS for path, entry in estimates(audit.get(metric, {}))]
    columns = ["metric", "judge", "cell", "value", "ci_low", "ci_high", "n", "k"]
    frame = pd.DataFrame(rows)
    return {"estimates": frame.reindex(columns=[c for c in columns if c in frame] +
                                       [c for c in frame if c not in columns])}


def _composition_tables(audit: dict, folder: Path) -> dict[str, pd.DataFrame]:
    accuracy = audit.get("accuracy", {})
    rows = [{"scope": "overall", "name": "all", **accuracy.get("overall", {})}]
    rows += [{"scope": scope.removeprefix("by_"), "name": str(name), **entry}
             for scope in ("by_category", "by_tier", "by_template") for name, entry in accuracy.get(scope, {}).items()]
    tables = {"accuracy": pd.DataFrame(rows)}
    failures = audit.get("failure_modes", {})
    groups = [("all templates", failures.get("overall", {})), *failures.get("by_template", {}).items()]
    tables["failure_modes"] = pd.DataFrame(
        [{"template": name, "n_failures": g.get("n_failures"), "mode": mode, "count": count,
          "rate": (g.get("rates") or {}).get(mode)}
         for name, g in groups for mode, count in g.get("counts", {}).items()],
        columns=["template", "n_failures", "mode", "count", "rate"])
    entropy = audit.get("entropy_gap") or {}
    if entropy.get("models"):
        tables["entropy_gap"] = pd.DataFrame(
            [{"model": model, "slice": "all" if path[0] == "overall" else path[-1], **_estimate_row(e)}
             for model, res in entropy["models"].items()
             for path, e in estimates({k: v for k, v in res.items() if k in ("overall", "by_category")})])
    if (graded := _read_csv(folder, "graded.csv")) is not None:
        tables["graded"] = graded
    return tables


TABLES = {"preference": _preference_tables, "interventions": _interventions_tables,
          "protocols": _protocols_tables, "composition": _composition_tables}
ROW_TABLES = frozenset({"predictions", "graded"})  # one row per item: may be long


def audit_tables(kind: str, folder: str | Path, audit: dict | None = None) -> dict[str, pd.DataFrame]:
    """The audit's tables as DataFrames: from ``audit.json`` (one row per predictor x slice, dimension, failure mode,
    estimate, ...) and the per-row CSV files the audit wrote (``predictions.csv``, ``graded.csv``)."""
    if kind not in TABLES:
        raise InputError(f"no tracked tables for this audit; expected one of {', '.join(AUDITS)}", value=kind)
    folder = Path(folder)
    audit = read_audit(folder) if audit is None else audit
    return {name: frame for name, frame in TABLES[kind](audit, folder).items() if len(frame.columns)}


def read_audit(folder: str | Path, newer: bool = False) -> dict:
    """A finished audit's ``audit.json`` (a JSON object). Its ``schema.version`` is checked first: a file written in
    a newer schema than this omniaudit reads (:data:`SCHEMA_VERSION`) is refused with a line saying so, unless
    ``newer`` (a reader that only reports, as ``omniaudit verify`` does); files from before the schema record are
    read as they are. The shape is described by ``audit.schema.json`` beside this module (:func:`schema_path`)."""
    path = Path(folder) / "audit.json"
    try:
        audit = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError("no audit.json: not the output folder of an omniaudit audit", file=path) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", file=path) from exc
    if not isinstance(audit, dict):
        raise InputError(f"not an audit result: a JSON {type(audit).__name__}, not an object", file=path)
    version = (audit.get("schema") or {}).get("version") if isinstance(audit.get("schema"), dict) else None
    if not newer and isinstance(version, int) and version > SCHEMA_VERSION:
        raise InputError(f"written by a newer omniaudit (audit.json schema {version}; this omniaudit "
                         f"{__version__()} reads schema {SCHEMA_VERSION} and older): upgrade omniaudit to read it",
                         file=path)
    return audit


def __version__() -> str:
    from omniaudit import __version__ as version

    return version


def schema_path() -> Path:
    """The JSON Schema every ``audit.json`` validates against (shipped with the package)."""
    return Path(__file__).with_name("audit.schema.json")


def figures(folder: str | Path) -> list[Path]:
    """The PNG figures an audit wrote (top level of its folder), by name."""
    return sorted(p for p in Path(folder).glob("*.png") if p.is_file())


def read_predictions(path: str | Path) -> pd.DataFrame:
    """A predictions file of ``omniaudit judge`` (JSONL, one row per item, order and run), values as written."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise InputError("predictions file not found", file=path) from exc
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(f"not a JSON line: {exc}", file=path, row=number) from exc
    return pd.DataFrame.from_records(rows)


def predictions_metrics(frame: pd.DataFrame) -> dict[str, float]:
    """What ``omniaudit judge`` prints, from its file: rows, items (id x order), runs; closed answers parsed
    (``parsed`` true / false) and with option probabilities; free-form answers (``parsed`` null) non-empty."""
    out = {"predictions/rows": float(len(frame))}
    if "id" in frame:
        keys = frame[["id", "order"]] if "order" in frame else frame[["id"]]
        out["predictions/items"] = float(len(keys.astype(str).drop_duplicates()))
    if "run" in frame:
        out["predictions/runs"] = float(frame["run"].nunique())
    if "parsed" in frame:
        parsed = frame["parsed"]
        closed = parsed.notna().to_numpy()
        n_closed = int(closed.sum())
        out["predictions/closed"] = float(n_closed)
        out["predictions/parsed"] = float(sum(bool(v) for v in parsed[closed]))
        if n_closed:
            out["predictions/parse_rate"] = out["predictions/parsed"] / n_closed
        if "option_probs" in frame:
            out["predictions/with_probs"] = float(frame["option_probs"][closed].notna().sum())
        free = ~closed
        out["predictions/free_form"] = float(free.sum())
        if free.any() and "raw" in frame:
            generated = sum(bool(str(v).strip()) for v in frame["raw"][free] if v is not None)
            out["predictions/generated"] = float(generated)
            out["predictions/generated_rate"] = generated / float(free.sum())
    return out


SCHEMA_VERSION = 1


def scorecard_verdicts(card: dict) -> tuple[dict[str, float], pd.DataFrame]:
    """The card's verdicts as summary metrics (``scorecard/<model>/<shortcut>`` its value, ``.../flagged`` 0 / 1)
    and as one table row per model and shortcut."""
    metrics: dict[str, float] = {}
    rows = []
    for model, entry in card["models"].items():
        for shortcut, v in entry["shortcuts"].items():
            if v["status"] in ("flagged", "clear"):
                _put(metrics, f"scorecard/{model}/{shortcut}", v["value"])
                metrics[f"scorecard/{model}/{shortcut}/flagged"] = float(v["flagged"])
            lo, hi = v["ci"]
            rows.append({"model": model, "reference": entry["reference"], "shortcut": shortcut,
                         "status": v["status"], "value": v["value"], "ci_low": lo, "ci_high": hi,
                         "threshold": v["threshold"], "measure": v["measure"], "audit": v["audit"]})
    return metrics, pd.DataFrame(rows)


def shown_input(value: object, base: str | Path | None = None) -> str | None:
    """An input as ``audit.json`` names it, never where it lives on this machine: a local file or folder relative to
    the output folder ``base`` when inside it, else by its name (:func:`~omniaudit.evaluation.report.shown_path`);
    ``NAME=FILE`` with its FILE so; anything else (a Hub repo id, a model spec) as given, any absolute path inside it
    shown so too (``hf:/home/me/model`` -> ``hf:model``). None stays None."""
    from omniaudit.evaluation.report import shown_path, shown_paths_in

    def local(text: str) -> bool:
        try:
            return bool(text) and (Path(text).expanduser().is_absolute() or Path(text).expanduser().exists())
        except (OSError, ValueError):  # not a path this machine can hold (a name too long, a NUL)
            return False

    if value is None:
        return None
    text = str(value)
    if local(text):
        return shown_path(text, base)
    name, sep, path = text.partition("=")
    if sep and name and local(path):
        return f"{name}={shown_path(path, base)}"
    return shown_paths_in(text, base)


def schema(audit: str, dataset: object = None, predictions: object = None, base: str | Path | None = None) -> dict:
    """The record that opens every ``audit.json``: which audit wrote it, with which omniaudit and command, on which
    inputs (their provenance is in the file's ``provenance``). Readers check ``version`` before reading on.

    Inputs and arguments name local files as :func:`shown_input` does (relative to the output folder ``base``, else
    by name), never by where they live on this machine; they are a record of the run, not paths to open again."""
    import sys

    from omniaudit import __version__
    from omniaudit.evaluation.report import shown_paths_in
    from omniaudit.evaluation.runners.transport import redact
    from omniaudit.io import current_policy

    command = current_policy().command
    return {"version": SCHEMA_VERSION, "audit": audit, "omniaudit": __version__, "command": command or "python API",
            "arguments": [shown_paths_in(redact(a), base) for a in sys.argv[1:]] if command else None,
            "inputs": {"dataset": shown_input(dataset, base),
                       "predictions": [shown_input(p, base) for p in predictions]
                       if isinstance(predictions, list | tuple) else shown_input(predictions, base)}}
