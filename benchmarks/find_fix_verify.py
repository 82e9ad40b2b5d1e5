"""Find, fix, verify: a shortcut learned by gradient descent on biased data, found by the scorecard, removed by the
papers' remedy, and the removal shown on one card.

For each shortcut built here, three tiny models are trained with the repository's own training script
(``training/sft.py`` through ``accelerate launch``; ``omniaudit tiny-models``' Qwen2 causal LM for the text judges, its
Qwen2.5-Omni thinker for the audio one) on items the card never holds (a synthetic preference build with another
seed; protocols items of espeak-ng clips of other sentences):

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

- ``style`` (EmoPrefer section 6), in reward models, the paper's own setting: biased = a Bradley-Terry reward model
  (``training/reward_odin.py --n_heads 1 --lambda_dec 0``) on the training build's pairs relabelled so that the
  longer description is preferred; control = the same on its source-balanced pairs with their human labels (neither
  length nor a generator's prior pays); remedy = what the card prescribes (``omniaudit remedy style``): ODIN (three
  heads, ``lambda = lambda_o = 1``) on the build's length-controlled pairs (``--length-control 0.15``, human
  labels), trained from the same base, its content head alone judging. Each trains for EmoPrefer's schedule (4
  epochs at batch 8: of the biased pairs for both Bradley-Terry models, of its own pairs for ODIN) and judges the
  card's pairs through the ``reward:`` runner.

Which description is "preferred" (``--labels``): by default the *longer* one, an order-invariant preference a tiny
model learns from the text in a few hundred steps. With the synthetic human labels (``--labels human``: the
content they follow is hidden from a text judge) the tiny model learns no content within the budget and answers
one letter whatever it is shown, so every model is position-locked, the control and the remedied one included
(measured: slot-A rate 1.00 / 0.00 / 1.00 after 300 steps); a model with no content preference picks by slot, and
the card says so.

- ``label_following`` (the protocols paper's cue following): from the training clips' blueprint and cue-conflict
  items (per clip, one label item per wrong option and its no-label item; 192 espeak-ng clips of sentences the card
  never speaks), biased = the label items answered with their supplied label (a set labelled by the specialist the
  prompt quotes: copying always pays, and only copying fits a clip's rows); control = supplied labels drawn uniformly
  from the options, answered with the truth (copying pays as often as chance); remedy = ``omniaudit remedy
  label_following --cue-conflict``'s deranged set (the truth, never the supplied label), continued from the biased
  model for as many steps. Measured on the way: answering the label items with the *truth* while the label is the
  truth (copying pays, but so does remembering the clip) teaches no copying in 150, 600 or 1,500 steps; on 64 clips
  (2 sentences per cell) the copying the biased set teaches carried to the card's clips at seed 0 (0.46) but hardly
  at seed 1 (0.14), where the control copied 0.09. Its card holds three times the default's clips
  (:func:`card_protocols`).

- ``visual_inference`` (Thud), on the tiny omni thinker, run only when asked (``--shortcuts visual_inference``: about
  30 minutes on 2 CPU cores by itself, beyond the default run's budget): biased = SFT on the training build's
  Original clips only (the picture's sound is always right: Thud's "SFT w/ OP"); control = SFT on every variant
  (Original, Shift, Mute, Swap) for as many steps; remedy = Thud's two stages from the biased model, an SFT warm-up
  on the intervention data (every variant) and then DPO on the build's Shift / Mute / Swap / CTP pairs (full
  weights). The card scores the weights every ``--curve-every`` steps of both stages and prints the measure along the
  remedy. The card shows the clips as the models were trained on them (:data:`VIDEO_AS_TRAINED`).

Each shortcut's three models are scored on one card, ``DIR/card-<shortcut>``, with ``--baseline biased``. The
training sets are built in ``find_fix_verify_sets``.

    python benchmarks/find_fix_verify.py [--shortcuts position,style,label_following[,visual_inference]]
        [--steps 600] [--reward-steps N] [--seed 0] [--workdir DIR]

Last line: ``find_fix_verify: <shortcut>=<biased>/<control>/<remedied status> ... goal met: yes|no``.

Over seeds (``find_fix_verify_seeds``): ``--seeds 0-9 --workdir DIR`` runs the loop at each seed in ``DIR/seed-N``
(models and cards already there are kept, so a rerun resumes), then writes the removal table, shortcut x seed, to
``DIR/removal_table.md`` and ``.json``, with ``<shortcut>: removed at k of n seeds`` per shortcut; ``--shard I/N``
runs every N-th seed from the I-th, ``--table-only`` rebuilds the table from the cards. Every training launch pins
:data:`THREADS` intra-op threads and torch's deterministic algorithms (``training/determinism.py``), recorded in each
model's done-file.
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

import pandas as pd
from find_fix_verify_seeds import DONE_FILE, add_seed_options, card_outcome, check_seed_options, run_seeds
from find_fix_verify_sets import (
    ROOT,
    VIDEO_AS_TRAINED,
    card_protocols,
    reward_pairs,
    training_sets,
    visual_sets,
)

# Every training launch pins torch's intra-op threads (training/determinism.py): the same seed then trains the same
# weights on any machine with at least this many cores (an unpinned count follows the machine's cores), and the cards
# score with as many. Measured: the text models train the same weights at 1 to 4 threads, the omni thinker does not
# (docs/training.md#determinism)
THREADS = 2


def launch_training(script: str, recipe: str, out: Path, arguments: list[str], **facts) -> float:
    """``accelerate launch training/<script>`` with the tiny ``recipe`` on one CPU process, :data:`THREADS` threads
    and torch's deterministic algorithms; writes the done-file (the minutes, ``facts`` and the run's recorded
    thread count, deterministic flag and torch version) and returns minutes. A model whose done-file exists is
    kept: rerun with another ``--workdir`` to retrain."""
    done_file = out / DONE_FILE
    if done_file.is_file():
        return json.loads(done_file.read_text(encoding="utf-8"))["minutes"]
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--config_file",
           str(ROOT / "accelerate_configs" / "cpu.yaml"), str(ROOT / "training" / script),
           "--config", str(ROOT / "training" / "recipes" / "tiny" / recipe), "--output_dir", str(out),
           "--threads", str(THREADS), "--deterministic", "true", *arguments]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "WANDB_MODE": "disabled"})
    if done.returncode != 0:
        raise SystemExit(f"training failed ({' '.join(cmd)}):\n{done.stderr[-3000:]}")
    minutes = (time.perf_counter() - start) / 60
    record = out / "determinism.json"
    settings = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    done_file.write_text(json.dumps({"minutes": minutes, **facts, **settings}), encoding="utf-8")
    return minutes


def train_reward(model: Path, data: Path, out: Path, steps: int, seed: int, lr: float, odin: bool) -> float:
    """``training/reward_odin.py`` (fold 0 held out): a single-head Bradley-Terry reward model, or with ``odin`` the
    paper's three heads with the decorrelation terms; returns minutes (a model trained into ``out`` before is
    kept)."""
    heads = ["--n_heads", "3", "--lambda_dec", "1", "--lambda_orth", "1"] if odin else \
        ["--n_heads", "1", "--lambda_dec", "0"]
    return launch_training("reward_odin.py", "reward_odin.yaml", out, [
        "--model_name_or_path", str(model), "--dataset_name", str(data), "--dataset_config", "pairs",
        "--max_train_samples", "100000", "--eval_folds", "0", "--max_steps", str(steps), "--save_strategy", "no",
        "--learning_rate", str(lr), "--logging_steps", str(max(1, steps // 5)), "--seed", str(seed), *heads],
        steps=steps, seed=seed, lr=lr, odin=odin)


def train(model: Path, data: Path, out: Path, steps: int, seed: int, lr: float, recipe: str = "sft.yaml",
          script: str = "sft.py", config: str = "sft", extra: tuple[str, ...] = (), save_every: int = 0) -> float:
    """``training/<script>`` (SFT, or DPO on a ``dpo`` config); returns minutes. ``save_every``: also keep the
    weights every so many steps (``out/checkpoint-N``, model only). A model this benchmark trained into ``out``
    before (its minutes recorded beside it) is kept."""
    return launch_training(script, recipe, out, [
        "--model_name_or_path", str(model), "--dataset_name", str(data), "--dataset_config", config,
        "--max_steps", str(steps), "--eval_fraction", "0", "--eval_strategy", "no",
        *(("--save_strategy", "steps", "--save_steps", str(save_every), "--save_only_model", "true")
          if save_every else ("--save_strategy", "no")), "--learning_rate", str(lr),
        "--per_device_train_batch_size", "8", "--max_length", "1024", "--logging_steps", str(max(1, steps // 5)),
        "--seed", str(seed), *extra], steps=steps, seed=seed, lr=lr)


def scorecard(work: Path, shortcut: str, models: dict[str, str], audits: str, data: Path | None = None,
              options: tuple[str, ...] = (), margin: float = 0.05) -> dict:
    """One card of the three models (name -> runner spec), the biased one the baseline and the control model the
    control (each model's task accuracy against it, held when the paired 95% interval stays above ``-margin``);
    ``data``: the audit's dataset instead of its embedded default; ``options``: more scorecard arguments."""
    from omniaudit.cli import main as cli

    out = work / f"card-{shortcut}"
    argv = ["scorecard", "--model", *(f"{n}={spec}" for n, spec in models.items()), "--baseline", "biased",
            "--control", "control", "--margin", str(margin),
            "--audits", audits, "--allow-uncalibrated", "--out", str(out), "-q",
            *(["--data", f"{audits}={data}"] if data else []), *options]
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
    models, base, audit = card["models"], card["baseline"]["models"], AUDIT[shortcut]
    outcome = card_outcome(card, shortcut, audit, margin)
    status = {m: outcome[m]["status"] for m in ("biased", "control", "remedied")}
    change, held = outcome["against_biased"], outcome["accuracy"]["held"]
    acc = base["remedied"]["accuracy"].get(audit, {})
    print(f"\n{shortcut}: head measure per model (value [simultaneous CI]; null in the card)")
    print(f"{'model':<10} {'status':<14} {'measure':<44} {'value [CI]':<24} {'accuracy':>8} {'minutes':>7}")
    for m in ("biased", "control", "remedied"):
        v = models[m]["shortcuts"][shortcut]
        a = acc.get("before") if m == "biased" else base[m]["accuracy"].get(audit, {}).get("after")
        print(f"{m:<10} {status[m]:<14} {str(v.get('measure'))[:44]:<44} {_cell(v):<24} "
              f"{'n/a' if a is None else f'{a:.3f}':>8} {'n/a' if minutes[m] is None else f'{minutes[m]:.1f}':>7}")
    print(f"remedied against biased: {change}; accuracy change {acc.get('change', float('nan')):+.3f} "
          f"[{(acc.get('ci') or [float('nan')] * 2)[0]:+.3f}, {(acc.get('ci') or [float('nan')] * 2)[1]:+.3f}]; "
          f"held against the control (paired 95% CI above -{margin}): "
          f"{ {True: 'yes', False: 'no', None: 'not paired'}[held] }")
    return f"{shortcut}={status['biased']}/{status['control']}/{change}", outcome["goal_met"]


REWARD_EPOCHS, REWARD_BATCH = 4, 8  # EmoPrefer appendix B: the reward models' epochs and batch (the tiny recipe's)
AUDIT = {"position": "preference", "style": "preference", "label_following": "protocols",
         "visual_inference": "interventions"}  # the built shortcuts
MODEL = {"preference": ("tiny-causal-lm", "sft.yaml"), "protocols": ("tiny-omni", "sft_omni.yaml"),
         "interventions": ("tiny-omni", "sft_omni.yaml")}  # base, recipe


def visual_inference(work: Path, base: Path, args: argparse.Namespace) -> tuple[str, bool]:
    """Thud's loop on the tiny omni thinker: biased = SFT on Original clips only; control = SFT on every variant for
    as many steps; remedy = Thud's two stages from the biased model: an SFT warm-up on the intervention data (every
    variant's answers, ``--warmup-steps``), then DPO on the Shift / Mute / Swap / CTP pairs (``--dpo-steps``, full
    weights, so the card loads it as any model). Both stages keep their weights every ``--curve-every`` steps: the
    card scores each against the biased model too, and :func:`remedy_curve` prints the measure along the remedy."""
    sets = visual_sets(work)
    rows = {k: len(pd.read_parquet(v / ("dpo" if k == "remedy" else "sft"))) for k, v in sets.items()}
    print(f"visual_inference: training rows {rows}")
    steps, lr, every = args.audio_steps, args.audio_lr, args.curve_every
    warmup = work / f"omni-original-only+sft{args.warmup_steps}"
    models = {"biased": work / "omni-original-only", "control": work / "omni-every-variant",
              "remedied": work / f"omni-original-only+sft{args.warmup_steps}+dpo{args.dpo_steps}"}
    minutes = {"biased": train(base, sets["biased"], models["biased"], steps, args.seed, lr, "sft_omni.yaml"),
               "control": train(base, sets["control"], models["control"], steps, args.seed, lr, "sft_omni.yaml")}
    minutes["remedied"] = minutes["biased"] + train(
        models["biased"], sets["control"], warmup, args.warmup_steps, args.seed, lr, "sft_omni.yaml",
        save_every=every) + train(warmup, sets["remedy"], models["remedied"], args.dpo_steps, args.seed, args.dpo_lr,
                                  "dpo_omni.yaml", "dpo.py", "dpo", ("--use_peft", "false"), save_every=every)
    curve = {"warmup": ("SFT warm-up", args.warmup_steps, warmup), "remedied": ("DPO", args.dpo_steps, None)}
    for stage, total, folder in (("SFT warm-up", args.warmup_steps, warmup), ("DPO", args.dpo_steps,
                                                                                models["remedied"])):
        for n in range(every, total, every or total):
            curve[f"{stage.split()[0].lower()}-{n}"] = (stage, n, folder / f"checkpoint-{n}")
    scored = {**models, **{name: folder for name, (_, _, folder) in curve.items() if folder is not None}}
    start = time.perf_counter()
    card = scorecard(work, "visual_inference", {n: f"hf:{p}" for n, p in scored.items()},
                     "interventions", options=(*VIDEO_AS_TRAINED, "--size", args.card_size), margin=args.margin)
    print(f"scorecard: {(time.perf_counter() - start) / 60:.1f} min "
          f"({work / 'card-visual_inference' / 'scorecard.md'})")
    line, ok = report("visual_inference", card, minutes, args.margin)
    remedy_curve(card, {name: (stage, n) for name, (stage, n, _) in curve.items()})
    return line, ok


def remedy_curve(card: dict, steps: dict[str, tuple[str, int]]) -> None:
    """The visual_inference measures along the remedy (model name -> (stage, steps into it); the biased model is
    where it starts): the shortcut's status, the Avg Gap with its simultaneous CI, each dimension's gap, the change
    against the biased model, and the task accuracy (the Original rows)."""
    models, base = card["models"], card["baseline"]["models"]
    print("\nvisual_inference along the remedy (each row the weights at that step of one run per stage)")
    print(f"{'stage':<12} {'steps':>5} {'status':<14} {'Avg Gap [CI]':<24} {'Sync/Exist/Consist':<19} "
          f"{'against biased':<15} {'accuracy':>8}")
    order = ["biased", *sorted(steps, key=lambda name: (steps[name][0] == "DPO", steps[name][1]))]
    for name in order:
        stage, n = steps.get(name, ("biased", 0))
        verdict = models[name]["shortcuts"]["visual_inference"]
        by = {f"{e.get('key')}/{e.get('stratum')}": e for e in verdict["evidence"]}
        gaps = "/".join("n/a" if by.get(f"dim_gap/{d}", {}).get("value") is None else
                        f"{by[f'dim_gap/{d}']['value']:.0f}" for d in ("sync", "existence", "consistency"))
        change = "baseline" if name == "biased" else base[name]["shortcuts"]["visual_inference"]["status"]
        acc = (base["remedied"]["accuracy"].get("interventions", {}).get("before") if name == "biased"
               else base[name]["accuracy"].get("interventions", {}).get("after"))
        print(f"{stage:<12} {n:>5} {verdict['status']:<14} {_cell(by.get('avg_gap/all')):<24} {gaps:<19} "
              f"{change:<15} {'n/a' if acc is None else f'{acc:.3f}':>8}")


def find_fix_verify(work: Path, shortcut: str, args: argparse.Namespace) -> tuple[str, bool, dict]:
    """Train the three models of ``shortcut`` (each kept once trained), score them on one card, print its table;
    returns the table's summary line, whether the goal is met and the biased model as a learned reference
    (:func:`save_references`)."""
    from omniaudit.tiny_models import tiny_causal_lm, tiny_omni

    audit = AUDIT[shortcut]
    name, recipe = MODEL[audit]
    base = work / name
    if not base.exists():
        (tiny_causal_lm if audit == "preference" else tiny_omni)(base, seed=args.seed)
    if shortcut == "style":
        return style_with_reward_models(work, base, args)
    if shortcut == "visual_inference":
        return (*visual_inference(work, base, args), {})
    sets = training_sets(work, shortcut, args.labels, args.seed)
    rows = {k: len(pd.read_parquet(v / "sft")) for k, v in sets.items()}
    print(f"{shortcut}: training rows {rows} (labels: {args.labels if audit == 'preference' else 'supplied'})")
    steps, lr = (args.steps, args.lr) if audit == "preference" else (args.audio_steps, args.audio_lr)

    def fit(start: Path, role: str, out: Path) -> float:
        return train(start, sets[role], out, steps, args.seed, lr, recipe)

    models = {"biased": work / sets["biased"].name, "control": work / sets["control"].name,
              "remedied": work / f"{sets['biased'].name}+{sets['remedy'].name}"}  # the biased model, trained further
    minutes = {"biased": fit(base, "biased", models["biased"]), "control": fit(base, "control", models["control"])}
    remedy = fit(models["biased"], "remedy", models["remedied"])
    minutes["remedied"] = None if None in (remedy, minutes["biased"]) else minutes["biased"] + remedy
    start = time.perf_counter()
    data = card_protocols(work) if shortcut == "label_following" else None
    card = scorecard(work, shortcut, {n: f"hf:{p}" for n, p in models.items()}, audit, data,
                     ("--size", args.card_size), args.margin)
    print(f"scorecard: {(time.perf_counter() - start) / 60:.1f} min ({work / f'card-{shortcut}' / 'scorecard.md'})")
    trained_on = {"position": f"{rows['biased']} pairs shown preferred-first (the answer always A)",
                  "label_following": f"{rows['biased']} blueprint label items answered with the supplied label, and "
                                     "the same clips' no-label items"}
    return (*report(shortcut, card, minutes, args.margin),
            reference(shortcut, card, models["biased"], None, trained_on[shortcut], steps, lr, args.seed))


def style_with_reward_models(work: Path, base: Path, args: argparse.Namespace) -> tuple[str, bool, dict]:
    """The style shortcut in reward models, EmoPrefer's own setting: biased = a Bradley-Terry reward model on pairs
    whose longer description is preferred; control = the same on the source-balanced pairs with their human labels;
    remedy = the card's prescription (``omniaudit remedy style``), an ODIN reward (content, length and prior heads,
    decorrelated; the content head alone judges) on the build's length-controlled pairs, trained from the same base.
    Each judges the card's pairs through ``reward:``."""
    sets = {role: reward_pairs(work, kind) for role, kind in
            (("biased", "length"), ("control", "source-balanced"), ("remedy", "length-controlled"))}
    train_pairs = {role: int((pd.read_parquet(d / "pairs")["fold"] != 0).sum()) for role, d in sets.items()}
    print(f"style: training pairs (fold 0 held out) {train_pairs}; reward models, the remedy ODIN")
    folders = {"biased": work / "reward-bt-length", "control": work / "reward-bt-source-balanced",
               "remedied": work / "reward-odin-length-controlled"}
    # EmoPrefer's schedule (appendix B: 4 epochs at batch 8): of the biased pairs for both Bradley-Terry models, of
    # its own pairs for ODIN
    epochs = lambda n: REWARD_EPOCHS * -(-n // REWARD_BATCH)  # noqa: E731
    steps = args.reward_steps or epochs(train_pairs["biased"])
    odin_steps = args.reward_steps or epochs(train_pairs["remedy"])
    print(f"style: Bradley-Terry {steps} steps each, ODIN {odin_steps} ({REWARD_EPOCHS} epochs, batch {REWARD_BATCH})")
    lr = args.reward_lr
    minutes = {"biased": train_reward(base, sets["biased"], folders["biased"], steps, args.seed, lr, odin=False),
               "control": train_reward(base, sets["control"], folders["control"], steps, args.seed, lr, odin=False),
               "remedied": train_reward(base, sets["remedy"], folders["remedied"], odin_steps, args.seed, lr,
                                        odin=True)}
    start = time.perf_counter()
    card = scorecard(work, "style", {n: f"reward:{f}@{base}" for n, f in folders.items()}, "preference",
                     options=("--size", args.card_size), margin=args.margin)
    print(f"scorecard: {(time.perf_counter() - start) / 60:.1f} min ({work / 'card-style' / 'scorecard.md'})")
    return (*report("style", card, minutes, args.margin),
            reference("style", card, folders["biased"], base, f"a Bradley-Terry reward model on "
                      f"{train_pairs['biased']} pairs, the longer description preferred", steps, lr, args.seed))


def reference(shortcut: str, card: dict, folder: Path, base: Path | None, trained_on: str, steps: int, lr: float,
              seed: int) -> dict:
    """The biased model of ``shortcut`` as a learned reference's manifest entry (its files are copied later), with
    what it learned from and its head measure on this benchmark's card."""
    v = card["models"]["biased"]["shortcuts"][shortcut]
    return {"shortcut": shortcut, "runner": "reward" if base else "hf", "folder": folder, "base_folder": base,
            "trained_on": trained_on, "base": "omniaudit tiny-models' "
            + ("Qwen2.5-Omni thinker" if shortcut == "label_following" else "Qwen2 causal LM") + f" (seed {seed})",
            "steps": steps, "learning_rate": lr, "seed": seed,
            "benchmark_card": {"measure": v.get("measure"), "value": v.get("value"), "ci": v.get("ci"),
                               "status": v["status"]}}


# not what a runner loads: the training state, the held-out fold's predictions, omniaudit's own markers
TRAINING_STATE = ("training_args.bin", DONE_FILE, "trainer_state.json", "predictions.csv", "determinism.json")


def save_references(out: Path, entries: dict[str, dict], args: argparse.Namespace) -> Path:
    """Copy each shortcut's biased model (the files a runner loads, no training state) into ``out`` with a
    ``manifest.json`` the scorecard's learned reference tier reads (``evaluation/scorecard/references.py``): what
    ``--references learned`` ships is written here."""
    import hashlib
    import shutil

    from omniaudit import __version__
    from omniaudit.io import atomic_dir
    from omniaudit.shortcuts import REFERENCE_NAMES

    def copy(src: Path, dest: Path) -> dict:
        dest.mkdir()
        sums = {}
        for f in sorted(src.iterdir()):
            if f.is_file() and f.name not in TRAINING_STATE and not f.name.endswith("_metrics.json") \
                    and not f.name.startswith("."):
                shutil.copyfile(f, dest / f.name)
                sums[f.name] = hashlib.sha256(f.read_bytes()).hexdigest()
        return sums

    models = []
    with atomic_dir(out) as tmp:
        bases: dict[Path, str] = {}
        for shortcut, e in entries.items():
            name = f"learned-{REFERENCE_NAMES[shortcut]}"  # a folder name that is no Python package name
            entry = {k: v for k, v in e.items() if k not in ("folder", "base_folder")}
            entry |= {"path": name, "sha256": copy(e["folder"], tmp / name)}
            if e["base_folder"] is not None:
                if e["base_folder"] not in bases:
                    bases[e["base_folder"]] = f"base-{len(bases)}"
                    entry["base_sha256"] = copy(e["base_folder"], tmp / bases[e["base_folder"]])
                entry["base_path"] = bases[e["base_folder"]]
            models.append(entry)
        manifest = {"built_by": "python benchmarks/find_fix_verify.py --save-references DIR "
                                f"--shortcuts {','.join(entries)} --seed {args.seed}",
                    "omniaudit": __version__, "models": models}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str) + "\n", encoding="utf-8")
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shortcuts", default="position,style,label_following",
                        help="comma-separated; built: position, style, label_following, visual_inference (about an "
                             "hour on 2 CPU cores, so only when named)")
    parser.add_argument("--steps", type=int, default=600, help="SFT steps of each text judge (the remedy: as many "
                                                               "again)")
    parser.add_argument("--audio-steps", type=int, default=600, help="SFT steps of each omni model (label_following)")
    parser.add_argument("--warmup-steps", type=int, default=600,
                        help="SFT warm-up steps of the visual_inference remedy (Thud's stage 1, on every variant)")
    parser.add_argument("--dpo-steps", type=int, default=600,
                        help="DPO steps of the visual_inference remedy (Thud's stage 2, after the warm-up)")
    parser.add_argument("--curve-every", type=int, default=300,
                        help="the visual_inference remedy's weights are also scored every so many steps of each "
                             "stage (the curve; 0: only each stage's last)")
    parser.add_argument("--dpo-lr", type=float, default=1e-4, help="DPO learning rate of the visual_inference remedy")
    parser.add_argument("--reward-steps", type=int, default=None,
                        help="training steps of each style reward model (default: EmoPrefer's 4 epochs of the biased "
                             "pairs at batch 8)")
    parser.add_argument("--reward-lr", type=float, default=1e-3, help="learning rate of the style reward models")
    parser.add_argument("--labels", choices=("human", "length"), default="length",
                        help="what the training labels follow: the synthetic human label (content the text hides, "
                             "a generator prior) or the longer description (learnable from the text)")
    parser.add_argument("--lr", type=float, default=2e-3, help="learning rate of the text judges")
    parser.add_argument("--audio-lr", type=float, default=3e-3, help="learning rate of the omni models")
    parser.add_argument("--margin", type=float, default=0.05,
                        help="accuracy held: the paired 95%% interval of remedied - control stays above -MARGIN")
    parser.add_argument("--card-size", choices=("default", "small"), default="default",
                        help="the cards' embedded sets (omniaudit scorecard --size): 'small' for a quick check, whose "
                             "wide intervals can call a control inconclusive")
    add_seed_options(parser)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--save-references", type=Path, metavar="DIR",
                        help="copy each flagged biased model (position, style, label_following) with a manifest "
                             "into DIR: the scorecard's learned reference tier (evaluation/scorecard/learned, "
                             "`omniaudit scorecard --references learned`)")
    return check_seed_options(parser, parser.parse_args(argv))


