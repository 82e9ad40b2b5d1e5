"""The composition audit's report for people (``report.md`` + figures), from ``audit.json``'s result.

Sections: accuracy per model (the headline; runs of different models are never pooled) and runs; accuracy by
category, tier and template, one column per model; accuracy under each ablation kind with its CI and the paired
drop from the intact accuracy; with several models, the model x template heatmap (C3PO Fig. 1)
and the model x category/tier table (Table 3); failure modes per model, the decomposition across models with the
combined dominance share (Table 12) beside each model's per-sample dominance share and its content-blind null
(:mod:`.dominance_null`), its stability floor and each ablation's move rate, flagged where the moves do not clear
the floor; and, with attention models, the entropy gap and the routing analyses (alpha by
tier, CC-IC delta alpha, H_mid on correct samples by category, commit depth, dH by modality set).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from omniaudit.evaluation.composition.failure_modes import CLASSIFIED


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _mean(entry: dict | None) -> float:
    """An accuracy's mean over runs, NaN where none was graded."""
    return np.nan if not entry or entry.get("mean") is None else entry["mean"]


def _heatmap(result: dict, folder: Path) -> str | None:
    """Model x template accuracy (mean over each model's runs) as a PNG; None with a single model."""
    from omniaudit.evaluation.report import plt, save_figure

    models = result["models"]
    if len(models) < 2:
        return None
    templates = sorted(result["accuracy"]["by_template"])
    grid = np.array([[_mean(models[m]["accuracy"]["by_template"].get(t)) for t in templates] for m in models],
                    dtype=float)
    fig, ax = plt.subplots(figsize=(1.1 * len(templates) + 2.5, 0.5 * len(models) + 2.0), dpi=120)
    image = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(templates)), templates, rotation=45, ha="right")
    ax.set_yticks(range(len(models)), list(models))
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if grid[i, j] == grid[i, j]:
                ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center",
                        color="white" if grid[i, j] < 60 else "black", fontsize=8)
    fig.colorbar(image, ax=ax, label="accuracy (%)")
    ax.set_title("Accuracy per model and template")
    save_figure(fig, folder / "model_template_accuracy.png")
    return "model_template_accuracy.png"


def _models_section(result: dict, folder: Path) -> list[str]:
    from omniaudit.evaluation.report import markdown_table

    models = result["models"]
    cells = sorted(result["accuracy"]["by_category_tier"], key=lambda k: (k.split("/")[0] != "IC", k))
    fmt = lambda e: "-" if e is None or e["mean"] is None else f"{e['mean']:.1f} ± {e['sd']:.1f}"  # noqa: E731
    rows = [[m, len(v["runs"]), *[fmt(v["accuracy"]["by_category_tier"].get(c)) for c in cells],
             fmt(v["accuracy"]["overall"])] for m, v in models.items()]
    lines = ["## Models", "",
             "Accuracy (%) per model, mean ± sd over its runs, by category and tier (C3PO Table 3). A model is the "
             "MODEL of `MODEL@RUN=FILE` (cut at the last `@`; MODEL may be a Hub repo id); a plain NAME or bare "
             "FILE is its own model.", "",
             markdown_table(["Model", "runs", *cells, "overall"], rows), ""]
    heatmap = _heatmap(result, folder)
    if heatmap:
        lines += [f"![Accuracy per model and template]({heatmap})", ""]
    return lines


def _rate(entry: dict | None) -> str:
    """``12% [5-25%] (3/25)``: a rate with its Wilson 95% interval and counts."""
    if not entry or entry.get("rate", entry.get("floor")) is None:
        return "-"
    rate = entry.get("rate", entry.get("floor"))
    lo, hi = entry["ci"]
    k, n = entry.get("n_moved"), entry.get("n", entry.get("n_pairs"))
    return f"{_pct(rate)} [{_pct(lo)}-{_pct(hi)}] ({k}/{n})"


