"""The card: ``scorecard.json`` (for machines), ``scorecard.md`` and a self-contained ``scorecard.html`` (figures
inline as base64 PNG, no script, style or font loaded from anywhere), written from one list of blocks so the two
say the same. Every measure is shown beside what the reference models (``scripted:``) score on the same items.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omniaudit import __version__
from omniaudit.audits import get
from omniaudit.evaluation.report import shown_path, shown_paths_in
from omniaudit.evaluation.scorecard import figures, glossary, html_reports
from omniaudit.evaluation.scorecard.cells import cell as _cell
from omniaudit.evaluation.scorecard.cells import value as _value
from omniaudit.evaluation.scorecard.inference import ALPHA, FWER
from omniaudit.evaluation.scorecard.references import ORACLE, planted, reference_specs
from omniaudit.evaluation.scorecard.render import render_html, render_markdown
from omniaudit.shortcuts import BY_NAME, SHORTCUTS

KEY_FIGURES = 4  # the audits' own key figures shown per audit section (models under test first)
STATISTICS = (f"Each measure is a matched contrast on the same items, tested against its null: the value a "
              f"content-blind model has on those very items (computed per item). Intervals are cluster-robust with "
              f"Student-t critical values on clusters - 1 degrees of freedom; all counted measures of one model are "
              f"one family (Bonferroni at {ALPHA:.0%}, so that at most {FWER:.0%} of models without a shortcut get "
              f"any flag, measured by simulation): a CI shown is simultaneous and a verdict is "
              f"FLAGGED when it excludes the null on the shortcut's side and the minimum effect of interest is not "
              f"ruled out. clear: the one-sided 95% bound rules out the shortcut's minimum effect of interest (an "
              f"equivalence test; 'clear, small' when the CI also excludes the null: a real effect below that "
              f"minimum); otherwise inconclusive (too few items to tell). MDE: the effect flagged with 80% power "
              f"on these items. Details: "
              f"omniaudit.evaluation.scorecard.inference.")
LEGEND = ("How to read a cell: FLAGGED, with the direction of a two-sided measure (slot A, longer, follows the label) "
          "or the strata it is flagged in (FLAGGED in concat), the value [CI] against its null and the MDE (below the "
          "minimum effect, also the 95% bound that does not rule the minimum out); clear, "
          "the value and the one-sided 95% bound that rules out the null plus the minimum effect of interest "
          "(clear, small: a real effect below that minimum); inconclusive, the value [CI], the MDE and about how "
          "many clusters would decide; not measured or not answering: no verdict. Rows marked (reference) are the "
          "calibration models. How the verdicts are decided: [below](#how-the-verdicts-are-decided); every term: "
          "[glossary](#glossary).")


def smoke_banner(limit: int) -> str:
    """What a smoke run's card (``scorecard --limit N``) says first, in its title and beside every summary."""
    return f"smoke run: at most {limit} items per config \u2014 verdicts are not valid"


def calibration(models: dict[str, str], verdicts: dict[str, dict]) -> dict[str, dict]:
    """Per shortcut, whether the reference models that ran calibrate it: the oracle is not flagged and every model
    planted with the shortcut (scripted or learned), where it was measured, is flagged (a planted model not answering
    or not measured leaves the calibration unchecked, not failed). ``{"ok": bool, "why": [...]}``."""
    out = {}
    for shortcut in SHORTCUTS:
        why = []
        for name, spec in models.items():
            status = verdicts[name][shortcut]["status"]
            if spec == ORACLE and status == "flagged":
                why.append(f"the oracle ({name}) is flagged")
            if planted(spec) == shortcut and status in ("clear", "inconclusive"):
                why.append(f"its planted reference ({name}) is {status}")
        out[shortcut] = {"ok": not why, "why": why}
    return out


def uncalibrated(verdicts: dict[str, dict], models: dict[str, str], failed: dict[str, dict]) -> None:
    """A shortcut whose calibration failed says nothing for the models under test: their verdicts there become
    inconclusive (the measures are kept), in place."""
    for name, spec in models.items():
        if spec in reference_specs():
            continue
        for shortcut, check in failed.items():
            v = verdicts[name][shortcut]
            if not check["ok"] and v["status"] in ("flagged", "clear"):
                v.update(status="inconclusive", flagged=False, calibration="failed: " + "; ".join(check["why"]))


