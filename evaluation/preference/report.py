"""The preference audit's report: Markdown tables (Table 1 / 3 layouts) and the two PNG figures."""

from __future__ import annotations

from pathlib import Path

from omniaudit.evaluation.report import fmt, fmt_ci, fmt_p, markdown_table, plt, save_figure, shown_path

SLICE_TITLES = {"full": "Full", "length_matched": "Length-matched", "counter_stereotypical": "Counter-stereo."}
PROBE_TITLES = {"length_lr": "Length LR", "generator_lr": "Generator LR", "length_generator_lr": "Length+generator LR",
                "winrate_rule": "Generator win-rate rule"}



def stratified_random_waf(prevalence_train: float, prevalence_eval: float) -> float:
    """Expected WAF (percent, large-n) of a label-blind predictor that says a1 with probability prevalence_train."""
    q, p = prevalence_train, prevalence_eval
    f1_pos = 2 * p * q / (p + q) if p + q > 0 else 0.0
    f1_neg = 2 * (1 - p) * (1 - q) / (2 - p - q) if p + q < 2 else 0.0
    return 100 * (p * f1_pos + (1 - p) * f1_neg)


def plot_full_vs_counter(audit: dict, prevalence: tuple[float, float], path: Path) -> Path:
    """Fig. 2b: full vs counter-stereotypical WAF per predictor (dashed: equal; dotted: stratified random)."""
    fig, ax = plt.subplots(figsize=(6.2, 5.2), dpi=120)
    placed: list[tuple[float, float]] = []
    for name, slices in audit["predictors"].items():
        x, y = slices["full"]["waf"], slices["counter_stereotypical"]["waf"]
        if x != x or y is None or y != y:
            continue
        marker = "o" if name in PROBE_TITLES else "s"
        ax.scatter(x, y, marker=marker, s=46, zorder=3)
        # push the label down past labels already placed nearby, so close points stay readable
        near = sum(abs(x - px) < 12 and abs(y - py) < 4 for px, py in placed)
        placed.append((x, y))
        ax.annotate(PROBE_TITLES.get(name, name), (x, y), textcoords="offset points", xytext=(5, 4 - 11 * near),
                    fontsize=8)
    ax.plot([0, 100], [0, 100], "--", color="grey", lw=1, label="equal performance")
    rx, ry = stratified_random_waf(prevalence[0], prevalence[0]), stratified_random_waf(prevalence[0], prevalence[1])
    ax.axvline(rx, ls=":", color="black", lw=1, label="stratified random")
    ax.axhline(ry, ls=":", color="black", lw=1)
    ax.set(xlim=(-2, 100), ylim=(-2, 100), xlabel="WAF, full slice", ylabel="WAF, counter-stereotypical slice",
           title="Full vs prior-conflicting performance")
    ax.legend(loc="upper left", fontsize=8)
    save_figure(fig, path)
    return path


def _null_lines(audit: dict) -> list[str]:
    """WAF minus the content-blind null on each slice, with its paired CI (absent from audits written before it)."""
    first = next(iter(audit["predictors"].values()))
    if "vs_null" not in first["full"]:
        return []
    headers = ["Predictor"] + [f"{SLICE_TITLES[s]} (null {fmt(first[s]['null_waf'])})" for s in SLICE_TITLES]
    rows = [[PROBE_TITLES.get(n, f"judge: {n}")] + [fmt_ci(p[s]["vs_null"]) for s in SLICE_TITLES]
            for n, p in audit["predictors"].items()]
    return ["### Above a judge with no information [paired bootstrap 95% CI]", "",
            "WAF minus the null of each slice: the WAF of a tie on every pair of those items (half credit per class), "
            "what a judge without information scores there. It is 50 only when the slice's labels are balanced; a "
            "judge that ties everywhere (e.g. one that always picks the first slot, in both orders) is 0 on every "
            "resample. A CI above 0 is evidence of information.", "",
            markdown_table(headers, rows), ""]