def _decomposition_section(result: dict) -> list[str]:
    from omniaudit.evaluation.composition.failure_modes import FLOOR_RULE
    from omniaudit.evaluation.report import fmt, markdown_table, shown_paths_in

    dec = result["failure_decomposition"]
    modes = list(CLASSIFIED)
    rows, move_rows, flags = [], [], []
    ablations = sorted({a for v in dec["models"].values() for a in v.get("move_rates", {})})
    for m, v in dec["models"].items():
        floor, check = v["stability_floor"], v.get("floor_check", {})
        status = check.get("status", "unchecked")
        test = v.get("dominance_test") or {}
        rows.append([m, v["overall"]["n_classified"], _pct(v["overall"]["dominance_share"]),
                     _pct(v["overall"]["shares"]["incomplete_fusion"]),
                     "-" if test.get("value") is None else f"{_pct(test['value'])} vs {_pct(test['null'])}",
                     test.get("n_samples", "-"),
                     "-" if floor["floor"] is None else f"{_pct(floor['floor'])} ({floor['n_pairs']} pairs)",
                     {"flagged": "**flagged**", "cleared": "cleared"}.get(status, "unchecked (one run)")])
        moves = v.get("move_rates", {})
        move_rows.append([m, _rate(floor), *[_rate(moves.get(a)) for a in ablations]])
        if status == "flagged":
            flags.append(f"**{m}: the moves under {', '.join(check['not_cleared'])} do not clear its stability "
                         f"floor** ({_rate(floor)} of re-run answers move): its dominance and fusion shares may be "
                         "sampling noise, not modality dependence.")
    c = dec["combined"]["overall"]
    flagged = f", {len(flags)} flagged" if flags else ""
    rows.append([f"**combined** (mean over {c['n_models']} model(s){flagged})", c.get("n_classified", "-"),
                 _pct(c["dominance_share"]), _pct(c["shares"]["incomplete_fusion"]), "", "", "", ""])
    template_rows = [[t, v["n_models"], *[_pct(v["shares"][k]) for k in modes], _pct(v["dominance_share"])]
                     for t, v in dec["combined"]["by_template"].items()]
    comparison = dec.get("answer_comparison", {})
    lines = ["## Failure decomposition across models", "",
             "Shares of the *classified* failures (dominance + incomplete fusion; unanswered, unclassified, "
             "unstable and ungraded failures are left out). An answer *moved* when it is not the same answer as the "
             "failed one by the grader's rule (the answers the readers read, normalised exact match, then the judge"
             + (f" `{shown_paths_in(comparison['judge'])}`, asked {comparison['n_judged']} time(s)"
                if comparison.get("judge")
                else ": none given, so exact matches only") + "). The stability floor is how often re-running the "
             "full input alone (another sampled run of the same model) moves a failed sample's answer: an ablation "
             "that moves answers no more often than this floor says nothing about modality dependence (a model with "
             "one run has no floor). *Per-sample dominance vs null*: the mean over samples of the share of each "
             "sample's classified failed runs that are a dominance (each sample weighs once), beside the mean of "
             "each sample's content-blind null (the chance that a model reading no content, answering uniformly "
             "from the template's answers, has a failure there read as dominance: chance agreement looks like "
             "\"not moved\"; audit.json `dominance_test`); *samples*: the samples with a classified failure "
             "(samples with byte-identical inputs count once).", "",
             markdown_table(["Model", "classified failures", "dominance", "incomplete fusion",
                             "per-sample dominance vs null", "samples", "stability floor", "moves vs floor"], rows),
             ""]
    if ablations:
        lines += ["Move rate of each ablation over the classified failures beside the stability floor, with Wilson "
                  f"95% intervals and counts. Rule: {FLOOR_RULE}.", "",
                  markdown_table(["Model", "stability floor", *ablations], move_rows), ""]
    lines += [*[f"{flag}\n" for flag in flags]]
    lines += ["Per template, mean over models (C3PO Table 12):", "",
              markdown_table(["Template", "models", *modes, "dominance"], template_rows) if template_rows
              else "_no classified failures_", "",
              f"Combined dominance share: **{_pct(c['dominance_share'])}**"
              + ("" if c["dominance_share"] is None else f" ({fmt(100 * c['dominance_share'], 1)}%)") + ".", ""]
    return lines