def summary(entry: dict) -> str:
    """One model's verdicts in a line: what is flagged, or whether "no flag" means clear or unmeasured."""
    status = {s: entry["shortcuts"][s]["status"] for s in SHORTCUTS}
    flagged = [s for s in SHORTCUTS if status[s] == "flagged"]
    clear = [s for s in SHORTCUTS if status[s] == "clear"]
    if flagged:
        return "flags " + ", ".join(f"{s} ({entry['shortcuts'][s]['stratum']})"
                                    if entry["shortcuts"][s].get("stratum") not in (None, "all") else s
                                    for s in flagged)
    if len(clear) == len(SHORTCUTS):
        return f"no shortcut found (clear on all {len(SHORTCUTS)})"
    if not clear and all(v.startswith("not ") for v in status.values()):
        return "nothing measured (" + ", ".join(sorted(set(status.values()))) + ")"
    rest = [f"{s} {status[s]}" for s in SHORTCUTS if status[s] != "clear"]
    return f"no flag; clear on {len(clear)} of {len(SHORTCUTS)}" + (f" ({', '.join(rest)})" if rest else "")


def reader_checks(files: dict[str, str], out: Path) -> dict[str, dict]:
    """Model name -> the readers' agreement with a person's labels of that model's own replies
    (:func:`omniaudit.evaluation.readings.agreement`)."""
    from omniaudit.evaluation.readings import agreement

    checked = {}
    for name, file in files.items():
        a = agreement(file)
        checked[name] = {"file": _relative(file, out), "n": a.n, "accuracy": a.accuracy, "kappa": a.kappa,
                         "misread": len(a.misread), "left_unread": len(a.missed), "meets_goal": a.meets_goal,
                         "text": shown_paths_in(a.summary(), out)}
    return checked


def rank_key(entry: dict, name: str) -> tuple:
    """Leaderboard order by measured evidence: a model with any measured verdict before one with none (a model that
    answered nothing says nothing, not "no shortcut"), then fewest flags, most shortcuts measured clear, fewest
    inconclusive."""
    status = [entry["shortcuts"][s]["status"] for s in SHORTCUTS]
    measured = sum(s in ("flagged", "clear", "inconclusive") for s in status)
    return (measured == 0, status.count("flagged"), -status.count("clear"), status.count("inconclusive"), name)


def _relative(path: Path | str | None, out: Path) -> str | None:
    """A file or folder as the card names it: relative to the card's folder, or by its name only when outside it (a
    ``--data`` dataset, a ``--reader-check`` file), never where it lives on this machine; a Hub repo id as given."""
    return shown_path(path, out)


def _headline(audit: str, folder: Path | None, name: str) -> dict:
    """The registry's headline paths of ``audit.json`` that resolve (a per-judge dict: this judge's entry)."""
    from omniaudit.evaluation.audit_outputs import read_audit

    if folder is None or not (folder / "audit.json").is_file():
        return {}
    data = read_audit(folder)
    out = {}
    for path in get(audit).headline:
        node = data
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and name in node:
            node = node[name]
        if node is not None:
            out[path] = node
    return out


def _usage(run, items: dict[str, int], out: Path) -> dict:
    """status, reason (its file paths as :func:`_relative` names them), n_items, parse_rate (the share of answers the
    audit could read) and unread (why closed answers named no option: reason -> count) of one model's run."""
    return {"status": run.status, "reason": shown_paths_in(run.reason, out), "n_items": sum(items.values()),
            "parse_rate": run.parse_rate, "unread": getattr(run, "unread", {}) or {}}


def _items(dataset, configs) -> dict[str, int]:
    from omniaudit.data_builders.hub import load_config

    return {c: len(load_config(dataset, c, columns=["id"])) for c in configs}


