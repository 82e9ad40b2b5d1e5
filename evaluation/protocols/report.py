"""The judge-protocol report: the layouts of the paper's Tables II-V, one row per judge, CIs in audit.json."""

from __future__ import annotations

from omniaudit.evaluation.predictions import label_sources_sentence
from omniaudit.evaluation.report import fmt, markdown_table

BLUEPRINT = ("audio", "skeleton", "descriptors", "true", "wrong", "no_frame", "wrong_audio")
PLACEMENTS = ("before", "after", "system", "rubric")
CUES = ("none", "conf_spec", "conf_ref", "conf_both")


def _v(entry: dict | None, digits: int = 2) -> str:
    return "—" if not entry else fmt(entry.get("value"), digits)


def _attributes(result: dict, metric: str, config: str | None = None) -> list[str]:
    names = set()
    for per_judge in result[metric].values():
        node = per_judge.get(config, {}) if config else per_judge
        names |= set(node)
    return sorted(names)


def _cell(entry: dict | None, parse: dict | None) -> str:
    """A Table IV cell: the rate with its n and the parse rate beside it."""
    if not entry:
        return "—"
    return f"{_v(entry)} [n={entry.get('n')}, parse {_v(parse)}]"


def _ci(entry: dict | None) -> str:
    if not entry or entry.get("value") is None:
        return "—"
    lo, hi = entry["ci"]
    return f"{entry['value']:+.2f} [{fmt(lo, 2)}, {fmt(hi, 2)}]"


def _mean(entries: list[dict | None]) -> float | None:
    vals = [e["value"] for e in entries if e and e.get("value") is not None]
    return sum(vals) / len(vals) if vals else None


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """Rows of judges with no answer in this table are left out."""
    kept = [r for r in rows if any(c not in ("—", "— (—)", "n/a") for c in r[1:])]
    return markdown_table(headers, kept) if kept else "_no judge answered these items_"


def protocols_report(result: dict) -> str:
    judges = result["judges"]
    out = ["# Judge-protocol audit", "",
           f"Dataset `{result['dataset']}`; judges: {', '.join(f'`{j}`' for j in judges)}. Cells are point estimates; "
           "95% bootstrap CIs (clips or trials resampled) are in `audit.json`. Unparseable answers count as misses.",
           ""] + _label_sources(result)
    acc = result["accuracy"]
    for attribute in _attributes(result, "accuracy", "blueprint"):
        rows = [[j] + [_v(acc[j].get("blueprint", {}).get(attribute, {}).get(c)) for c in BLUEPRINT] for j in judges]
        out += [f"## RQ1 specialist copy: {attribute} (Table II layout, accuracy)", "",
                "`wrong_audio` is decisive: the wrong specialist label next to the audio. A listening judge stays "
                "near its `audio` accuracy; a copying judge falls towards 0.", "",
                _table(["Judge", *BLUEPRINT], rows), ""]
    rf, rfn = result["rf"], result["rf_normalized"]
    for attribute in _attributes(result, "rf"):
        k = next((e["k"] for j in judges for e in rfn[j].get(attribute, {}).values()), None)
        chance = f", chance {1 / (k - 1):.2f}" if k and k > 2 else ""
        rows = []
        for j in judges:
            ref_acc = acc[j].get("reference", {}).get(attribute, {})
            parse = result["parse_rate"][j].get("reference", {}).get(attribute, {})
            match = _mean([ref_acc.get(f"match/{p}") for p in PLACEMENTS])
            cells = [f"{_v(rf[j].get(attribute, {}).get(p))} ({_v(rfn[j].get(attribute, {}).get(p))})"
                     for p in PLACEMENTS]
            rows.append([j, fmt(match, 2), fmt(_mean(list(parse.values())), 2), *cells])
        out += [f"## RQ2 reference placement: {attribute} (Table III layout, K={k}{chance})", "",
                "`match`: accuracy with the true label as reference (mean over placements). Other cells: "
                "reference-follow rate on wrong references (eq. 1), chance-normalised (eq. 2) in parentheses.", "",
                _table(["Judge", "match", "parse", *PLACEMENTS], rows), ""]
    lock, gold, p_a = result["lock"], result["gold_aligned"], result["p_a"]
    tasks = sorted({t for j in judges for f in lock[j].values() for t in f})
    formats = sorted({f for j in judges for f in list(lock[j]) + list(p_a[j])})
    if formats:
        rows = []
        for f in formats:
            for j in judges:
                parse = result["parse_rate"][j].get("pairwise", {})
                row = [f"{j} ({f})", _cell(p_a[j].get(f), parse.get("identical", {}).get(f))]
                for t in tasks:
                    pt = parse.get(t, {}).get(f)
                    row += [_cell(lock[j].get(f, {}).get(t), pt), _cell(gold[j].get(f, {}).get(t), pt)]
                rows.append(row)
        headers = ["Judge (format)", "p_A"] + [h for t in tasks for h in (f"{t} lock", f"{t} g")]
        out += ["## RQ3 pairwise order (Table IV layout)", "",
                "lock: same slot in both orders (eq. 3, trials with both orders parsed); g: the chosen slot holds the "
                "gold clip (eq. 4, all ordered trials); p_A: slot-A rate on identical clips (parsed answers). Each "
                "cell: rate [n, parse rate of that task and format]; n counts trials (lock) or ordered items.", "",
                _table(headers, rows), ""]
    follow = result["follow_cue"]
    for attribute in _attributes(result, "follow_cue"):
        rows = [[j, _v(acc[j].get("cue_conflict", {}).get(attribute, {}).get("none"))]
                + [_v(follow[j].get(attribute, {}).get(c)) for c in CUES[1:]] for j in judges]
        out += [f"## Cue conflict: {attribute} (Table V layout, follow-cue)", "",
                "The audio keeps its true label; the wrong label is given by the specialist block (conf_spec), the "
                "verbal reference (conf_ref) or both. `none` is the audio-only baseline (accuracy with no cue); "
                "`follow_cue.none` in audit.json is the rate of the would-be wrong label without a cue.", "",
                _table(["Judge", *CUES], rows), ""]
    out += _differences(result) + _modes(result) + _stability(result)
    return "\n".join(out)


