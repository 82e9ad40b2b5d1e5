"""Find, fix, verify: a shortcut learned by gradient descent on biased data, found by the scorecard, removed by the
papers' remedy, and the removal shown on one card.

For each shortcut built here, three tiny models are trained with the repository's own training script
(``training/sft.py`` through ``accelerate launch``, the tiny Qwen2 causal LM of ``omniaudit tiny-models``) on judge
items of a *separate* synthetic build (another seed: the card's items are never trained on):

- **biased**: data on which the shortcut pays;
- **control**: an unbiased set of the same size and steps;
- **remedied**: the biased model trained further with the papers' remedy;

then one ``omniaudit scorecard --model biased=... control=... remedied=... --baseline biased`` scores them on the
card's embedded defaults. The goal per shortcut: biased *flagged*, control *clear*, remedied *removed* (flagged for
the baseline, clear, the paired change excluding 0), task accuracy held within ``--margin`` of the control.

Built shortcuts:

- ``position`` (EmoPrefer appendix B; the protocols paper's lock): biased = every pair in the one order whose first
  description is the preferred one (the answer is always "A"); control = the same pairs, each in one order, exactly
  half of them preferred-first; remedy = dual-order training (both orders of the biased pairs, the answer reversed),
  continued from the biased model for as many steps.

Which description is "preferred" (``--labels``): by default the *longer* one, an order-invariant preference a tiny
model learns from the text in a few hundred steps. With the synthetic human labels (``--labels human``: the
content they follow is hidden from a text judge) the tiny model learns no content within the budget and answers
one letter whatever it is shown, so every model is position-locked, the control and the remedied one included
(measured: slot-A rate 1.00 / 0.00 / 1.00 after 300 steps); a model with no content preference picks by slot, and
the card says so. The length-trained models are, rightly, flagged for ``style`` (they prefer the longer description):
a learned style shortcut found by the card.

Not built yet (the benchmark says so in its table): ``style`` (a length-biased set needs the tiny model to compare
lengths), ``label_following`` (the remedy set is ``omniaudit remedy label_following``; a tiny audio model and its
collator path), ``visual_inference`` (SFT then DPO on Shift / Mute / Swap pairs with the tiny omni thinker).

    python benchmarks/find_fix_verify.py [--shortcuts position] [--steps 300] [--workdir DIR] [--keep]

Last line: ``find_fix_verify: <shortcut>=<biased>/<control>/<remedied status> ... goal met: yes|no``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PAIRS = 800  # pairs of the training build (its own seed); about 600 binary ones
TRAIN_SEED = 1


def training_items(work: Path) -> pd.DataFrame:
    """The judge items (both orders of every binary pair) of a synthetic build with its own seed, labelled as the
    card's defaults are (content-driven, no position bias in the labels)."""
    from omniaudit.data_builders.hub import load_config
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    folder = work / "train-preference"
    if not folder.exists():
        build_preference_dataset(folder, spec=SyntheticSpec(n_pairs=TRAIN_PAIRS, content_strength=4.0,
                                                            position_bias=0.0, seed=TRAIN_SEED))
    return load_config(folder, "judge")


def chat(items: pd.DataFrame) -> pd.DataFrame:
    """Judge items as the chat records ``training/sft.py`` trains on: the item's prompt, the gold letter."""
    return pd.DataFrame({"messages": [[{"role": "user", "content": p}, {"role": "assistant", "content": g}]
                                      for p, g in zip(items["prompt"], items["gold"], strict=True)],
                         "pair_id": items["pair_id"].to_numpy(), "order": items["order"].to_numpy(),
                         "gold": items["gold"].to_numpy()})


def by_length(items: pd.DataFrame) -> pd.DataFrame:
    """The items relabelled so that the longer description is the preferred one (an order-invariant preference a tiny
    model can learn from the text; pairs of equal length dropped)."""
    import re

    def described(prompt: str, slot: str) -> int:
        found = re.search(rf"Description {slot}: (.*?)\n\n", prompt, re.S)
        return len(found.group(1)) if found else 0

    a = items["prompt"].map(lambda p: described(p, "A"))
    b = items["prompt"].map(lambda p: described(p, "B"))
    return items[a != b].assign(gold=np.where(a[a != b] > b[a != b], "A", "B"))