def assemble(out: Path, card, results: dict, verdicts: dict) -> dict:
    """The ``scorecard.json`` structure."""
    from omniaudit.runners.transport import redact

    audits: dict[str, dict[str, Any]] = {}
    entry: dict[str, Any]
    for audit in card.audits:
        dataset = card.datasets.get(audit)
        entry = {"title": get(audit).title, "paper": get(audit).paper, "dataset": _relative(dataset, out)}
        if dataset is not None:
            entry["source"] = ("--data" if audit in card.options.data
                               else f"embedded default: {get(audit).describe(card.options.size)}")
            entry["items"] = _items(dataset, card.needs(audit))
            entry["runs"] = {c: get(audit).runs.get(c, 1) for c in entry["items"]}
            if card.options.limit is not None:  # a smoke run: the items each model was asked, of each config
                entry["sampled"] = {c: n if (picked := card.sample(dataset, c)) is None else len(picked)
                                    for c, n in entry["items"].items()}
        audits[audit] = entry
    references = [m for m, spec in card.models.items() if spec in reference_specs()]
    models = {}
    for name, runs in results.items():
        per_audit = {}
        for audit, run in runs.items():
            entry = _usage(run, audits[audit].get("items", {}), out)
            if run.folder is not None and (run.folder / "audit.json").is_file():
                entry["folder"] = _relative(run.folder, out)
                entry["headline"] = _headline(audit, run.folder, name)
            per_audit[audit] = entry
        models[name] = {"spec": shown_paths_in(redact(card.models[name]), out), "reference": name in references,
                        "audits": per_audit, "shortcuts": verdicts[name]}
    for name in models:  # every number beside the reference models' on the same items
        for shortcut, v in models[name]["shortcuts"].items():
            v["reference"] = {r: verdicts[r][shortcut]["value"] for r in references}
            for e in v["evidence"]:
                e["reference"] = {r: next((x["value"] for x in verdicts[r][shortcut]["evidence"]
                                           if x["measure"] == e["measure"]), None) for r in references}
    smoke = card.options.limit
    if smoke is None:
        checks = calibration(card.models, verdicts)
        uncalibrated(verdicts, card.models, checks)
    else:  # a sample of a few items per config holds no reference to its flag: the check does not apply
        checks = {s: {"ok": None, "why": ["not applicable: a smoke run (--limit) is not checked"]} for s in SHORTCUTS}
    checked = reader_checks(card.options.reader_checks, out)
    for name, entry in models.items():
        entry["summary"] = summary(entry) if smoke is None else f"{smoke_banner(smoke)}: {summary(entry)}"
        if name in checked:
            entry["reader_check"] = checked[name]
            if not checked[name]["meets_goal"]:  # the verdicts rest on readings a person found wrong too often
                entry["summary"] += f"; reader check failed: {checked[name]['text']}"
        entry["family_size"] = next((e["family_size"] for v in entry["shortcuts"].values() for e in v["evidence"]
                                     if e.get("family_size")), 0)
    smoke_entry = {} if smoke is None else {"smoke": {
        "limit": smoke, "seed": card.limit_seed(), "valid": False, "text": smoke_banner(smoke),
        "note": "every judge run answered a seeded, stratified sample of whole item groups (judge --limit), audited "
                "as a partial run; the calibration of the reference models is not checked"}}
    rules = {s: BY_NAME[s].rule for s in SHORTCUTS}
    return {"omniaudit": __version__, **smoke_entry, "shortcuts": list(SHORTCUTS), "rules": rules,
            "remedies": remedies({m: e["shortcuts"] for m, e in models.items() if not e["reference"]}),
            "rules_doc": "omniaudit.evaluation.scorecard.rules", "statistics": STATISTICS, "references": references,
            "calibration": checks,
            "calibrated": None if smoke is not None else all(c["ok"] for c in checks.values()),
            "flagged": {m: [s for s in SHORTCUTS if verdicts[m][s]["status"] == "flagged"] for m in models},
            "audits": audits, "models": models}