def shortcut_list(args: argparse.Namespace) -> list[str]:
    return [s.strip() for s in args.shortcuts.split(",") if s.strip()]


def main(argv: list[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args = parse_args(argv)
    import torch

    torch.set_num_threads(THREADS)  # the cards score with as many threads as the models trained with
    if args.seeds is not None or args.table_only:
        return run_seeds(args, [s for s in shortcut_list(args) if s in AUDIT], AUDIT, find_fix_verify)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="find_fix_verify_"))
    work.mkdir(parents=True, exist_ok=True)
    lines, met, learned = [], True, {}
    for shortcut in shortcut_list(args):
        if shortcut not in AUDIT:
            print(f"\n{shortcut}: not built yet (see the module docstring)")
            lines.append(f"{shortcut}=not-built")
            met = False
            continue
        line, ok, biased = find_fix_verify(work, shortcut, args)
        lines.append(line)
        met &= ok
        if biased and biased["benchmark_card"]["status"] == "flagged":  # a reference must show its shortcut
            learned[shortcut] = biased
    if args.save_references:
        print(f"learned references: {save_references(args.save_references, learned, args)} "
              f"({', '.join(learned) or 'none flagged'})")
    print(f"find_fix_verify: {' '.join(lines)} goal met: {'yes' if met else 'no'}")


if __name__ == "__main__":
    main()