def plot_win_rates(win_rates: dict[str, float], path: Path) -> Path:
    names = sorted(win_rates, key=win_rates.get)
    fig, ax = plt.subplots(figsize=(6.2, 0.45 * len(names) + 1.4), dpi=120)
    ax.barh(names, [100 * win_rates[n] for n in names], color="#4C72B0")
    ax.axvline(50, ls="--", color="grey", lw=1)
    ax.set(xlim=(0, 100), xlabel="win rate over binary pairs (%)", title="Generator win rates")
    save_figure(fig, path)
    return path


def preference_report(audit: dict, figures: dict[str, str], source: str) -> str:
    ds, slices = audit["dataset"], audit["slices"]
    headers = ["Predictor"] + [f"{SLICE_TITLES[s]} (n={slices[s]['n']})" for s in SLICE_TITLES]
    rows = [[PROBE_TITLES.get(n, f"judge: {n}")] + [fmt_ci(p[s]) for s in SLICE_TITLES]
            for n, p in audit["predictors"].items()]
    out = [
        "# Preference shortcut audit",
        "",
        f"Source: **{shown_path(source)}**. {ds['n_pairs']} pairs, {ds['n_binary']} binary ({ds['n_a1']} a1 / "
        f"{ds['n_a2']} a2), "
        f"{ds['n_same']} \"same\" (used only for fold assignment), {len(ds['generators'])} generators. "
        f"The fold-exclusive generator prior agrees with {100 * ds['prior_agreement']:.1f}% of binary labels.",
        "",
        *_duplicate_lines(ds),
        *_judged_only_lines(audit),
        "## Two-class WAF [bootstrap 95% CI]",
        "",
        "Content-blind probes never read description text, video or audio. Counter-stereotypical pairs have a label "
        "that contradicts the training-fold generator prior, so the win-rate rule scores 0 there by construction.",
        "",
        markdown_table(headers, rows),
        "",
        f"![Full vs counter-stereotypical WAF]({figures['full_vs_counter']})",
        "",
        *_null_lines(audit),
        "## Prior-following and paired tests",
        "",
    ]
    out += _paired_test_lines(audit)
    if audit["judges"]:
        out += _order_lines(audit["judges"])
    out += _comparison_lines(audit)
    tied_probes = {n: k for n, k in audit.get("ties", {}).get("counts", {}).items()
                   if k and n not in audit["judges"]}
    if tied_probes:
        out += ["Probes with tied decisions (P(a1) = 0.5, half credit per class): "
                + ", ".join(f"{PROBE_TITLES.get(n, n)} {k}" for n, k in tied_probes.items()) + ".", ""]
    out += _benchmark_lines(audit)
    out += _win_rate_lines(audit, figures)
    out += _style_lines(audit)
    out += _consensus_lines(audit)
    if "odin" in audit:
        from omniaudit.evaluation.preference.odin_report import odin_section

        out += odin_section(audit["odin"], figures.get("odin"))
    out += [f"CIs are 2.5/97.5 percentiles of resamples of {audit['bootstrap'].get('unit', 'pairs')} within each "
            "slice: finite-pair uncertainty, not training-seed variation; overlapping marginal CIs are not a paired "
            "test (the paired comparisons above are).", ""]
    return "\n".join(out)


def _paired_test_lines(audit: dict) -> list[str]:
    """Prior-following per predictor and the exact McNemar tests on the length-matched slice."""
    ref = next(iter(p["full"]["mcnemar"]["reference"] for p in audit["predictors"].values() if "mcnemar" in p["full"]))
    rows = []
    for n, p in audit["predictors"].items():
        cs, lm = p["counter_stereotypical"], p["length_matched"]
        test = lm.get("mcnemar")
        rows.append([PROBE_TITLES.get(n, f"judge: {n}"), f"{fmt(100 * cs['prior_following'])}%",
                     f"{test['b']} / {test['c']}" if test else "reference",
                     fmt_p(test["p"]) if test else "—"])
    out = [f"Prior-following = share of counter-stereotypical decisions that side with the prior. Exact McNemar on "
           f"the length-matched slice against `{ref}` (b = pairs only the predictor gets right, c = only the "
           "reference).", "",
           markdown_table(["Predictor", "Prior-following (counter)", "Discordant b / c (length-m.)", "Exact p"], rows),
           ""]
    excluded = {n: p["length_matched"]["mcnemar"]["n_ties_excluded"] for n, p in audit["predictors"].items()
                if p["length_matched"].get("mcnemar", {}).get("n_ties_excluded")}
    if excluded:
        out += ["Tied pairs (no preference) have no right/wrong outcome and are left out of the McNemar test: "
                + ", ".join(f"{PROBE_TITLES.get(n, n)} {k}" for n, k in excluded.items()) + ".", ""]
    return out