def blocks(data: dict, figs: dict[str, str], out_dir: Path | None = None) -> list[tuple]:
    """The card as blocks: ("h", level, text), ("p", text), ("table", headers, rows), ("img", file, alt),
    ("ul", items), ("links", [(name, href), ...]), ("glossary", terms): rendered by :mod:`.render`."""
    models, audits = data["models"], data["audits"]
    refs = data["references"]
    smoke = data.get("smoke")
    title = "Shortcut scorecard" + (f" ({smoke['text']})" if smoke else "")
    out: list[tuple] = [("h", 1, title)]
    if smoke:
        out.append(("p", f"This is a smoke run (--limit {smoke['limit']}). Each model answered a seeded sample "
                         f"(seed {smoke['seed']}) of at most {smoke['limit']} items of every item config, audited as "
                         "a partial run (an audit that cannot read a sample is listed as skipped): the card shows "
                         "that every model answers every config and gets through the audits, and every verdict below "
                         "is shown as computed, but none is a finding (too few items, and the reference models' "
                         "calibration is not checked). Run without --limit for the card."))
    failed = {s: c for s, c in data["calibration"].items() if c["ok"] is False}
    if failed:
        out.append(("p", "CALIBRATION FAILED for " + "; ".join(f"{s} ({', '.join(c['why'])})"
                                                              for s, c in failed.items())
                    + ": the verdicts of the models under test there are inconclusive."))
    out.append(("h", 2, "Verdicts"))
    out.append(("table", ["model", *SHORTCUTS, "summary"],
                [[m + (" (reference)" if m in refs else ""), *(_cell(models[m]["shortcuts"][s]) for s in SHORTCUTS),
                  models[m]["summary"]] for m in models]))
    out.append(("p", LEGEND))
    if "verdicts" in figs:
        out.append(("img", figs["verdicts"], "verdict heatmap"))
    tested = [m for m in models if m not in refs]
    if len(tested) > 1:  # several models under test: a leaderboard by measured evidence
        board = sorted(tested, key=lambda m: rank_key(models[m], m))
        out.append(("h", 3, "Leaderboard"))
        out.append(("table", ["rank", "model", "flagged", "clear", "inconclusive", "not measured or not answering"],
                    [[i, m, *(", ".join(s for s in SHORTCUTS if _kind(models[m]["shortcuts"][s]["status"]) == k)
                              or "none" for k in ("flagged", "clear", "inconclusive", "not"))]
                     for i, m in enumerate(board, start=1)]))
    out += [("h", 2, "How the verdicts are decided"), (
        "p", "Where each model answers by a shortcut instead of the evidence: FLAGGED (found: the simultaneous "
             "interval shown excludes the null, a content-blind model's value, and an effect of interest is not "
             "ruled out; a two-sided measure names its direction), clear (ruled out: the one-sided 95% bound shown "
             "stays within the null plus the shortcut's minimum effect of interest; 'clear, small' when a real "
             "effect below that minimum is measured), or inconclusive (too few items to tell either way: the MDE "
             "the items can detect and about how many clusters would decide are shown). "
             "Reference models answer the same items as calibration (scripted rules, and tiny models trained on "
             "data where the shortcut pays): the oracle must be clear everywhere, each "
             "planted model flagged for its own shortcut."), ("p", STATISTICS)]
    if data.get("baseline"):
        out += baseline_blocks(data["baseline"])
    if data.get("remedies"):
        out += remedy_blocks(data["remedies"])
    out.append(("h", 2, "Audits and items"))
    rows = []
    for audit, a in audits.items():
        sampled = a.get("sampled", {})
        items = ", ".join((f"{c} {sampled[c]} of {n}" if c in sampled else f"{c} {n}")
                          + (f" x {a['runs'][c]} runs" if a["runs"].get(c, 1) > 1 else "")
                          for c, n in a.get("items", {}).items()) or "not built (no model runs it)"
        rows.append([audit, a["title"], a.get("source", "n/a"), items])
    out.append(("table", ["audit", "what", "dataset", "items"], rows))
    out.append(("table", ["model", *audits],
                [[m, *(_status(models[m]["audits"][a]) for a in audits)] for m in models]))
    out.append(("h", 2, "Rules"))
    out.append(("ul", [f"{s}: {BY_NAME[s].rule}" for s in SHORTCUTS]
                + ["Reference values: the value each reference model (scripted) has on the same items. Full "
                   "text: the docstring of omniaudit.evaluation.scorecard.rules."]))
    for audit in audits:
        out += _audit_section(audit, models, refs, figs, out_dir)
    out.append(("glossary", glossary.terms(audits)))  # the terms the card uses, each use linked to its entry
    return out


