"""What the scorecard's embedded defaults can detect, and how often it flags a model without shortcuts.

The defaults of a size are built and answered once by ``scripted:oracle`` (``omniaudit scorecard --size SIZE``), and
simulated models answer the same items (:mod:`omniaudit.evaluation.scorecard.simulate`; composition's:
:mod:`omniaudit.evaluation.scorecard.simulate_dominance`) through the card's own measures and family-wise control:

- per measure and stratum: its clusters, the MDE at 80% power the card prints, the minimum effect of interest
  (``omniaudit/shortcuts.py``) and the **simulated power** at that minimum effect (planted on a content-blind base);
- per shortcut-free policy (content-blind guesses, content choosers, models that only guess without audio; each with
  a content-blind greedy model's composition answers): the **false-flag rate**, the share of models with any flag
  across every measure and stratum (goal <= 5%);
- composition's dominance: the power at its minimum effect of a model whose failures one modality decides (audio,
  image: flagged *and* the cell naming that modality; its row's clusters and MDE are the planted models' medians, a
  model's clusters being the samples it fails), at half the minimum, and the false-flag rate of content-blind models
  (greedy: one answer per input; sampling: its moves do not clear the stability floor, so the measure never counts).

The baseline in the same run is the nominal rate: 5% false flags, 80% power where the MDE is within the minimum effect.
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

# composition's planted dominance: the effect on the measure's own scale (share minus the per-sample null)
DOMINANCE = {"audio": {"modality": "audio", "effect": 0.2}, "image": {"modality": "image", "effect": 0.2},
             "audio, half the minimum": {"modality": "audio", "effect": 0.1}}


def flags(records: dict) -> set[str]:
    return {f"{e['key']}/{e['stratum']}" for es in records.values() for e in es if e["verdict"] == "flagged"}


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
    from omniaudit.evaluation.scorecard.simulate import card_family, item_structure
    from omniaudit.evaluation.scorecard.simulate_dominance import dominance_structure

    work = args.workdir or Path(tempfile.mkdtemp(prefix="scorecard_power_"))
    card = work / f"card-{args.size}"
    start = time.perf_counter()
    run_scorecard(card, ["rnd=scripted:random"], ScorecardOptions(size=args.size, allow_uncalibrated=True))
    built = time.perf_counter() - start
    structure, composition = item_structure(card), dominance_structure(card / "datasets" / "composition")
    rng = np.random.default_rng(args.seed)
    family = card_family()
    print(f"defaults ({args.size}) built and answered by the oracle and a random model in {built:.0f} s")
    rates, greedy = false_flags(structure, composition, rng, family, args.models)
    rows, powers = power_rows(structure, rng, family, args.models)
    row, dominance = dominance_rows(composition, rng, family, args.models)
    dominance["greedy"] = greedy
    rows.append(row)
    powers["dominance/all"] = dominance["audio"]
    print(f"\n{'measure':<26} {'clusters':>8} {'MDE':>8} {'minimum':>8} {'power':>6}")
    for r in rows:
        print(f"{r[0]:<26} {r[1]:>8} {r[2]:>8.3f} {r[3]:>8.3f} {r[4]:>6}")
    print(dominance_line(dominance, composition, args.models))
    print(f"false_flag_max={max(rates.values()):.3f} power_min={min(powers.values()):.2f}")
    if args.docs:
        write_docs(rows, rates, dominance_line(dominance, composition, args.models), args)


def false_flags(structure: dict, composition, rng, family: int, models: int) -> tuple[dict, float]:
    """Per shortcut-free policy, the share of models with any flag of the whole family (composition answered by a
    content-blind greedy model), and the share of those composition models the dominance measure flags."""
    from omniaudit.evaluation.scorecard.rules import decide_family
    from omniaudit.evaluation.scorecard.simulate import POLICIES, simulate
    from omniaudit.evaluation.scorecard.simulate_dominance import simulate as simulate_dominance

    rates, dominance = {}, []
    for policy in POLICIES:
        found = [flags(decide_family({**simulate(structure, policy, rng),
                                      **simulate_dominance(composition, "per_input", rng)}, family=family))
                 for _ in range(models)]
        rates[policy] = float(np.mean([bool(f) for f in found]))
        dominance += ["dominance/all" in f for f in found]
        print(f"false-flag rate, {policy:<10}: {rates[policy]:.3f} (goal <= 0.05, {models} models)")
    return rates, float(np.mean(dominance))


def power_rows(structure: dict, rng, family: int, models: int) -> tuple[list[tuple], dict]:
    """Per measure and stratum of the simulated audits: (key, clusters, MDE, minimum effect, power) at the minimum."""
    from omniaudit.evaluation.scorecard.rules import decide_family
    from omniaudit.evaluation.scorecard.simulate import AT_MINIMUM, simulate

    powers, rows = {}, []
    for key, plant in AT_MINIMUM.items():
        runs = [decide_family(simulate(structure, "uniform", rng, plant), family=family) for _ in range(models)]
        record = next(e for es in runs[0].values() for e in es if f"{e['key']}/{e['stratum']}" == key)
        powers[key] = float(np.mean([key in flags(r) for r in runs]))
        rows.append((key, record["clusters"], record["mde"], record["delta"], f"{powers[key]:.2f}"))
    return rows, powers


def dominance_rows(composition, rng, family: int, models: int) -> tuple[tuple, dict]:
    """Composition's dominance row (median clusters and MDE of the models planted at the minimum, power of the
    audio-dominant ones) and, per planted model of :data:`DOMINANCE` and the content-blind sampling one, the share
    flagged (planted: flagged with the cell naming the planted modality)."""
    from omniaudit.evaluation.scorecard.rules import decide_family
    from omniaudit.evaluation.scorecard.simulate_dominance import simulate

    out, planted = {}, []
    for name, plant in DOMINANCE.items():
        records = [decide_family(simulate(composition, "per_input", rng, plant), family=family)
                   ["modality_dominance"][0] for _ in range(models)]
        out[name] = float(np.mean([e["verdict"] == "flagged" and f"mostly {plant['modality']}" in e["note"]
                                   for e in records]))
        planted += records if plant["effect"] == 0.2 else []
    sampling = [decide_family(simulate(composition, "iid", rng), family=family)["modality_dominance"][0]
                for _ in range(models)]
    out["sampling"] = float(np.mean([e["verdict"] == "flagged" for e in sampling]))
    record = planted[0]
    row = ("dominance/all", int(np.median([e["clusters"] for e in planted])),
           float(np.median([e["mde"] for e in planted])), record["delta"], f"{out['audio']:.2f}")
    return row, out


def dominance_line(dominance: dict, composition, models: int) -> str:
    """The dominance simulation in words (the docs' line under the table)."""
    inputs = composition.inputs
    distinct = inputs.loc[inputs["item"] == "full", "input"].nunique()
    return (f"Dominance (composition: {len(composition.samples)} samples, {distinct} distinct inputs; {models} "
            f"models each): flagged with the cell naming the modality at the minimum effect, audio-dominant "
            f"{dominance['audio']:.2f} and image-dominant {dominance['image']:.2f}; at half the minimum "
            f"{dominance['audio, half the minimum']:.2f}; content-blind models flagged: greedy "
            f"{dominance['greedy']:.1%} ({3 * models}), sampling {dominance['sampling']:.1%} (its moves do not clear "
            "the stability floor, so the measure does not count).")


MARKERS = ("<!-- power-table:start", "<!-- power-table:end -->")


def table(rows: list[tuple], rates: dict, dominance: str, args) -> str:
    """The markdown table of ``rows`` (measure/stratum, clusters, MDE, minimum effect, power), its false flags and
    the dominance simulation's line."""
    lines = [f"{MARKERS[0]} (written by `python benchmarks/scorecard_power.py --size {args.size} --models "
             f"{args.models} --docs`) -->", "",
             "| measure / stratum | clusters | MDE (80% power) | minimum effect | power at the minimum |",
             "| :--- | ---: | ---: | ---: | ---: |"]
    lines += [f"| `{key}` | {clusters} | {mde:.3f} | {delta:g} | {power} |"
              for key, clusters, mde, delta, power in rows]
    rated = ", ".join(f"{policy} {rate:.1%}" for policy, rate in rates.items())
    lines += ["", f"False-flag rate (any flag of a model's family, composition answered by a content-blind greedy "
                  f"model; {args.models} models each): {rated}.", "", dominance, "", MARKERS[1]]
    return "\n".join(lines)


def write_docs(rows: list[tuple], rates: dict, dominance: str, args) -> None:
    """Replace the table between the markers of docs/statistics.md."""
    docs = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
    text = docs.read_text(encoding="utf-8")
    start, end = text.index(MARKERS[0]), text.index(MARKERS[1]) + len(MARKERS[1])
    docs.write_text(text[:start] + table(rows, rates, dominance, args) + text[end:], encoding="utf-8")
    print(f"wrote the table into {docs}")


if __name__ == "__main__":
    main()
