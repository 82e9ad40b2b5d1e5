"""Reports people can read: Markdown tables + PNG figures next to the machine-readable audit.json."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SLICE_TITLES = {"full": "Full", "length_matched": "Length-matched", "counter_stereotypical": "Counter-stereo."}
PROBE_TITLES = {"length_lr": "Length LR", "generator_lr": "Generator LR", "length_generator_lr": "Length+generator LR",
                "winrate_rule": "Generator win-rate rule"}


def markdown_table(headers: list[str], rows: list[list[object]], align: str | None = None) -> str:
    """A GitHub-flavoured Markdown table; ``align`` is one of l/r/c per column (default: first left, rest right)."""
    align = align or "l" + "r" * (len(headers) - 1)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None or x != x else f"{x:.{digits}f}"


def fmt_ci(entry: dict) -> str:
    lo, hi = entry["ci"]
    return f"{fmt(entry['waf'])} [{fmt(lo)}, {fmt(hi)}]"


def fmt_p(p: float) -> str:
    return "<.001" if p < 0.001 else f"{p:.3f}"


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
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_win_rates(win_rates: dict[str, float], path: Path) -> Path:
    names = sorted(win_rates, key=win_rates.get)
    fig, ax = plt.subplots(figsize=(6.2, 0.45 * len(names) + 1.4), dpi=120)
    ax.barh(names, [100 * win_rates[n] for n in names], color="#4C72B0")
    ax.axvline(50, ls="--", color="grey", lw=1)
    ax.set(xlim=(0, 100), xlabel="win rate over binary pairs (%)", title="Generator win rates")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def preference_report(audit: dict, figures: dict[str, str], source: str) -> str:
    ds, slices = audit["dataset"], audit["slices"]
    headers = ["Predictor"] + [f"{SLICE_TITLES[s]} (n={slices[s]['n']})" for s in SLICE_TITLES]
    rows = [[PROBE_TITLES.get(n, f"judge: {n}")] + [fmt_ci(p[s]) for s in SLICE_TITLES]
            for n, p in audit["predictors"].items()]
    out = [
        "# Preference shortcut audit",
        "",
        f"Source: **{source}**. {ds['n_pairs']} pairs, {ds['n_binary']} binary ({ds['n_a1']} a1 / {ds['n_a2']} a2), "
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
        "## Prior-following and paired tests",
        "",
    ]
    ref = next(iter(p["full"]["mcnemar"]["reference"] for p in audit["predictors"].values() if "mcnemar" in p["full"]))
    rows = []
    for n, p in audit["predictors"].items():
        cs, lm = p["counter_stereotypical"], p["length_matched"]
        test = lm.get("mcnemar")
        rows.append([PROBE_TITLES.get(n, f"judge: {n}"), f"{fmt(100 * cs['prior_following'])}%",
                     f"{test['b']} / {test['c']}" if test else "reference",
                     fmt_p(test["p"]) if test else "—"])
    out += [f"Prior-following = share of counter-stereotypical decisions that side with the prior. Exact McNemar on "
            f"the length-matched slice against `{ref}` (b = pairs only the predictor gets right, c = only the "
            "reference).", "",
            markdown_table(["Predictor", "Prior-following (counter)", "Discordant b / c (length-m.)", "Exact p"],
                           rows),
            ""]
    excluded = {n: p["length_matched"]["mcnemar"]["n_ties_excluded"] for n, p in audit["predictors"].items()
                if p["length_matched"].get("mcnemar", {}).get("n_ties_excluded")}
    if excluded:
        out += ["Tied pairs (no preference) have no right/wrong outcome and are left out of the McNemar test: "
                + ", ".join(f"{PROBE_TITLES.get(n, n)} {k}" for n, k in excluded.items()) + ".", ""]
    if audit["judges"]:
        rows = [[n, m["n_two_orders"], m["n_one_order"], f"{fmt(100 * m['order_agreement'])}%", m.get("n_ties", 0)]
                for n, m in audit["judges"].items()]
        out += ["## Judges: order consistency", "",
                "Share of pairs judged in both orders whose two decisions pick the same description (a position-"
                "locked judge scores 0%). A tie is a pair whose orders average to P(a1) = 0.5 exactly (e.g. the "
                "first slot chosen in both orders): it is no preference, so it counts half for each class in WAF, "
                "accuracy and prior-following (never as a1), and is left out of the McNemar tests.", "",
                markdown_table(["Judge", "pairs with AB+BA", "pairs with one order", "order agreement", "ties"], rows),
                ""]
    tied_probes = {n: k for n, k in audit.get("ties", {}).get("counts", {}).items()
                   if k and n not in audit["judges"]}
    if tied_probes:
        out += ["Probes with tied decisions (P(a1) = 0.5, half credit per class): "
                + ", ".join(f"{PROBE_TITLES.get(n, n)} {k}" for n, k in tied_probes.items()) + ".", ""]
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
    rows = [[g, f"{100 * w:.1f}%"] for g, w in sorted(ds["win_rates"].items(), key=lambda kv: -kv[1])]
    out += ["## Generator win rates", "", markdown_table(["Generator", "Win rate"], rows), "",
            f"![Generator win rates]({figures['win_rates']})", "",
            f"CIs are 2.5/97.5 percentiles of resamples of {audit['bootstrap'].get('unit', 'pairs')} within each "
            "slice: finite-pair uncertainty, not training-seed variation; overlapping marginal CIs are not a paired "
            "test.", ""]
    return "\n".join(out)


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
            "fold on all binary pairs and are scored on the same judged pairs; the source classifier and the controls "
            "use the whole dataset. Numbers are not comparable with a full audit of the benchmark.", ""]