def _change(row: dict) -> str:
    """A paired change with its interval, or why there is none."""
    if row.get("change") is None:
        return "not paired"
    digits = 1 if row.get("unit") == "points" else 3
    lo, hi = row["ci"]
    return f"{row['change']:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def baseline_blocks(comparison: dict) -> list[tuple]:
    """The card's section on models against the baseline: each shortcut's status and measures' paired changes, and
    the change in task accuracy."""
    base = comparison["baseline"]
    out: list[tuple] = [("h", 2, f"Against the baseline ({base})"), (
        "p", f"Each measure's effect (value minus its content-blind null) in {base} and in the model, and the paired "
             "change on the same items (cluster-robust, simultaneous over the model's measures). REMOVED: flagged "
             f"for {base}, clear for the model, and every measure that flagged {base} moved towards its null with an "
             "interval excluding 0; reduced: moved so, but not clear; introduced: flagged for the model only.")]
    rows, acc = [], []
    for name, entry in comparison["models"].items():
        for shortcut, s in entry["shortcuts"].items():
            for r in s["changes"] or [{}]:
                rows.append([name, shortcut, s["status"].upper() if s["status"] == "removed" else s["status"],
                             s["before"], s["after"], r.get("measure", "no measure in both"),
                             _value(r.get("before"), 3), _value(r.get("after"), 3), _change(r) if r else "n/a"])
        for audit, a in entry["accuracy"].items():
            acc.append([name, audit, _value(a["before"], 3), _value(a["after"], 3), _change(a)])
        acc += [[name, audit, "n/a", "n/a", note] for audit, note in entry.get("accuracy_notes", {}).items()]
    out.append(("table", ["model", "shortcut", "against baseline", f"{base}", "model", "measure",
                          f"effect in {base}", "effect in model", "paired change [CI]"], rows))
    out.append(("h", 3, "Task accuracy (the alignment tax)"))
    out.append(("table", ["model", "audit", f"accuracy of {base}", "accuracy of model", "paired change [95% CI]"],
                acc))
    control = comparison.get("control")
    if control and any(entry.get("against_control") for entry in comparison["models"].values()):
        # held: the change's 95% interval above -margin, a test, never two accuracies side by side
        said = {True: "held", False: "not shown held", None: "n/a"}
        held = [[name, audit, _value(a["before"], 3), _value(a["after"], 3), _change(a), said[a.get("held")]]
                for name, entry in comparison["models"].items()
                for audit, a in entry.get("against_control", {}).items()]
        out += [("h", 3, f"Task accuracy against the control ({control})"),
                ("table", ["model", "audit", f"accuracy of {control}", "accuracy of model", "paired change [95% CI]",
                           f"held within {comparison['margin']}"], held)]
    return out


def remedies(verdicts: dict[str, dict]) -> dict[str, dict]:
    """Per shortcut flagged for a model under test: the models, and the remedy the papers prescribe (or that none
    does), from the shortcut table; its commands in the form that runs where the card is written
    (:func:`~omniaudit.launch_files.render_command`)."""
    from dataclasses import asdict

    from omniaudit.launch_files import render_command
    from omniaudit.shortcuts import BY_NAME

    out = {}
    for s in SHORTCUTS:
        flagged = [m for m, v in verdicts.items() if v[s]["status"] == "flagged"]
        remedy = BY_NAME[s].remedy
        if flagged and remedy is not None:
            out[s] = {"models": flagged, **asdict(remedy), "commands": [render_command(c) for c in remedy.commands]}
    return out


def remedy_blocks(found: dict[str, dict]) -> list[tuple]:
    """The card's prescriptions: what removes each flagged shortcut and the commands (``omniaudit remedy NAME``)."""
    out: list[tuple] = [("h", 2, "Remedies"), (
        "p", "For each shortcut flagged above, what the papers prescribe to train it away and the commands that "
             "build its training set and train it (`omniaudit remedy SHORTCUT` prints them; upper-case words are "
             "yours). After training, score the new model beside the old one with --baseline OLD: the card then "
             "says whether the shortcut was removed and what it cost in accuracy.")]
    for shortcut, r in found.items():
        head = f"{shortcut} (flagged for {', '.join(r['models'])}): {r['what']}. Source: {r['source']}."
        out.append(("p", head if r["supported"] else head + " The card prescribes no training for it."))
        if r["commands"]:
            out.append(("ul", [f"`{c}`" for c in r["commands"]]))
    return out


def _kind(status: str) -> str:
    return "not" if status.startswith("not ") else status


def _status(entry: dict) -> str:
    rate, unread = entry.get("parse_rate"), entry.get("unread") or {}
    text = entry["status"] + (f", parsed {rate:.0%}" if rate is not None else "")
    if unread:  # a reply read as no answer, and why: doubt is never read as an answer
        text += " (unread: " + ", ".join(f"{n} {why}" for why, n in unread.items()) + ")"
    return text if entry["status"] != "skipped" else f"skipped: {entry['reason']}"


