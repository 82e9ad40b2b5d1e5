"""``omniaudit verify``'s checks of a scorecard ``OUT``: the predictions files it read against the digests it recorded
(:func:`check_scorecard`), and whether it says what its own numbers say (:func:`card_findings`).

A verdict on a card is a statistical claim decided from numbers the card keeps beside it: each counted measure's
value, null, standard errors and cluster count, its minimum effect and the family it was tested in. So
:func:`card_findings` recomputes every measure's verdict from those numbers (:func:`~omniaudit.evaluation.scorecard.
inference.decide`), each shortcut's status from its measures (flagged when any counted measure is; clear when all are;
else inconclusive), checks ``models/NAME/measures.json`` against ``scorecard.json``, and renders ``scorecard.md``
and ``scorecard.html`` again from ``scorecard.json`` to compare them with the files. A card whose verdicts were
edited (FLAGGED turned clear in json, md and html) fails: its numbers still say flagged. A forger who rewrites the
numbers consistently too is not caught: the files are unkeyed (``omniaudit.verify``'s authorship caveat).
"""

from __future__ import annotations

import json
from pathlib import Path

from omniaudit import __version__
from omniaudit.verify_findings import CANNOT, FAILED, VERIFIED, Finding, code_version
from omniaudit.verify_survey import Context

STATUS = "status.json"  # evaluation.scorecard.answers.STATUS (not imported: that module pulls in the runners)


def check_scorecard(ctx: Context, folder: Path) -> list[Finding]:
    """A scorecard OUT: the version that wrote it, and each model's predictions files against the SHA-256 its
    status.json recorded when the audits read them."""
    from omniaudit.data_builders.fingerprint import file_digest

    where = ctx.shown(folder / "scorecard.json")
    ctx.examined.add(folder / "scorecard.json")
    try:
        card = json.loads((folder / "scorecard.json").read_text(encoding="utf-8"))
        models = list(card.get("models") or {})
    except (OSError, ValueError, AttributeError) as exc:
        return [Finding(FAILED, "scorecard", where, f"not a readable scorecard.json ({exc})")]
    findings = [code_version(where, card.get("omniaudit"), "`omniaudit scorecard`")]
    findings += card_findings(folder, where, card)
    kept = sorted(p.parent.name for p in (folder / "models").glob(f"*/{STATUS}"))
    for name in dict.fromkeys(models + kept):
        status = folder / "models" / name / STATUS
        shown = ctx.shown(status)
        ctx.examined.add(status)
        try:
            entries = json.loads(status.read_text(encoding="utf-8"))
            if not isinstance(entries, dict) or not all(isinstance(e, dict) for e in entries.values()):
                raise ValueError("expected an object of audits, each an object")
        except FileNotFoundError:
            findings.append(Finding(CANNOT, "scorecard", ctx.shown(status.parent, folder=True), f"model {name}: no "
                                    f"{STATUS}, so the digests of the predictions it was scored on are not recorded"))
            continue
        except (OSError, ValueError) as exc:
            findings.append(Finding(FAILED, "scorecard", shown, f"not a readable {STATUS} ({exc})"))
            continue
        for audit, entry in sorted(entries.items()):
            for config, digest in sorted((entry.get("predictions") or {}).items()):
                file = status.parent / f"{config}.jsonl"
                if not file.is_file():
                    findings.append(Finding(FAILED, "scorecard", ctx.shown(file), f"missing: {shown} records it as "
                                                                                  f"the {audit} answers of {name}"))
                elif file_digest(file) != digest:
                    findings.append(Finding(FAILED, "scorecard", ctx.shown(file), f"changed after the scorecard read "
                                            f"it: {shown} records SHA-256 {digest[:16]}..., the file is "
                                            f"{file_digest(file)[:16]}..."))
                else:
                    ctx.digested.add(file)
                    findings.append(Finding(VERIFIED, "scorecard", ctx.shown(file), f"the file the {audit} audit of "
                                            f"{name} read (SHA-256 as {shown} records)"))
    return findings


def _finding(status: str, path: str, what: str) -> Finding:
    return Finding(status, "scorecard", path, what)