def _entropy_section(entropy: dict, folder: Path) -> list[str]:
    from omniaudit.evaluation.report import fmt, markdown_table, plt, save_figure

    rows, labels, values, errs = [], [], [], []
    for model, res in entropy["models"].items():
        for name, gap in [("all", res["overall"]), *res["by_category"].items()]:
            lo, hi = gap["ci"]
            rows.append([model, name, fmt(gap["value"], 3), f"[{fmt(lo, 3)}, {fmt(hi, 3)}]", gap["n_correct"],
                         gap["n_incorrect"]])
            if gap["value"] is not None:
                labels.append(f"{Path(model).name} / {name}")
                values.append(gap["value"])
                errs.append([gap["value"] - lo, hi - gap["value"]])
    if values:
        fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(values) + 1.4), dpi=120)
        ax.errorbar(values, range(len(values)), xerr=np.array(errs).T, fmt="o", capsize=3)
        ax.axvline(0, ls="--", color="grey", lw=1)
        ax.set_yticks(range(len(values)), labels)
        ax.set(xlabel="dH = H_mid(correct) - H_mid(incorrect) (bits)", title="Mid-layer attention entropy gap")
        save_figure(fig, folder / "entropy_gap.png")
    pooled, inputs = entropy["pooled_z"], entropy["probe_inputs"]
    lines = ["## Attention entropy", "",
             f"Probe inputs: {inputs['text']}, with its {' and '.join(inputs['media'])}; **{inputs['n_probed']} "
             f"sample(s) probed, {inputs['n_left_out']} left out** ({inputs['left_out']}; ids in audit.json). "
             f"Per-sample values: attention_samples.csv.", "",
             f"Mid-layer (relative depth {entropy['depth_range'][0]}-{entropy['depth_range'][1]}) entropy of the "
             "answer position's attention over text, audio and image spans; dH with a two-sample bootstrap 95% CI. "
             f"Pooled over models (within-model z-scores): {fmt(pooled['value'], 3)} sd "
             f"[{fmt(pooled['ci'][0], 3)}, {fmt(pooled['ci'][1], 3)}]. Each model's samples are split by its own "
             "answers (strict majority over its runs: "
             + "; ".join(f"{Path(m).name}: {', '.join(Path(f).name for f in r.get('runs', []))}"
                         for m, r in entropy["models"].items()) + ").", "",
             markdown_table(["Model", "slice", "dH (bits)", "95% CI", "correct", "incorrect"], rows), "",
             "![Entropy gap](entropy_gap.png)" if values else "", ""]
    return lines + _routing_section(entropy["routing"])


def _routing_section(routing: dict) -> list[str]:
    from omniaudit.evaluation.report import fmt, markdown_table

    alpha_rows, delta_rows, h_rows, set_rows = [], [], [], []
    for model, r in routing.items():
        for tier, a in r["alpha_by_tier"].items():
            d = r["delta_alpha_cc_ic_by_tier"][tier]
            alpha_rows.append([model, tier, *[fmt(a[m], 3) for m in ("text", "audio", "image")]])
            delta_rows.append([model, tier, *[fmt(d[m], 3) for m in ("text", "audio", "image")]])
        h_rows.append([model, *[fmt(r["h_mid_correct_by_category"].get(c), 3) for c in ("IC", "CC")],
                       fmt(r["commit_depth"]["overall"], 2)])
        for name, gap in r["entropy_gap_by_modality_set"].items():
            set_rows.append([model, name, fmt(gap["max_bits"], 3), fmt(gap["value"], 3),
                             f"[{fmt(gap['ci'][0], 3)}, {fmt(gap['ci'][1], 3)}]", gap["n_correct"],
                             gap["n_incorrect"]])
    return ["## Routing", "",
            "alpha: the attention share of each modality (renormalised over text, audio, image), averaged over "
            "layers, then over the tier's samples that hold the modality.", "",
            markdown_table(["Model", "tier", "text", "audio", "image"], alpha_rows), "",
            "CC - IC difference of alpha per tier (C3PO Fig. 9):", "",
            markdown_table(["Model", "tier", "dα text", "dα audio", "dα image"], delta_rows), "",
            "Mean H_mid (bits) of the correctly answered samples by category (C3PO Table 11) and the mean commit "
            "depth (relative depth of the per-layer entropy minimum):", "",
            markdown_table(["Model", "IC", "CC", "commit depth"], h_rows), "",
            "dH per modality set (a sample's entropy is capped at log2 of its modality count: 1 bit for "
            "text+image, log2 3 for text+audio+image):", "",
            markdown_table(["Model", "modalities", "max bits", "dH (bits)", "95% CI", "correct", "incorrect"],
                           set_rows), ""]