def _label_sources(result: dict) -> list[str]:
    """How each judge's labels were obtained: rule reader, LLM extractor, option probabilities, given, unparsed."""
    lines = []
    for j in result["judges"]:
        src = result.get("label_sources", {}).get(j)
        if not src:
            continue
        line = f"- `{j}`: {label_sources_sentence(src)}"
        lines.append(line)
    return ["How labels were obtained (parse cells move when an extractor fills labels):", "", *lines, ""] \
        if lines else []


def _differences(result: dict) -> list[str]:
    judges = result["judges"]
    rows = []
    for j in judges:
        for attribute, e in sorted(result.get("rf_spread", {}).get(j, {}).items()):
            rows.append([j, f"RF spread, {attribute} ({e['most']} - {e['least']})", _ci(e)])
        for attribute, e in sorted(result.get("spec_minus_ref", {}).get(j, {}).items()):
            rows.append([j, f"follow-cue conf_spec - conf_ref, {attribute}", _ci(e)])
        for metric, tasks in sorted(result.get("concat_minus_native", {}).get(j, {}).items()):
            for task, e in sorted(tasks.items()):
                name = {"gold_aligned": "g", "p_a": "p_A"}.get(metric, metric)
                rows.append([j, f"{name} concat - native, {task}", _ci(e)])
    if not rows:
        return []
    return ["## Paired differences", "",
            "Each difference is bootstrapped on one resample matrix of the same clusters (clips; pairwise: trials "
            "across both formats), so its 95% CI is a paired test: overlapping marginal CIs are not one. RF spread "
            "takes the most- and least-following placements at the point estimate.", "",
            markdown_table(["Judge", "difference", "value [95% CI]"], rows), ""]


def _modes(result: dict) -> list[str]:
    from omniaudit.evaluation.protocols import modes as pm

    modes = result.get("modes", {})
    rows = []
    for j in result["judges"]:
        m = modes.get(j, {})
        for f, entry in sorted(m.get("pairwise", {}).items()):
            tasks = ", ".join(f"{t}: {mode}" for t, mode in sorted(entry["tasks"].items()) if mode)
            rows.append([j, f"pairwise ({f})", entry["mode"] or "—", tasks])
        for attribute, channels in sorted(m.get("labels", {}).items()):
            if "answers" in channels:  # gated: no channel read
                a = channels["answers"]
                detail = (f"{a['n']} answers, parse rate {a['parse_rate']:.2f}"
                          + ("" if a.get("entropy") is None else f", label entropy {a['entropy']:.2f}")
                          + ("" if not a.get("top_label") else f", '{a['top_label']}' {a['top_share']:.0%}"))
            else:
                detail = ", ".join(f"{c}: {v['mode']} ({v['cell']} {v['rate']:.2f})" for c, v in channels.items()
                                   if isinstance(v, dict))
            rows.append([j, f"labels ({attribute})", channels.get("mode") or "—", detail])
    if not rows:
        return []
    return ["## Judge modes", "",
            f"A cell is given a mode only when the judge answers it: a parse rate of at least {pm.MIN_PARSE_RATE} "
            f"(else {pm.NOT_ANSWERING}) and, for an attribute's labels, a normalised label entropy H / log2 K of at "
            f"least {pm.MIN_LABEL_ENTROPY} (else {pm.CONSTANT}; one slot for every pairwise trial is the fully "
            "locked mode itself). "
            f"Pairwise (§V-D): fully locked when lock >= {pm.FULL_LOCK}; locked when lock >= {pm.LOCKED} and "
            f"|g - 0.5| <= {pm.LOCKED_G_BAND}; engaged when lock <= {pm.ENGAGED_LOCK} and g >= {pm.ENGAGED_G}; "
            "otherwise intermediate; a judge's mode is the one most tasks share (else task-dependent). Labels "
            "(§V-B, V-C, V-E): a channel is label-following when the wrong label it shows, next to the audio, is "
            f"emitted above chance by a chance-normalised rate over {pm.FOLLOWING} (eq. 2); else engaged.", "",
            markdown_table(["Judge", "protocol", "mode", "per task / channel"], rows), ""]


def _stability(result: dict) -> list[str]:
    stability = result.get("stability", {})
    if not stability:
        return []
    rows = []
    for j, st in stability.items():
        sampling = result.get("sampling", {}).get(j, {})
        settings = ", ".join(f"{k} {'/'.join(v)}" for k, v in sampling.items())
        rows.append([j, str(st["runs"]), settings or "—", fmt(st["max_range"]["value"], 3),
                     st["max_range"]["cell"] or "—", fmt(st["max_abs_shift"]["value"], 3),
                     st["max_abs_shift"]["cell"] or "—"])
    return ["## Run stability (§V-B)", "",
            "Every cell recomputed per sampled run and on the per-item majority vote over runs (an unparseable "
            "answer is a vote; ties go to the earliest run). Range: max - min over runs; shift: majority vote minus "
            "the pooled cell. The paper: T = 0.7, maximum per-cell range 0.038, 5-run majority vote shifts any cell "
            "by at most 0.008. Per-cell values in audit.json (`stability`).", "",
            markdown_table(["Judge", "runs", "sampling", "max range", "cell", "max |shift|", "cell"], rows), ""]