def _order_lines(judges: dict) -> list[str]:
    """The judges' order consistency, how their predictions were read, and their per-order WAF gap."""
    rows = [[n, m["n_two_orders"], m["n_one_order"], f"{fmt(100 * m['order_agreement'])}%", m.get("n_ties", 0)]
            for n, m in judges.items()]
    out = ["## Judges: order consistency", "",
           "Share of pairs judged in both orders whose two decisions pick the same description (a position-"
           "locked judge scores 0%). A tie is a pair whose orders average to P(a1) = 0.5 exactly (e.g. the "
           "first slot chosen in both orders): it is no preference, so it counts half for each class in WAF, "
           "accuracy and prior-following (never as a1), and is left out of the McNemar tests.", "",
           markdown_table(["Judge", "pairs with AB+BA", "pairs with one order", "order agreement", "ties"], rows),
           ""]
    notes = [f"- `{n}`: {m['note']}" for n, m in judges.items() if m.get("note")]
    out += ["How each judge's predictions were read:", "", *notes, ""] if notes else []
    return out + _position_bias_lines(judges)


def _benchmark_lines(audit: dict) -> list[str]:
    """What the audit says of the benchmark: the source classifier, the controls and the source pairings."""
    out: list[str] = []
    if "source_classifier" in audit:
        sc = audit["source_classifier"]
        out += ["## Does style reveal the generator?", "",
                f"A TF-IDF source classifier (word 1-2-grams, sublinear tf, <= 20,000 features; folds at pair level) "
                f"names the generator of a held-out description with **{100 * sc['accuracy_mean']:.1f} ± "
                f"{100 * sc['accuracy_sd']:.1f}%** accuracy (chance {100 * sc['chance']:.1f}%, majority "
                f"{100 * sc['majority']:.1f}%; {sc['n_documents']} descriptions).", ""]
    if "controls" in audit:
        perm, cf = audit["controls"]["identity_permutation"], audit["controls"]["counterfactual_swap"]
        full = audit["predictors"]["generator_lr"]["full"]["waf"]
        out += ["## Controls", "",
                f"- **Identity permutation** (generator probe refit with (g1, g2) permuted across pairs, seeds "
                f"{', '.join(map(str, perm['seeds']))}): WAF falls from {fmt(full)} to {fmt(perm['mean'])} ± "
                f"{fmt(perm['sd'])}, the empirical label-blind floor.",
                f"- **Counterfactual swap** (combined probe fixed): swapping test-time identities flips "
                f"{100 * cf['identity_flip_rate']:.1f}% of decisions, swapping lengths flips "
                f"{100 * cf['length_flip_rate']:.1f}% (exact McNemar on the flip indicators: "
                f"b = {cf['mcnemar']['b']}, c = {cf['mcnemar']['c']}, p = {fmt_p(cf['mcnemar']['p'])}).", ""]
    pairs = audit["source_pairs"]
    if pairs:
        rows = [[p, v["n"], f"{100 * v['first_win_rate']:.1f}%", f"{100 * v['accuracy']['winrate_rule']:.1f}%"]
                for p, v in sorted(pairs.items(), key=lambda kv: -abs(kv[1]["first_win_rate"] - 0.5))]
        out += ["## Source pairings", "",
                "Per unordered generator pairing, most lopsided first: how often the first-named generator wins, and "
                "how often the win-rate rule is right. Lopsided pairings are where a style prior pays off.", "",
                markdown_table(["Pairing", "n", "First wins", "Win-rate rule accuracy"], rows), ""]
    return out


def _pct(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.1f}%"


def _diff(d: dict) -> str:
    lo, hi = d["ci"]
    value = d["value"]
    return "n/a" if value is None or value != value else f"{value:+.1f} [{fmt(lo)}, {fmt(hi)}]"