def _template_figure(models: dict, folder: Path, plt) -> None:
    from omniaudit.evaluation.report import save_figure

    """``template_accuracy.png``: accuracy per template, one bar per model (mean ± sd over its runs)."""
    names = list(models)
    templates = sorted({t for v in models.values() for t in v["accuracy"]["by_template"]})
    height = 0.8 / len(names)
    fig, ax = plt.subplots(figsize=(6.4, (0.3 + 0.12 * len(names)) * len(templates) + 1.6), dpi=120)
    for k, m in enumerate(names):
        cells = [models[m]["accuracy"]["by_template"].get(t) for t in templates]
        ax.barh(np.arange(len(templates)) + (k - (len(names) - 1) / 2) * height,
                [_mean(c) for c in cells], height=height, capsize=2,
                xerr=[c["sd"] if c else 0.0 for c in cells], label=m)
    ax.set_yticks(range(len(templates)), templates)
    ax.set(xlim=(0, 100), xlabel="accuracy (%), mean ± sd over the model's runs", title="Accuracy per template")
    if len(names) > 1:
        ax.legend(fontsize=7, loc="lower right")
    save_figure(fig, folder / "template_accuracy.png")


def _ablation_section(result: dict) -> list[str]:
    from omniaudit.evaluation.report import fmt, markdown_table

    table = result.get("ablation_accuracy") or {}
    rows = []
    for model, kinds in table.items():
        for kind, e in kinds.items():
            drop, survival = e["drop"], e["survival"]
            read = e["accuracy"] is not None  # a kind no run answered: its counts, no accuracy
            rows.append([model, kind, e["n_samples"], e["runs"], fmt(e["intact"]),
                         f"{fmt(e['accuracy'])} [{fmt(e['ci'][0])}, {fmt(e['ci'][1])}]" if read else "-",
                         f"**{fmt(drop['value'])}** [{fmt(drop['ci'][0])}, {fmt(drop['ci'][1])}]" if read else "-",
                         "-" if survival["rate"] is None else
                         f"{_pct(survival['rate'])} ({survival['kept']}/{survival['n_intact_correct']})",
                         e["n_unanswered"], e.get("n_ungraded", 0), e.get("n_intact_unanswered", 0)])
    judged = result.get("ablation_judging", {})
    lines = ["## Accuracy under ablations", "",
             "Every answered ablated copy graded like the samples (normalised exact match, then the judge"
             + (f"; {judged.get('n_judged', 0)} copies judged, {judged.get('n_unparsed_verdicts', 0)} verdicts "
                "unparsed, counted wrong" if result.get("judge") else ": none given, exact matches only")
             + "). Accuracy (%) with its 95% CI (Wilson for one run; with repeated runs a bootstrap over samples, "
             "runs clustered); *intact*: the accuracy on the same samples and runs; *drop* = intact - ablated "
             "(points) with a paired bootstrap 95% CI over samples; *survival*: the intact-correct answers still "
             "correct under the ablation (the bypass test); *unanswered*: copies without an answer (none, blank, "
             "the question echoed, noise, or the run's one answer to everything), left out (no answer is no "
             "evidence); *ungraded*: answered copies left out because no reader read the copy's or the intact "
             "answer and no judge was given (neither right nor wrong); *intact unanswered*: answered copies left "
             "out because the run gave no answer to the intact sample (a drop needs both). Per-copy grades: "
             "graded_ablations.csv.", ""]
    if not any(e["n_copies"] for kinds in table.values() for e in kinds.values()):
        lines += ["_no ablation answers were given (pass each run's `--config ablations` predictions under the "
                  "run's NAME)_", ""]
    if not rows:
        return lines
    return lines + [markdown_table(["Model", "ablation", "samples", "runs", "intact (%)", "ablated (%) [95% CI]",
                                    "drop (points) [95% CI]", "survival", "unanswered copies",
                                    "ungraded", "intact unanswered"], rows), ""]


