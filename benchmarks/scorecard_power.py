"""What the scorecard's embedded defaults can detect, and how often it flags a model without shortcuts.

The defaults of a size are built and answered once by ``scripted:oracle`` (``omniaudit scorecard --size SIZE``), and
simulated models answer the same items (:mod:`omniaudit.evaluation.scorecard.simulate`) through the card's own
measures and family-wise control:

- per measure and stratum: its clusters, the MDE at 80% power the card prints, the minimum effect of interest
  (``omniaudit/shortcuts.py``) and the **simulated power** at that minimum effect (planted on a content-blind base);
- per shortcut-free policy (content-blind guesses, content choosers, models that only guess without audio): the
  **false-flag rate**, the share of models with any flag across every measure and stratum (goal <= 5%).

The baseline in the same run is the nominal rate: 5% false flags, 80% power where the MDE is within the minimum effect.
Composition's dominance measure is not simulated here (its null is exact per sample:
``tests/evaluation/composition/test_composition_dominance_null.py``); its MDE is printed from a random model's card.

Every model is priced at the whole card's family (one test per measure and stratum of the table,
:func:`~omniaudit.evaluation.scorecard.simulate.card_family`), so the MDEs are the ones a card prints.
``--docs`` writes the table between the ``power-table`` markers of ``docs/statistics.md`` (checked against the code by
``tests/evaluation/scorecard/test_scorecard_calibration.py``).

Last line: ``false_flag_max=<worst policy's rate> power_min=<lowest power at the minimum effect>``.

    python benchmarks/scorecard_power.py [--size default|small] [--models 500] [--workdir DIR] [--docs]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="default", choices=("default", "small"))
    parser.add_argument("--models", type=int, default=500, help="simulated models per policy and per planted effect")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", action="store_true", help="write the table into docs/statistics.md")
    args = parser.parse_args()

    from omniaudit.evaluation.scorecard import ScorecardOptions, run_scorecard
    from omniaudit.evaluation.scorecard.rules import decide_family
    from omniaudit.evaluation.scorecard.simulate import AT_MINIMUM, POLICIES, card_family, item_structure, simulate

    work = args.workdir or Path(tempfile.mkdtemp(prefix="scorecard_power_"))
    card = work / f"card-{args.size}"
    start = time.perf_counter()
    run_scorecard(card, ["rnd=scripted:random"], ScorecardOptions(size=args.size, allow_uncalibrated=True))
    built = time.perf_counter() - start
    structure = item_structure(card)
    rng = np.random.default_rng(args.seed)
    family = card_family()

    def flags(records: dict) -> set[str]:
        return {f"{e['key']}/{e['stratum']}" for es in records.values() for e in es if e["verdict"] == "flagged"}

    print(f"defaults ({args.size}) built and answered by the oracle and a random model in {built:.0f} s")
    rates = {}
    for policy in POLICIES:
        rates[policy] = np.mean([bool(flags(decide_family(simulate(structure, policy, rng), family=family)))
                                 for _ in range(args.models)])
        print(f"false-flag rate, {policy:<10}: {rates[policy]:.3f} (goal <= 0.05, {args.models} models)")
    print(f"\n{'measure':<20} {'clusters':>8} {'MDE':>8} {'minimum':>8} {'power':>6}")
    powers, rows = {}, []
    for key, plant in AT_MINIMUM.items():
        runs = [decide_family(simulate(structure, "uniform", rng, plant), family=family) for _ in range(args.models)]
        record = next(e for es in runs[0].values() for e in es if f"{e['key']}/{e['stratum']}" == key)
        powers[key] = np.mean([key in flags(r) for r in runs])
        rows.append((key, record["clusters"], record["mde"], record["delta"], f"{powers[key]:.2f}"))
    import json

    verdicts = json.loads((card / "scorecard.json").read_text(encoding="utf-8"))["models"]["rnd"]["shortcuts"]
    for e in verdicts["modality_dominance"]["evidence"]:
        if e.get("key") == "dominance" and e["measured"]:
            rows.append(("dominance/all", e["clusters"], e["mde"], e["delta"], "n/a"))
    for row in rows:
        print(f"{row[0]:<26} {row[1]:>8} {row[2]:>8.3f} {row[3]:>8.3f} {row[4]:>6}")
    print(f"false_flag_max={max(rates.values()):.3f} power_min={min(powers.values()):.2f}")
    if args.docs:
        write_docs(rows, rates, args)


MARKERS = ("<!-- power-table:start", "<!-- power-table:end -->")


def table(rows: list[tuple], rates: dict, args) -> str:
    """The markdown table of ``rows`` (measure/stratum, clusters, MDE, minimum effect, power) and its false flags."""
    lines = [f"{MARKERS[0]} (written by `python benchmarks/scorecard_power.py --size {args.size} --models "
             f"{args.models} --docs`) -->", "",
             "| measure / stratum | clusters | MDE (80% power) | minimum effect | power at the minimum |",
             "| :--- | ---: | ---: | ---: | ---: |"]
    lines += [f"| `{key}` | {clusters} | {mde:.3f} | {delta:g} | {power} |"
              for key, clusters, mde, delta, power in rows]
    flags = ", ".join(f"{policy} {rate:.1%}" for policy, rate in rates.items())
    lines += ["", f"False-flag rate (any flag of a model's family, {args.models} models each): {flags}.", "",
              MARKERS[1]]
    return "\n".join(lines)


def write_docs(rows: list[tuple], rates: dict, args) -> None:
    """Replace the table between the markers of docs/statistics.md."""
    docs = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
    text = docs.read_text(encoding="utf-8")
    start, end = text.index(MARKERS[0]), text.index(MARKERS[1]) + len(MARKERS[1])
    docs.write_text(text[:start] + table(rows, rates, args) + text[end:], encoding="utf-8")
    print(f"wrote the table into {docs}")


if __name__ == "__main__":
    main()