def _position_bias_lines(judges: dict) -> list[str]:
    """Per-order WAF of every judge (each order alone), the averaged WAF and the paired ab - ba gap (full slice)."""
    rows = []
    for name, meta in judges.items():
        pb = meta.get("position_bias")
        if not pb:
            continue
        o, gap = pb["orders"], pb["ab_minus_ba"]["full"]
        rows.append([name, f"{fmt_ci(o['ab']['full'])} (n={o['ab']['full']['n']})",
                     f"{fmt_ci(o['ba']['full'])} (n={o['ba']['full']['n']})", fmt_ci(o["averaged"]["full"]),
                     _diff(gap) if gap["n"] else "—",
                     f"{_pct(pb['first_slot_rate']['ab'])} / {_pct(pb['first_slot_rate']['ba'])}"])
    if not rows:
        return []
    return ["## Judges: position bias (per-order WAF)", "",
            "Each presentation order scored alone (on the pairs judged in it), then the dual-order average the audit "
            "uses. A judge trained in one order only can collapse in the other (the paper's V1 ablation: 30.9 vs "
            "79.7 WAF). ab − ba is paired (pairs judged in both orders, same resamples); first-slot rate is the share "
            "of decisions naming option A in each order (100% / 100% is position-locked).", "",
            markdown_table(["Judge", "Order ab alone", "Order ba alone", "Averaged", "ab − ba [paired CI]",
                            "First slot ab / ba"], rows), ""]


def _comparison_lines(audit: dict) -> list[str]:
    """Table 3: exact McNemar and the paired WAF-difference CI of every --compare pair."""
    comps = audit.get("comparisons")
    if not comps:
        return []
    rows = []
    for c in comps:
        lm, full = c["slices"]["length_matched"], c["slices"]["full"]
        rows.append([f"{PROBE_TITLES.get(c['a'], c['a'])} / {PROBE_TITLES.get(c['b'], c['b'])}",
                     f"{lm['mcnemar']['b']} / {lm['mcnemar']['c']}", fmt_p(lm["mcnemar"]["p"]),
                     _diff(lm["difference"]),
                     f"{full['mcnemar']['b']} / {full['mcnemar']['c']}", fmt_p(full["mcnemar"]["p"]),
                     _diff(full["difference"])])
    n_lm = comps[0]["slices"]["length_matched"]["n"]
    return ["## Paired comparisons (Table 3)", "",
            f"Length-matched slice (n={n_lm}) and full slice. Discordant b / c = pairs only the first / only the "
            "second predictor gets right (exact two-sided McNemar; tied decisions left out). ΔWAF = WAF(first) − "
            "WAF(second) with a paired bootstrap 95% CI: both rescored on the same resamples, so the interval is a "
            "paired test, unlike overlapping marginal CIs.", "",
            markdown_table(["Comparison", "Discordant (length-m.)", "Exact p", "ΔWAF length-m. [CI]",
                            "Discordant (full)", "Exact p", "ΔWAF full [CI]"], rows), ""]


def _lc_cell(entry: dict) -> str:
    """LC win rate with its bootstrap CI when the audit has one (older audits: the point only)."""
    lo, hi = entry.get("lc_ci") or (None, None)
    ci = f" [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None and hi is not None else ""
    return _pct(entry["lc_win_rate"]) + ci


def _lc_ci_note(lc: dict) -> str:
    boot = lc.get("bootstrap") or {}
    if not boot.get("n_resamples"):
        return ""
    return (f" CIs: {int(100 * boot.get('confidence', 0.95))}% percentile bootstrap, the GLM refitted on each of "
            f"{boot['n_resamples']} resamples of the {boot.get('unit', 'pairs')} (seed {boot.get('seed')}).")