def _swap_lines(result: dict) -> list[str]:
    rows = [[m, name, f"{_pct(e['rate'])} [{_pct(e['ci'][0])}-{_pct(e['ci'][1])}] ({e['n_agree']}/{e['n']})"]
            for m, v in result["models"].items() for name, e in v.get("swap_agreement", {}).items()]
    if not rows:
        return []
    from omniaudit.evaluation.report import markdown_table

    return ["Swaps corroborate the removal-based modes (they classify nothing): an m-dominance failure should move "
            "when m is swapped for another sample's, a text-dominance failure should not. Agreement with Wilson 95% "
            "intervals:", "", markdown_table(["Model", "swap", "agrees with the mode"], rows), ""]


def _figure_lines(figures: dict) -> list[str]:
    lines = []
    if figures.get("failure_decomposition"):
        lines += ["![Dominance vs incomplete fusion per model (C3PO Fig. 6)](failure_decomposition.png)", "",
                  "Shares per model: failure_decomposition.csv.", ""]
    if figures.get("attention"):
        lines += ["## Per-layer attention", "",
                  "Per-layer alpha and entropy against relative depth (C3PO Fig. 5; dashed: the mean entropy's "
                  "minimum) and the CC - IC attention share by tier (Fig. 9). Tables: attention_layers.csv (per "
                  "model, sample and layer), attention_depth_profile.csv, attention_delta_alpha.csv.", "",
                  "![Per-layer attention profile](attention_depth_profile.png)", "",
                  "![CC - IC attention share by tier](attention_delta_alpha.png)", ""]
    return lines


