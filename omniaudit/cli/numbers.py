"""The argparse types of the numeric options: each reads its value and refuses one out of its range (nan and inf
always) with argparse's error, the usage and then e.g. ``omniaudit judge: error: argument --timeout: expected a finite
number > 0, got 'inf'``, and exit 2, before any file is read or written.

Pick by what the option means: :data:`positive_int` for counts of things that must exist (tokens, resamples, runs),
:data:`non_negative_int` where 0 means something (no retries, no trials) and for seeds, :func:`integer` for other
ranges; :data:`positive` / :data:`non_negative` / :data:`finite` for seconds, strengths and dB; :data:`share` ([0, 1])
and :data:`fraction` ((0, 1]) for proportions; :func:`number` for other intervals.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def integer(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    """An integer in [low, high] (either end None: unbounded on that side)."""
    if low is not None and high is not None:
        expected = f"an integer in [{low}, {high}]"
    elif low is not None:
        expected = f"an integer >= {low}"
    elif high is not None:
        expected = f"an integer <= {high}"
    else:
        expected = "an integer"

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}") from None
        if (low is not None and number < low) or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
        return number

    parse.__name__ = parse.__qualname__ = "integer"
    # (low, high, low excluded, high excluded)
    parse.bounds = (low, high, False, False)  # type: ignore[attr-defined]  # a function attribute, for tests
    parse.expected = expected  # type: ignore[attr-defined]  # a function attribute, for tests
    return parse


def number(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False) -> Callable[[str], float]:
    """A finite number in the interval from ``low`` to ``high`` (either end None: unbounded on that side; ``*_open``:
    that end excluded). nan and inf are always refused."""
    if low is not None and high is not None:
        expected = f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    elif low is not None:
        expected = f"a finite number {'>' if low_open else '>='} {low:g}"
    elif high is not None:
        expected = f"a finite number {'<' if high_open else '<='} {high:g}"
    else:
        expected = "a finite number"

    def parse(value: str) -> float:
        try:
            x = float(value)
        except ValueError:
            x = math.nan
        inside = (math.isfinite(x)
                  and (low is None or (x > low if low_open else x >= low))
                  and (high is None or (x < high if high_open else x <= high)))
        if not inside:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value!r}")
        return x

    parse.__name__ = parse.__qualname__ = "number"
    parse.bounds = (low, high, low_open, high_open)  # type: ignore[attr-defined]  # a function attribute, for tests
    parse.expected = expected  # type: ignore[attr-defined]  # a function attribute, for tests
    return parse


positive_int = integer(1)  # a count of things that must exist: tokens, frames, resamples, runs, clips
non_negative_int = integer(0)  # 0 means something (no retries, no trials); seeds (numpy takes none below 0)
finite = number()  # any sign: dB, signed seconds
positive = number(0, low_open=True)  # seconds of a timeout, frames per second, megabytes
non_negative = number(0)  # tolerances (0: exact), temperatures (0: greedy), strengths (0: none)
share = number(0, 1)  # a share of answers, a relative depth: both ends meaningful
fraction = number(0, 1, low_open=True)  # top_p, a relative gap tolerance: 0 would keep nothing