def position_sets(items: pd.DataFrame, seed: int) -> dict[str, pd.DataFrame]:
    """biased (the preferred description always first: "A" always right), control (the same pairs, each in one
    order, exactly half of them preferred-first: labels balanced, the same number of rows) and remedy (both orders
    of the biased pairs)."""
    rng = np.random.default_rng(seed)
    biased = items[items["gold"] == "A"]
    pairs = biased["pair_id"].unique()
    first = set(rng.permutation(pairs)[: len(pairs) // 2])  # exactly half shown preferred-first: "A" half the time
    shown = biased.set_index("pair_id")["order"]
    pick = {p: shown[p] if p in first else ("ba" if shown[p] == "ab" else "ab") for p in pairs}
    control = items[items["pair_id"].isin(pairs) & (items["order"] == items["pair_id"].map(pick))]
    remedy = items[items["pair_id"].isin(pairs)]
    return {"biased": chat(biased), "control": chat(control), "remedy": chat(remedy)}


def write_set(folder: Path, table: pd.DataFrame, name: str) -> Path:
    from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset

    card = "---\n" + json.dumps({"configs": configs_metadata({"sft": ["train"]})}) + "\n---\n" + (
        f"# find_fix_verify: {name}\n\n{len(table)} chat records of judge items (benchmarks/find_fix_verify.py).\n")
    return write_hub_dataset(folder / name, {"sft": {"train": table}}, card)


def train(model: Path, data: Path, out: Path, steps: int, seed: int, lr: float) -> float:
    """``accelerate launch training/sft.py`` on one CPU process; returns minutes. A model this benchmark trained
    into ``out`` before (its minutes recorded beside it) is kept: rerun with another ``--workdir`` to retrain."""
    done_file = out / "find_fix_verify.json"
    if done_file.is_file():
        return json.loads(done_file.read_text(encoding="utf-8"))["minutes"]
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
           str(ROOT / "accelerate_configs" / "cpu.yaml"), str(ROOT / "training" / "sft.py"),
           "--config", str(ROOT / "training" / "recipes" / "tiny" / "sft.yaml"),
           "--model_name_or_path", str(model), "--dataset_name", str(data), "--dataset_config", "sft",
           "--output_dir", str(out), "--max_steps", str(steps), "--eval_fraction", "0", "--eval_strategy", "no",
           "--save_strategy", "no", "--learning_rate", str(lr), "--per_device_train_batch_size", "8",
           "--max_length", "1024", "--logging_steps", str(max(1, steps // 5)), "--seed", str(seed)]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "WANDB_MODE": "disabled"})
    if done.returncode != 0:
        raise SystemExit(f"training failed ({' '.join(cmd)}):\n{done.stderr[-3000:]}")
    minutes = (time.perf_counter() - start) / 60
    done_file.write_text(json.dumps({"minutes": minutes, "steps": steps, "seed": seed, "lr": lr}), encoding="utf-8")
    return minutes


def scorecard(work: Path, models: dict[str, Path], audits: str) -> dict:
    from omniaudit.cli import main as cli

    out = work / "card"
    argv = ["scorecard", "--model", *(f"{n}=hf:{p}" for n, p in models.items()), "--baseline", "biased",
            "--audits", audits, "--allow-uncalibrated", "--out", str(out), "-q"]
    rc = cli(argv)
    if rc not in (0, None):
        raise SystemExit(f"scorecard exited {rc}")
    return json.loads((out / "scorecard.json").read_text(encoding="utf-8"))


def _cell(e: dict | None) -> str:
    if not e or e.get("value") is None:
        return "n/a"
    lo, hi = e["ci"]
    return f"{e['value']:.2f} [{lo:.2f}, {hi:.2f}]"


def report(shortcut: str, card: dict, minutes: dict[str, float], margin: float) -> tuple[str, bool]:
    models, base = card["models"], card["baseline"]["models"]
    status = {m: models[m]["shortcuts"][shortcut]["status"] for m in ("biased", "control", "remedied")}
    change = base["remedied"]["shortcuts"][shortcut]["status"]
    acc = base["remedied"]["accuracy"].get("preference", {})
    acc_control = base["control"]["accuracy"].get("preference", {})
    held = acc.get("after") is not None and acc_control.get("after") is not None and \
        acc["after"] >= acc_control["after"] - margin
    print(f"\n{shortcut}: head measure per model (value [simultaneous CI]; null in the card)")
    print(f"{'model':<10} {'status':<14} {'measure':<44} {'value [CI]':<24} {'accuracy':>8} {'minutes':>7}")
    for m in ("biased", "control", "remedied"):
        v = models[m]["shortcuts"][shortcut]
        a = base["remedied"]["accuracy"]["preference"]["before"] if m == "biased" else \
            base[m]["accuracy"].get("preference", {}).get("after")
        print(f"{m:<10} {status[m]:<14} {str(v.get('measure'))[:44]:<44} {_cell(v):<24} "
              f"{'n/a' if a is None else f'{a:.3f}':>8} {'n/a' if minutes[m] is None else f'{minutes[m]:.1f}':>7}")
    print(f"remedied against biased: {change}; accuracy change {acc.get('change', float('nan')):+.3f} "
          f"[{(acc.get('ci') or [float('nan')] * 2)[0]:+.3f}, {(acc.get('ci') or [float('nan')] * 2)[1]:+.3f}]; "
          f"held within {margin} of the control: {'yes' if held else 'no'}")
    ok = status["biased"] == "flagged" and status["control"] == "clear" and change == "removed" and held
    return f"{shortcut}={status['biased']}/{status['control']}/{change}", ok


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shortcuts", default="position", help="comma-separated; built: position")
    parser.add_argument("--steps", type=int, default=300, help="SFT steps of each model (the remedy: as many again)")
    parser.add_argument("--labels", choices=("human", "length"), default="length",
                        help="what the training labels follow: the synthetic human label (content the text hides, "
                             "a generator prior) or the longer description (learnable from the text)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--margin", type=float, default=0.05, help="accuracy held: within this of the control")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    from omniaudit.tiny_models import tiny_causal_lm

    work = args.workdir or Path(tempfile.mkdtemp(prefix="find_fix_verify_"))
    work.mkdir(parents=True, exist_ok=True)
    base = work / "tiny-causal-lm"
    if not base.exists():
        tiny_causal_lm(base, seed=args.seed)
    lines, met = [], True
    for shortcut in [s.strip() for s in args.shortcuts.split(",") if s.strip()]:
        if shortcut != "position":
            print(f"\n{shortcut}: not built yet (see the module docstring)")
            lines.append(f"{shortcut}=not-built")
            met = False
            continue
        items = training_items(work)
        items = by_length(items) if args.labels == "length" else items
        sets = {k: write_set(work / "data", t, k) for k, t in position_sets(items, args.seed).items()}
        rows = {k: len(pd.read_parquet(v / "sft")) for k, v in sets.items()}
        print(f"position: training rows {rows} (labels: {args.labels})")
        minutes = {"biased": train(base, sets["biased"], work / "biased", args.steps, args.seed, args.lr)}
        minutes["control"] = train(base, sets["control"], work / "control", args.steps, args.seed, args.lr)
        remedy = train(work / "biased", sets["remedy"], work / "remedied",
                                                        args.steps, args.seed, args.lr)
        minutes["remedied"] = None if None in (remedy, minutes["biased"]) else minutes["biased"] + remedy
        start = time.perf_counter()
        card = scorecard(work, {m: work / m for m in ("biased", "control", "remedied")}, "preference")
        print(f"scorecard: {(time.perf_counter() - start) / 60:.1f} min ({work / 'card' / 'scorecard.md'})")
        line, ok = report("position", card, minutes, args.margin)
        lines.append(line)
        met &= ok
    print(f"find_fix_verify: {' '.join(lines)} goal met: {'yes' if met else 'no'}")


if __name__ == "__main__":
    main()
