"""Find, fix, verify over seeds: which seeds to run (``--seeds 0-9``, ``--shard I/N``), where each seed's models and
cards live (``WORKDIR/seed-N``), what one card says of a shortcut (:func:`card_outcome`, also the single run's
table) and the removal table over seeds (:func:`removal_table`: shortcut x seed, written as ``removal_table.md`` and
``.json``), rebuilt from the cards alone (``--table-only``).

The accuracy columns are what the cards pair: each card's baseline is the seed's biased model, so the remedied and
the control models each have a paired change against it with its 95% interval; and its control (``--control``) the
control model, so the remedied model's accuracy against it is a paired change too, *held* when its 95% interval stays
above ``-margin`` (a card written before ``--control`` existed says neither: not held).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path

MODELS = ("biased", "control", "remedied")
TABLE_NAME = "removal_table"
DONE_FILE = "find_fix_verify.json"  # written beside each model the benchmark trained (its minutes and settings)


def parse_seeds(text: str) -> list[int]:
    """``0-9``, ``0,3,5`` or both (``0-2,7``): the seeds, sorted, each once."""
    seeds: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        first, sep, last = part.partition("-")
        if not (first.isdigit() and (not sep or last.isdigit())):
            raise ValueError(f"--seeds: {part!r} is neither a seed nor a range FIRST-LAST (e.g. 0-9 or 0,3,5)")
        low, high = int(first), int(last) if sep else int(first)
        if high < low:
            raise ValueError(f"--seeds: the range {part!r} runs backwards")
        seeds.update(range(low, high + 1))
    if not seeds:
        raise ValueError("--seeds: no seed given (e.g. 0-9 or 0,3,5)")
    return sorted(seeds)


def shard_seeds(seeds: list[int], shard: str) -> list[int]:
    """The seeds of shard ``I/N`` (1 <= I <= N): every N-th seed from the I-th, so N machines given 1/N .. N/N run
    each seed once between them, and the slow and fast seeds spread evenly."""
    index, sep, count = shard.partition("/")
    if not (sep and index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise ValueError(f"--shard: expected I/N with 1 <= I <= N (e.g. 1/2 and 2/2 on two machines), got {shard!r}")
    return seeds[int(index) - 1::int(count)]


def seed_workdir(work: Path, seed: int) -> Path:
    """Where one seed's models, training sets and cards live under ``--workdir`` with ``--seeds``."""
    return work / f"seed-{seed}"


def seeds_in(work: Path) -> list[int]:
    """The seeds that have a folder under ``work`` (``--table-only`` without ``--seeds``)."""
    found = (p.name.removeprefix("seed-") for p in work.glob("seed-*") if p.is_dir())
    return sorted(int(s) for s in found if s.isdigit())


def card_file(work: Path, shortcut: str) -> Path:
    return work / f"card-{shortcut}" / "scorecard.json"


def _verdict(entry: dict) -> dict:
    return {"status": entry["status"], "measure": entry.get("measure"), "value": entry.get("value"),
            "ci": entry.get("ci")}


def card_outcome(card: dict, shortcut: str, audit: str, margin: float) -> dict:
    """What one card (baseline: the biased model) says of ``shortcut``: each model's verdict (status, head measure,
    value, simultaneous CI), the remedied model against the biased one (``removed``, ``reduced``, ``not removed``,
    ...), the task accuracies of ``audit`` with the paired changes against the biased model, whether the remedied
    model's accuracy is held within ``margin`` of the control's, and whether the goal is met (biased flagged, control
    clear, remedied removed, accuracy held)."""
    models, base = card["models"], card["baseline"]["models"]
    out: dict = {m: _verdict(models[m]["shortcuts"][shortcut]) for m in MODELS}
    out["against_biased"] = base["remedied"]["shortcuts"][shortcut]["status"]
    remedied, control = (base[m]["accuracy"].get(audit, {}) for m in ("remedied", "control"))
    after = {"remedied": remedied.get("after"), "control": control.get("after")}
    # held: the paired 95% interval of remedied - control above -margin (the card's --control), never two points
    against = base["remedied"].get("against_control", {}).get(audit, {})
    held = against.get("held")
    out["accuracy"] = {"audit": audit, "biased": remedied.get("before"), **after,
                       "remedied_minus_control": against.get("change"),
                       "remedied_minus_control_ci": against.get("ci"),
                       "remedied_minus_biased": remedied.get("change"), "remedied_minus_biased_ci": remedied.get("ci"),
                       "control_minus_biased": control.get("change"), "control_minus_biased_ci": control.get("ci"),
                       "held": held, "margin": margin}
    out["goal_met"] = (out["biased"]["status"] == "flagged" and out["control"]["status"] == "clear"
                       and out["against_biased"] == "removed" and held)
    return out


