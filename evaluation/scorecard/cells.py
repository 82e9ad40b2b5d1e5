"""One verdict cell of the card: the status, the direction and strata it was flagged in, and the bound that
decided it (the card's legend says how to read one)."""

from __future__ import annotations

import numpy as np


def value(x, digits: int = 2) -> str:
    """A number as the card prints it (n/a for none)."""
    return "n/a" if x is None else f"{x:.{digits}f}"


def flagged_where(v: dict) -> str:
    """" in concat", " in concat and native": the strata a flagged measure is flagged in ('' for the whole set)."""
    strata = [x for x in v.get("flagged_in") or [v.get("stratum")] if x not in (None, "all")]
    return f" in {' and '.join(strata)}" if v["status"] == "flagged" and strata else ""


def cell(v: dict) -> str:
    """One verdict cell, showing the bound that decided it: FLAGGED, the value and its simultaneous interval against
    the null; clear, the value and its one-sided 95% bound(s) against the minimum effect around the null;
    inconclusive, the interval, the effect the items can detect (MDE at 80% power) and about how many clusters would
    decide (the MDE scales as one over the square root of the clusters)."""
    if v["status"] in ("not measured", "not answering"):
        return v["status"]
    lo, hi = v["ci"]
    where = flagged_where(v)
    null, delta, bound = v["null"], v.get("delta"), v.get("equivalence_bound") or [None, None]
    if v["status"] == "clear" and delta is not None and bound[1] is not None:
        mark = "clear, small" if v.get("significant") else "clear"  # small: real, shown below the minimum effect
        if bound[0] is None:
            return (f"{mark} {value(v['value'])}, 95% bound {value(bound[1])} < {value(null + delta)} "
                    f"(null {value(null)} + minimum effect {value(delta)})")
        return (f"{mark} {value(v['value'])}, 95% bounds [{value(bound[0])}, {value(bound[1])}] within "
                f"{value(null - delta)} to {value(null + delta)} (null {value(null)} ± {value(delta)})")
    mark = "FLAGGED" if v["status"] == "flagged" else v["status"]
    if v["status"] == "flagged" and v.get("direction"):  # a two-sided measure: which way ("shorter", "slot B")
        mark += f" ({v['direction']})"
    if v["status"] == "clear" and v.get("significant"):
        mark = "clear, small"
    cell = f"{mark}{where} {value(v['value'])} [{value(lo)}, {value(hi)}] (null {value(null)}, MDE "
    if v["status"] == "flagged" and delta and v.get("value") is not None and abs(v["value"] - null) < delta:
        # flagged below the minimum effect: the effect is real and its bound does not rule the minimum out
        far = bound[1] if v["value"] >= null or bound[0] is None else bound[0]
        return cell + (f"{value(v.get('mde'))}; below the minimum {value(delta)}, but its 95% bound {value(far)} "
                       f"does not rule it out)")
    if v["status"] == "inconclusive" and delta and v.get("mde") and v.get("clusters"):
        needed = int(np.ceil(v["clusters"] * (v["mde"] / delta) ** 2))
        return cell + f"{value(v['mde'])} > {value(delta)}: about {needed} clusters would decide)"
    return cell + f"{value(v.get('mde'))})"