def _recomputed(e: dict) -> str | None:
    """A counted measure's verdict decided again from its numbers, or None when it keeps too few to redo it."""
    from omniaudit.evaluation.scorecard.inference import Contrast, decide

    needed = ("value", "null", "se", "se0", "clusters", "n", "side", "delta", "family_size", "ci_level")
    if any(e.get(k) is None for k in needed):
        return None
    m, side = int(e["family_size"]), e["side"]
    alpha = (1 - float(e["ci_level"])) * m / (2 if side == "above" else 1)
    c = Contrast(float(e["value"]), float(e["null"]), float(e["se"]), float(e["se"]), float(e["se"]), float(e["se0"]),
                 int(e["clusters"]), int(e["n"]))
    return decide(c, side, float(e["delta"]), m, alpha)["verdict"]


def _status(evidence: list[dict], recorded: str) -> str:
    """A shortcut's status from its measures' verdicts (``evaluation.scorecard.rules._summary``'s rule)."""
    counted = [e for e in evidence if e.get("counts") and e.get("measured")]
    if any(e.get("verdict") == "flagged" for e in counted):
        return "flagged"
    if counted and all(e.get("verdict") == "clear" for e in counted):
        return "clear"
    return "inconclusive" if counted else recorded  # not answering / not measured: nothing to recompute


def _verdicts(card: dict, where: str) -> list:
    wrong = []
    for name, entry in (card.get("models") or {}).items():
        for shortcut, v in (entry.get("shortcuts") or {}).items():
            evidence = v.get("evidence") or []
            for e in evidence:
                again = _recomputed(e) if e.get("counts") and e.get("measured") else None
                if again is not None and again != e.get("verdict"):
                    wrong.append(f"{name} / {shortcut} / {e.get('measure')}: recorded {e.get('verdict')}, its "
                                 f"numbers decide {again}")
            status = _status(evidence, v.get("status"))
            if status != v.get("status"):
                wrong.append(f"{name} / {shortcut}: recorded {v.get('status')}, its measures say {status}")
    if wrong:
        return [_finding("failed", where, "verdicts that its own numbers contradict: " + "; ".join(wrong))]
    return [_finding("verified", where, "every verdict decided again from the numbers it keeps (value, standard "
                                        "errors, clusters, minimum effect, family) agrees")]


def _measures(card: dict, folder: Path) -> list:
    out = []
    for name, entry in (card.get("models") or {}).items():
        path = folder / "models" / name / "measures.json"
        if not path.is_file():
            continue
        shown = f"models/{name}/measures.json"
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))["measures"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out.append(_finding("failed", shown, f"not a readable measures.json ({exc})"))
            continue
        carded = {s: [e for e in v.get("evidence") or [] if e.get("key")]
                  for s, v in (entry.get("shortcuts") or {}).items()}
        differ = [s for s in carded if [(e.get("measure"), e.get("verdict"), e.get("value")) for e in carded[s]]
                  != [(e.get("measure"), e.get("verdict"), e.get("value")) for e in kept.get(s, [])]]
        out.append(_finding("failed", shown, f"disagrees with scorecard.json on {', '.join(differ)}") if differ else
                   _finding("verified", shown, "the same measures and verdicts as scorecard.json"))
    return out


def _rendered(card: dict, folder: Path) -> list:
    """scorecard.md and scorecard.html against what scorecard.json renders to (this version's renderer only)."""
    from omniaudit.evaluation.scorecard.card import blocks, render_html, render_markdown

    if card.get("omniaudit") != __version__:
        return [_finding("cannot vouch", "scorecard.md", f"written by omniaudit {card.get('omniaudit')}, rendered "
                                                         f"here by {__version__}: not compared with scorecard.json")]
    figs = {p.stem: f"figures/{p.name}" for p in sorted((folder / "figures").glob("*.png"))}
    figs = {"verdicts": figs.pop("verdicts"), **figs} if "verdicts" in figs else figs
    items = blocks(card, figs, folder)
    out = []
    for name, text in (("scorecard.md", render_markdown(items)), ("scorecard.html", render_html(items, folder))):
        path = folder / name
        if not path.is_file():
            continue
        same = path.read_text(encoding="utf-8") == text
        out.append(_finding("verified", name, "shows what scorecard.json holds") if same else
                   _finding("failed", name, "does not show what scorecard.json holds (edited after it was written)"))
    return out


def card_findings(folder: Path, where: str, card: dict) -> list:
    """The consistency checks of one scorecard ``folder`` (see the module docstring)."""
    return [*_verdicts(card, where), *_measures(card, folder), *_rendered(card, folder)]