def training_settings(work: Path) -> dict[str, dict]:
    """Per model folder under ``work`` the benchmark trained: its recorded thread count and deterministic flag
    (``training/determinism.py``'s record, kept in the done-file; None for models trained before it was kept)."""
    out = {}
    for done in sorted(work.glob(f"*/{DONE_FILE}")):
        record = json.loads(done.read_text(encoding="utf-8"))
        out[done.parent.name] = {k: record.get(k) for k in ("torch_threads", "deterministic", "torch_version")}
    return out


def removal_table(work: Path, seeds: list[int], shortcuts: list[str], audits: dict[str, str],
                  margin: float) -> dict:
    """The removal table over ``seeds`` from the cards under ``work/seed-N`` (a missing card: a row without an
    outcome), with per shortcut how many seeds removed it and met the goal."""
    rows, summary = [], {}
    for shortcut in shortcuts:
        counts = {"seeds": len(seeds), "carded": 0, "removed": 0, "goal_met": 0, "missing": []}
        for seed in seeds:
            path = card_file(seed_workdir(work, seed), shortcut)
            if not path.is_file():
                counts["missing"].append(seed)
                rows.append({"shortcut": shortcut, "seed": seed, "outcome": None})
                continue
            outcome = card_outcome(json.loads(path.read_text(encoding="utf-8")), shortcut, audits[shortcut], margin)
            counts["carded"] += 1
            counts["removed"] += outcome["against_biased"] == "removed"
            counts["goal_met"] += bool(outcome["goal_met"])
            rows.append({"shortcut": shortcut, "seed": seed, "outcome": outcome})
        summary[shortcut] = counts
    trained = {seed: training_settings(seed_workdir(work, seed)) for seed in seeds}
    return {"seeds": seeds, "shortcuts": shortcuts, "margin": margin, "rows": rows, "summary": summary,
            "training": trained}


def _model_cell(v: dict) -> str:
    return v["status"] if v.get("value") is None else f"{v['status']} {v['value']:.2f}"


def _signed(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def _row_cells(row: dict) -> list[str]:
    o = row["outcome"]
    if o is None:
        return [row["shortcut"], str(row["seed"]), *["no card"] * 4, "", "", ""]
    acc = o["accuracy"]
    ci = acc["remedied_minus_biased_ci"]
    against = f"**{o['against_biased']}**" if o["against_biased"] == "removed" else o["against_biased"]
    held = "" if acc["held"] is None else " (held)" if acc["held"] else " (not held)"
    ci_c = acc.get("remedied_minus_control_ci")
    return [row["shortcut"], str(row["seed"]), *(_model_cell(o[m]) for m in MODELS), against,
            _signed(acc["remedied_minus_control"]) + ("" if not ci_c else f" [{ci_c[0]:+.3f}, {ci_c[1]:+.3f}]") + held,
            _signed(acc["remedied_minus_biased"]) + ("" if not ci else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]"),
            "yes" if o["goal_met"] else "no"]


def summary_lines(table: dict) -> list[str]:
    """Per shortcut: ``<shortcut>: removed at k of n seeds; goal met at j of n`` (and the seeds without a card)."""
    lines = []
    for shortcut, c in table["summary"].items():
        missing = f" (no card yet: seed {', '.join(map(str, c['missing']))})" if c["missing"] else ""
        lines.append(f"{shortcut}: removed at {c['removed']} of {c['seeds']} seeds; goal met at {c['goal_met']} of "
                     f"{c['seeds']}{missing}")
    return lines


def render_markdown(table: dict) -> str:
    """The table as markdown: one row per shortcut and seed, then the summary lines and the training threads."""
    head = ["shortcut", "seed", "biased", "control", "remedied", "against biased",
            f"accuracy, remedied - control [95% CI] (held: above -{table['margin']})",
            "accuracy, remedied - biased [95% CI]",
            "goal met"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_row_cells(row)) + " |" for row in table["rows"]]
    threads = sorted({str(s["torch_threads"]) for models in table["training"].values() for s in models.values()})
    out += ["", *(f"- {line}" for line in summary_lines(table)),
            f"- models trained with torch threads: {', '.join(threads) or 'n/a'} (per model: {TABLE_NAME}.json)"]
    return "\n".join(out) + "\n"


