"""The scorecard's one runner pass per model vs separate ``omniaudit judge`` runs, on the same items, in one run.

The embedded defaults of the four audits are built once (what ``omniaudit scorecard`` builds into ``OUT/datasets``) and
the tiny Qwen2.5-Omni thinker of ``omniaudit tiny-models`` answers every item config of every audit twice, each arm in
a fresh process with the same threads:

- **shared**: the scorecard's own answering stage (``Scorecard.predictions`` for each audit, one process): the model
  is loaded once and its media cache (decoded audio, frames and features, keyed by content) serves every config, so
  the composition ablations reuse what the samples decoded;
- **separate**: one ``omniaudit judge`` process per item config (preference ``judge``, interventions ``diagnostic``,
  the four protocol configs, composition ``samples`` and ``ablations``, with the scorecard's runs per config), as a
  user runs the audits one by one without the scorecard: every run loads the model and decodes its media afresh.

Both write the same predictions (checked byte for byte, provenance aside). Goal: shared >= 1.5x the separate runs'
items per second.

Last line: ``speedup=<separate_s / shared_s> items_per_s=<shared arm>``.

    python benchmarks/scorecard.py [--workdir DIR] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AUDITS = ("preference", "interventions", "protocols", "composition")


def build(root: Path) -> tuple[dict[str, Path], Path]:
    """The four embedded defaults and the tiny omni model under ``root`` (reused when there)."""
    from omniaudit.audits import get
    from omniaudit.io import read_marker
    from omniaudit.tiny_models import tiny_omni

    data = {}
    for audit in AUDITS:
        folder = root / "datasets" / audit
        if not read_marker(folder):
            get(audit).build(folder, "small")
        data[audit] = folder
    model = root / "omni"
    if not (model / "config.json").is_file():
        tiny_omni(model)
    return data, model


def shared(root: Path) -> None:
    """The shared arm (run in its own process): the scorecard answering every audit's configs."""
    from omniaudit.evaluation.scorecard.runner import Scorecard, ScorecardOptions

    data, model = build(root)
    # min_usable 0: the random model's free text is noise (no answer), but it is the speed of answering that is timed
    options = ScorecardOptions(data={a: str(p) for a, p in data.items()}, runner={"max_tokens": 32}, min_usable=0)
    card = Scorecard(root / "shared", {"omni": f"hf:{model}"}, options)
    (root / "shared").mkdir(exist_ok=True)
    for audit in AUDITS:
        card.predictions("omni", f"hf:{model}", audit, data[audit])


def separate_commands(root: Path) -> list[list[str]]:
    """One ``omniaudit judge`` per item config, with the scorecard's runs."""
    from omniaudit.audits import get

    data, model = build(root)
    cli = str(Path(sys.executable).parent / "omniaudit")
    return [[cli, "-q", "judge", "--dataset", str(data[audit]), "--config", config, "--judge", f"hf:{model}",
             "--runs", str(get(audit).runs.get(config, 1)), "--max-tokens", "32", "--min-usable", "0",
             "--out", str(root / "separate" / f"{config}.jsonl")]
            for audit in AUDITS for config in get(audit).item_configs]


def rows(path: Path) -> list[dict]:
    """A predictions file without the fields that name the run (its provenance)."""
    return [{k: v for k, v in json.loads(line).items() if k != "provenance"}
            for line in path.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, help="keep the datasets and model here (default: a new temp folder)")
    parser.add_argument("--threads", type=int, default=1, help="torch / OpenMP threads of every process (default 1)")
    parser.add_argument("--arm", choices=["shared"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = args.workdir or Path(tempfile.mkdtemp(prefix="omniaudit-bench-card-"))
    if args.arm == "shared":
        shared(root)
        return
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    commands = separate_commands(root)  # builds the datasets and model first: neither arm pays for them
    for arm in ("shared", "separate"):  # a reused --workdir: both arms answer afresh
        shutil.rmtree(root / arm, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--arm", "shared", "--workdir", str(root)], env=env, check=True)
    shared_s = time.perf_counter() - start
    start = time.perf_counter()
    for command in commands:
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    separate_s = time.perf_counter() - start
    files = sorted((root / "separate").glob("*.jsonl"))
    n = sum(len(rows(f)) for f in files)
    differ = [f.name for f in files if rows(f) != rows(root / "shared" / "models" / "omni" / f.name)]
    print(f"{len(commands)} item configs, {n} answers (items x runs), threads {args.threads}")
    print(f"shared runner pass: {shared_s:.1f} s ({n / shared_s:.1f} answers/s)")
    print(f"separate judge runs: {separate_s:.1f} s ({n / separate_s:.1f} answers/s)")
    print("same answers in both arms" if not differ else f"answers differ in {', '.join(differ)}")
    print(f"speedup={separate_s / shared_s:.2f} items_per_s={n / shared_s:.1f}")


if __name__ == "__main__":
    main()