def _win_rate_lines(audit: dict, figures: dict[str, str]) -> list[str]:
    """Generator win rates, with mean length and the length-controlled win rate when the audit computed them."""
    ds = audit["dataset"]
    lengths, lc = audit.get("lengths"), audit.get("length_controlled")
    order = sorted(ds["win_rates"].items(), key=lambda kv: -kv[1])
    if not lengths:
        rows = [[g, f"{100 * w:.1f}%"] for g, w in order]
        return ["## Generator win rates", "", markdown_table(["Generator", "Win rate"], rows), "",
                f"![Generator win rates]({figures['win_rates']})", ""]
    gens = lengths["generators"]
    sc = (audit.get("style_controlled") or {}).get("generators")
    rows = [[g, f"{gens[g]['mean_length']:.0f}", f"{100 * w:.1f}%",
             _lc_cell(lc["generators"][g]) if lc and g in lc["generators"] else "n/a"]
            + ([_sc_cell(sc.get(g))] if sc else []) for g, w in order]
    w, top = lengths["wordiest"], lengths["most_winning"]
    verdict = ("and it is also the generator that wins most: length and identity are not separated here"
               if lengths["wordiest_wins_most"] else
               f"while {top['generator']} wins most ({_pct(top['win_rate'])}): source identity is not merely "
               "another name for length")
    rho = lengths["spearman"]
    out = ["## Generator win rates and length", "",
           f"The wordiest generator, **{w['generator']}** (mean {w['mean_length']:.0f} characters), wins "
           f"**{_pct(w['win_rate'])}** of its binary pairs (rank {w['win_rank']} of {len(gens)}), {verdict}. Win "
           f"rates span {_pct(lengths['win_rate_span'][0])}–{_pct(lengths['win_rate_span'][1])}"
           + (f"; Spearman rank correlation of mean length and win rate across generators: {rho:.2f}." if rho
              is not None else "."), ""]
    if lc:
        out += [f"Length-controlled (LC) win rate, as AlpacaEval 2's: a logistic GLM on generator identity and "
                f"tanh(length difference / {lc['length_scale']:.0f} chars) (length coefficient "
                f"{lc['length_coefficient']:+.2f}; slot intercept {lc['slot_intercept']:+.2f}; L2 as the probes) is "
                "refit on the binary pairs and each generator's win rate recomputed over its own pairs with the "
                "length and slot terms zeroed. Every generator has a strength and all are penalised alike (no "
                "reference generator), so renaming generators changes no rate. A rate that survives length control "
                "is not verbosity." + _lc_ci_note(lc), ""]
    out += [markdown_table(["Generator", "Mean length (chars)", "Win rate",
                            "LC win rate [95% CI]" if lc and lc.get("bootstrap", {}).get("n_resamples") else
                            "LC win rate"] + (["Style-controlled win rate [95% CI]"] if sc else []), rows), "",
            f"![Generator win rates]({figures['win_rates']})", ""]
    return out


def _sc_cell(entry: dict | None) -> str:
    if not entry or entry.get("sc_win_rate") is None:
        return "n/a"
    lo, hi = entry.get("sc_ci") or (None, None)
    return _pct(entry["sc_win_rate"]) + (f" [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None and hi is not None
                                         else "")


def _signed_ci(value: float | None, ci: list | None) -> str:
    if value is None:
        return "n/a"
    lo, hi = ci or (None, None)
    return f"{value:+.2f}" + (f" [{lo:+.2f}, {hi:+.2f}]" if lo is not None and hi is not None else "")