def write_removal_table(work: Path, table: dict, shard: str | None = None) -> tuple[Path, Path]:
    """``WORK/removal_table.md`` and ``.json`` (a shard's: ``removal_table.shard-I-of-N``, so shards sharing one
    folder do not overwrite each other's), each written atomically."""
    name = TABLE_NAME if not shard else f"{TABLE_NAME}.shard-{shard.replace('/', '-of-')}"
    paths = (work / f"{name}.md", work / f"{name}.json")
    texts = (render_markdown(table), json.dumps(table, indent=1, default=str) + "\n")
    for path, text in zip(paths, texts, strict=True):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return paths


def add_seed_options(parser: argparse.ArgumentParser) -> None:
    """``--seed`` (one seed, as before), ``--seeds``, ``--shard`` and ``--table-only``."""
    parser.add_argument("--seed", type=int, default=None, help="one seed (default 0): the tiny base models, the sets "
                                                               "and the training; its models and cards in --workdir")
    parser.add_argument("--seeds", metavar="LIST",
                        help="the loop per seed (0-9, 0,3,5 or 0-2,7), each in WORKDIR/seed-N (a model or card "
                             "already there is kept: rerun to resume), then the removal table, shortcut x seed, in "
                             "WORKDIR/removal_table.md and .json; needs --workdir")
    parser.add_argument("--shard", metavar="I/N",
                        help="with --seeds: run only shard I of N (every N-th seed from the I-th, I from 1), e.g. 1/2 "
                             "and 2/2 on two machines; gather the seed-N folders in one WORKDIR and rebuild the "
                             "table with --table-only")
    parser.add_argument("--table-only", action="store_true",
                        help="train and score nothing: rebuild the removal table from the cards in WORKDIR/seed-N "
                             "(--seeds, default: every seed-N folder there)")


def check_seed_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """Refuse what cannot go together; ``args.seed_list``: the seeds this run covers (its shard's); ``args.seed``:
    the one seed (0 unless given) without ``--seeds``."""
    if args.seeds is not None or args.table_only:
        if args.workdir is None:
            parser.error("--seeds and --table-only need --workdir (each seed's models and cards are kept there)")
        if args.seed is not None or args.save_references:
            parser.error("--seed and --save-references take one seed, without --seeds or --table-only")
        try:
            args.seed_list = parse_seeds(args.seeds) if args.seeds is not None else seeds_in(args.workdir)
            args.seed_list = shard_seeds(args.seed_list, args.shard) if args.shard else args.seed_list
        except ValueError as exc:
            parser.error(str(exc))
    elif args.shard:
        parser.error("--shard splits --seeds")
    args.seed = 0 if args.seed is None else args.seed
    return args


def run_seeds(args: argparse.Namespace, shortcuts: list[str], audits: dict[str, str],
              run_shortcut: Callable[[Path, str, argparse.Namespace], object]) -> dict:
    """``--seeds``: ``run_shortcut(WORKDIR/seed-N, shortcut, args at seed N)`` for each seed of ``args.seed_list``
    and each shortcut without a card there yet (its trained models are kept too, so an interrupted seed resumes),
    then the removal table over those seeds; ``--table-only``: the table alone. Prints and writes the table;
    returns it."""
    if not args.table_only:
        for seed in args.seed_list:
            work = seed_workdir(args.workdir, seed)
            work.mkdir(parents=True, exist_ok=True)
            for shortcut in shortcuts:
                if card_file(work, shortcut).is_file():
                    print(f"seed {seed}, {shortcut}: card kept ({card_file(work, shortcut)}; delete it to rescore)")
                    continue
                print(f"\n=== seed {seed}: {shortcut}")
                run_shortcut(work, shortcut, argparse.Namespace(**{**vars(args), "seed": seed}))
    table = removal_table(args.workdir, args.seed_list, shortcuts, audits, args.margin)
    md, _ = write_removal_table(args.workdir, table, args.shard)
    print(f"\nremoval table over seeds {','.join(map(str, args.seed_list)) or 'none'} ({md} and .json)\n")
    print(render_markdown(table))
    print(f"find_fix_verify seeds: {'; '.join(summary_lines(table))}")
    return table
