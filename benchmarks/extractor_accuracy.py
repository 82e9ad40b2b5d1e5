"""Accuracy of the rule-based answer extractor on the labelled phrasings, against a majority-class baseline.

The labelled set (``omniaudit.evaluation.extract_labelled.LABELLED``: the paper's appendix D answers, the builder's
reference answers, negations, hedges, picture-as-subject directions and answers that must stay unparsed) is read
by the extractor the interventions audit uses for free-form answers. A case is right when every expected field is
(offsets within 1e-6 s). The baseline answers every case of a dimension with that dimension's most frequent
expected fields, the accuracy a constant guess gets. Misses are listed.

One line per dimension, then ``accuracy=<overall> baseline=<overall> n=<cases>``.

    python benchmarks/extractor_accuracy.py [--by-source]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from omniaudit.evaluation.extract_labelled import LABELLED, extractor_accuracy

DIMENSIONS = ("sync", "existence", "consistency")


def majority_baseline():
    """An extractor that returns, per dimension, the most frequent expected fields of the labelled set."""
    common = {d: json.loads(Counter(json.dumps(w, sort_keys=True) for dim, _, w, _ in LABELLED if dim == d)
                            .most_common(1)[0][0]) for d in DIMENSIONS}
    return lambda dimension, _answer: common[dimension]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--by-source", action="store_true", help="also print accuracy per source of the cases")
    args = parser.parse_args(argv)
    rules, baseline = extractor_accuracy(), extractor_accuracy(majority_baseline())
    for d in DIMENSIONS:
        print(f"{d}: accuracy={rules[d]['accuracy']:.3f} ({rules[d]['correct']}/{rules[d]['n']}) "
              f"baseline={baseline[d]['accuracy']:.3f}")
    if args.by_source:
        by_source = Counter(src for *_, src in LABELLED)
        missed = Counter(m["source"] for m in rules["misses"])
        for src, n in sorted(by_source.items()):
            print(f"  {src}: {n - missed[src]}/{n}")
    for m in rules["misses"]:
        print(f"MISS {m['dimension']}: {m['answer']!r} expected {m['expected']} got {m['got']}")
    overall = rules["overall"]
    print(f"accuracy={overall['accuracy']:.3f} baseline={baseline['overall']['accuracy']:.3f} n={overall['n']}")
    return rules


if __name__ == "__main__":
    main()