def _style_lines(audit: dict) -> list[str]:
    """Chatbot Arena style control: style-controlled strengths beside the uncontrolled ones, and the style
    coefficients, each with its bootstrap CI."""
    sc = audit.get("style_controlled")
    if not sc:
        return []
    gens = sorted(sc["generators"].items(), key=lambda kv: -kv[1]["strength"])
    rows = [[g, f"{e['strength_uncontrolled']:+.2f}", _signed_ci(e["strength"], e["strength_ci"]), _sc_cell(e)]
            for g, e in gens]
    style = [[name, _signed_ci(f["coefficient"], f["ci"]) if not f["absent"] else "absent (no variation)",
              fmt(f["mean_per_description"], 2), f"{100 * (f['share_of_descriptions_with_any'] or 0):.0f}%"]
             for name, f in sc["style"].items()]
    boot = sc["bootstrap"]
    return ["## Style control (Chatbot Arena)", "",
            "A Bradley-Terry logistic regression on the binary pairs with generator strengths, a slot intercept "
            f"({sc['slot_intercept']:+.2f}) and style features, each the normalised pair difference (f1 - f2) / "
            "(f1 + f2 + 1) standardised over the pairs, as Chatbot Arena's style control: length, sentences and "
            "markdown header, list-item, bold and emphasis counts; a feature no description varies in is absent. "
            "L2 as the probes, on every strength and coefficient (strengths sum to zero). A strength that falls "
            "towards 0 once style is held fixed was style; a style coefficient is the logit effect of one standard "
            f"deviation of that difference (> 0: the description with more of it wins). CIs: "
            f"{int(100 * boot['confidence'])}% percentile bootstrap, {boot['n_resamples']} resamples of the "
            f"{boot['unit']} (seed {boot['seed']}).", "",
            markdown_table(["Generator", "Strength (no style control)", "Style-controlled strength [95% CI]",
                            "Style-controlled win rate [95% CI]"], rows), "",
            markdown_table(["Style feature", "Coefficient [95% CI]", "Mean per description", "Descriptions with any"],
                           style), ""]


def _consensus_lines(audit: dict) -> list[str]:
    """Multi-annotator consensus: agreement and every predictor against consensus labels."""
    c = audit.get("consensus")
    if not c:
        return []
    targets = {"unanimous": "Unanimous pairs", "majority": "Majority vote", "dawid_skene": "Dawid–Skene"}
    headers = ["Predictor"] + [f"{t} (n={c['targets'][k]['n']})" for k, t in targets.items()]
    names = list(audit["predictors"])
    rows = [[PROBE_TITLES.get(n, f"judge: {n}")]
            + [fmt_ci(c["targets"][k]["predictors"][n]) if "predictors" in c["targets"][k] else "n/a"
               for k in targets] for n in names]
    agree = ", ".join(f"{t.lower()} {_pct(c['targets'][k]['agrees_with_dataset_label'])}"
                      for k, t in targets.items())
    rp = c["ratings_per_pair"]
    return ["## Multi-annotator consensus", "",
            f"{c['n_pairs_annotated']} pairs carry {rp['min']}–{rp['max']} labels each (mean {rp['mean']:.2f}) from "
            f"{c['n_annotators']} annotators (`{shown_path(c['file'])}`); Fleiss' kappa over a1 / a2 / same: "
            f"**{fmt(c['fleiss_kappa'], 3)}**. The dataset's label agrees with the consensus on: {agree}. Below, "
            "every predictor is scored against the consensus label instead of the dataset's single label (binary "
            "audited pairs whose consensus is a1 or a2; no-consensus and 'same' left out). Dawid–Skene estimates "
            "each annotator's confusion matrix by EM.", "",
            markdown_table(headers, rows), ""]


def _duplicate_lines(ds: dict) -> list[str]:
    dup = ds.get("duplicates")
    if not dup or not dup["groups"]:
        return []
    return [f"Duplicate pairs: {dup['groups']} group(s) ({dup['exact']} exact and {dup['near']} near copies of an "
            f"earlier row; {dup['conflicting_labels']} group(s) with disagreeing labels). Each group sits in one fold "
            "and is resampled as one unit, so copies neither leak labels across folds nor narrow the CIs.", ""]


def _judged_only_lines(audit: dict) -> list[str]:
    """The plain statement of a judged-only audit: which pairs the numbers cover."""
    jo = audit.get("judged_only")
    if not jo:
        return []
    folds = ", ".join(f"fold {k}: {v['judged']}/{v['total']}" for k, v in jo["by_fold"].items())
    per_judge = ", ".join(f"{n} {k}" for n, k in jo["per_judge"].items())
    return [f"**Judged-only audit: every number below covers the {jo['n_pairs']} of {jo['n_binary']} binary pairs "
            f"that every judge scored** ({folds}; pairs judged per judge: {per_judge}). The probes were fitted out-of-"
            "fold on all binary pairs and are scored on the same judged pairs; the source classifier, the controls, "
            "generator lengths, length-controlled win rates and style control use the whole dataset. Numbers are not "
            "comparable with a full audit of the benchmark.", ""]