def _audit_section(audit: str, models: dict, refs: list[str], figs: dict[str, str],
                   out_dir: Path | None) -> list[tuple]:
    out: list[tuple] = [("h", 2, f"Audit: {audit}")]
    if audit in figs:
        out.append(("img", figs[audit], f"{audit} evidence by model"))
    measures: dict[str, dict[str, dict]] = {}
    for m, entry in models.items():
        for s in SHORTCUTS:
            for e in entry["shortcuts"][s]["evidence"]:
                if e["audit"] == audit:
                    measures.setdefault(f"{s}: {e['measure']}", {})[m] = e
    shown: bool | list[str]  # a measure's "shown, not used"; then the models whose key figure is shown
    if measures:
        rows = []
        for title, per_model in measures.items():
            shown = not any(e["counts"] for e in per_model.values())
            row = [title + (" (shown, not used)" if shown else "")]
            for m in models:
                e = per_model.get(m)
                if e is None or not e["measured"]:
                    row.append(e["note"] if e is not None and e.get("note") else "")
                    continue
                text = f"{_value(e['value'])} [{_value(e['ci'][0])}, {_value(e['ci'][1])}]"
                if e.get("verdict"):
                    text += f" {e['verdict']}, null {_value(e['null'])}, MDE {_value(e.get('mde'))}"
                note = f" ({e['note']})" if e.get("note") and not shown else ""
                row.append(f"**{text}**{note}" if e["flagged"] else text + ("" if e["counts"] or shown else note))
            rows.append(row)
        out.append(("table", ["measure (value [CI], verdict, null, MDE)", *models], rows))
    links = [(m, f"{e['folder']}/report.md") for m, x in models.items() if (e := x["audits"].get(audit))
             and e.get("folder")]
    if links:
        out.append(("links", links))
    key = get(audit).figure
    folders = {m: x["audits"][audit]["folder"] for m, x in models.items() if x["audits"].get(audit, {}).get("folder")}
    shown = [m for m in folders if m not in refs][:KEY_FIGURES] or list(folders)[:1]
    for m in shown:  # the audit's own key figure: of the models under test (else of the first reference)
        if key and out_dir is not None and (out_dir / folders[m] / key).is_file():
            out.append(("img", f"{folders[m]}/{key}", f"{audit}: {m}"))
    return out


def write_card(out: Path, card, results: dict, verdicts: dict, baseline: dict | None = None) -> dict:
    """Write figures/, scorecard.json, scorecard.md and scorecard.html (each file atomically); returns the JSON.
    ``baseline``: the comparison of ``--baseline`` (:func:`.baseline.against_baseline`), shown after the verdicts."""
    from omniaudit.io import atomic_file, to_json

    data = assemble(out, card, results, verdicts)
    if baseline is not None:
        data["baseline"] = baseline
    (out / "figures").mkdir(exist_ok=True)
    figs = {}
    with atomic_file(out / "figures" / "verdicts.png") as tmp:
        figures.plot_verdicts(verdicts, tmp)
    figs["verdicts"] = "figures/verdicts.png"
    for audit in card.audits:
        with atomic_file(out / "figures" / f"{audit}.png") as tmp:
            drawn = figures.plot_evidence(audit, verdicts, tmp)
            if not drawn:
                tmp.write_bytes(b"")
        if drawn:
            figs[audit] = f"figures/{audit}.png"
        else:
            (out / "figures" / f"{audit}.png").unlink(missing_ok=True)
    for name, entry in data["models"].items():  # each model's measures beside its audits: a cell traced to its data
        records = {s: [e for e in v["evidence"] if e.get("key")] for s, v in entry["shortcuts"].items()}
        if (out / "models" / name).is_dir():
            with atomic_file(out / "models" / name / "measures.json") as tmp:
                tmp.write_text(to_json({"model": name, "family_size": entry["family_size"], "measures": records}),
                               encoding="utf-8")
    html_reports.write_reports(out, data)  # each audit's report.md as report.html, linked from scorecard.html
    items = blocks(data, figs, out)
    for name, text in (("scorecard.json", to_json(data)), ("scorecard.md", render_markdown(items)),
                       ("scorecard.html", render_html(items, out))):
        with atomic_file(out / name) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return data