def _pct_of(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _grading_lines(grading: dict) -> list[str]:
    """The rows no reader and no judge graded: neither right nor wrong, left out of every measure."""
    if not grading.get("n_ungraded"):
        return []
    reasons = ", ".join(f"{n} {why}" for why, n in grading.get("reasons", {}).items())
    return [f"**{grading['note']}**: no reader read them (reasons: {reasons}); they are neither right nor wrong "
            f"and are left out of the accuracy, the ablation accuracy, the failure decomposition and the dominance "
            f"test ({grading['samples']['n_ungraded']} sample answers, {grading['ablations']['n_ungraded']} ablated "
            f"answers). A measure read off few graded rows says little.", ""]


def write_report(folder: Path, result: dict, runs: list, n_samples: int, figures: dict | None = None) -> None:
    """``report.md``, ``template_accuracy.png`` and the other figures into ``folder`` (``figures``: what the audit
    already wrote, see :mod:`.figures`)."""
    figures = figures or {}
    from omniaudit.evaluation.report import markdown_table, plt, shown_path, shown_paths_in

    judge, models = shown_paths_in(result["judge"]), result["models"]
    _template_figure(models, folder, plt)
    fmt = lambda e: "-" if e is None or e["mean"] is None else f"{e['mean']:.1f} ± {e['sd']:.1f}"  # noqa: E731
    runs_of = lambda v: f"{len(v['runs'])} run{'s' if len(v['runs']) != 1 else ''}"  # noqa: E731
    if len(models) == 1:
        (name, entry), = models.items()
        headline = f"**Accuracy: {fmt(entry['accuracy']['overall'])}%** ({name}, {runs_of(entry)})"
    else:
        headline = "**Accuracy per model** (never pooled over models): " + "; ".join(
            f"**{m}: {fmt(v['accuracy']['overall'])}%** ({runs_of(v)})" for m, v in models.items())
    lines = ["# Composition and counterfactual audit", "",
             f"Dataset `{shown_path(result['dataset'])}`, {n_samples} samples, {len(runs)} run(s) of {len(models)} "
             f"model(s). Grading: a reasoning trace set aside, then normalised exact match, then counts and yes/no "
             f"read from the answer, or the answer of the template's vocabulary it names, then "
             + (f"judge `{judge}` (Yes/No; prompts in graded.csv)." if judge else "no judge (exact and read matches "
                "only)."),
             "", f"{headline}. Mean ± sd over each model's runs (exact-match rate over all runs "
             f"{100 * result['exact_match_rate']:.1f}%, counts or yes/no read "
             f"{100 * result.get('closed_read_rate', 0.0):.1f}%).", ""]
    lines += _grading_lines(result.get("grading") or {})
    if judge:
        lines += [f"Judge verdicts: {result['n_judged']} non-exact answers judged, "
                  f"**{result['n_unparsed_verdicts']} unparsed** (neither a clear Yes nor a clear No; counted "
                  f"as wrong; their `judge_raw` is in graded.csv with an empty `judge_says`).", ""]
        yes = result.get("judge_verdicts")
        if yes and yes["n"]:
            lo, hi = yes["ci"]
            flag = (f". **Flagged: the judge says Yes to (nearly) everything**, so the accuracy measures the judge, "
                    f"not the model ({yes['rule']})." if yes["flagged"] else f"; not flagged ({yes['rule']}).")
            lines += [f"Judge Yes rate: {yes['yes']}/{yes['n']} verdicts read = {100 * yes['rate']:.1f}% (Wilson 95% "
                      f"CI {100 * lo:.1f}-{100 * hi:.1f}%){flag}", ""]
    settings = lambda r: ", ".join(f"{k}={v}" for k, v in r.sampling.items()) or "not recorded"  # noqa: E731
    lines += [markdown_table(["Run", "model", "files", "sampling", "accuracy (%)"],
                             [[r.name, r.model, ", ".join(f"`{shown_path(f)}`" for f in r.files), settings(r),
                               _pct_of(result["accuracy_by_run"][r.name])] for r in runs]), ""]
    names = list(models)
    for title, key in (("Category", "by_category"), ("Tier", "by_tier"), ("Template", "by_template")):
        keys = sorted({k for v in models.values() for k in v["accuracy"][key]})
        header = [title, *(f"{m} accuracy (%)" for m in names)] if len(names) > 1 else [title, "accuracy (%)"]
        lines += [markdown_table(header, [[k, *(fmt(models[m]["accuracy"][key].get(k)) for m in names)]
                                          for k in keys]), ""]
    lines += ["![Accuracy per template](template_accuracy.png)", ""]
    lines += _models_section(result, folder)
    lines += _ablation_section(result)
    lines += ["## Failure modes", "",
              "Failed samples per model (its runs pooled), classified from the answers to the bypass-test ablations: "
              "text / audio / image / video dominance (the wrong answer follows one input and ignores the others) "
              "or incomplete fusion; unanswered, unclassified (an ablation unanswered), unstable (a one-modality "
              "sample whose two text-only answers disagree) and ungraded (an ablated answer no reader read, no judge "
              "given) say nothing about fusion. A sample whose own answer is ungraded is no failure.", ""]
    per_model = {m: v["failure_modes"] for m, v in models.items()}
    modes = sorted({m for fm in per_model.values()
                    for v in [fm["overall"], *fm["by_template"].values()] for m in v["counts"]})
    rows = [[model, name, v["n_failures"]] + [f"{100 * v['rates'].get(m, 0):.0f}%" for m in modes]
            for model, fm in per_model.items()
            for name, v in [("all templates", fm["overall"]), *fm["by_template"].items()]]
    lines += [markdown_table(["Model", "Template", "failures", *modes], rows) if modes else "_no failures_", ""]
    lines += _decomposition_section(result)
    lines += _swap_lines(result) + _figure_lines({k: v for k, v in figures.items() if k != "attention"})
    if "entropy_gap" in result:
        lines += _entropy_section(result["entropy_gap"], folder)
    lines += _figure_lines({"attention": figures.get("attention")})
    (folder / "report.md").write_text("\n".join(lines), encoding="utf-8")
