"""A verdict cell shows what decided it: the strata a measure is flagged in, its direction, and for a flag below the
minimum effect the bound that does not rule the minimum out."""

from omniaudit.evaluation.scorecard.cells import cell


def _flag(**kw):
    return {"status": "flagged", "stratum": "all", "ci": [0.6, 0.8], "null": 0.5, "value": 0.7, "delta": 0.1,
            "mde": 0.05, "equivalence_bound": [0.55, 0.78], **kw}


def test_every_stratum_a_measure_is_flagged_in_is_named():
    assert cell(_flag(stratum="native", flagged_in=["native", "concat"], direction="slot A")).startswith(
        "FLAGGED (slot A) in native and concat 0.70")
    assert cell(_flag(stratum="native", flagged_in=["native"])).startswith("FLAGGED in native 0.70")


def test_a_flag_below_the_minimum_shows_the_bound_that_keeps_it():
    below = cell(_flag(value=0.56, ci=[0.52, 0.60], equivalence_bound=[None, 0.61], delta=0.10))
    assert below.endswith("MDE 0.05; below the minimum 0.10, but its 95% bound 0.61 does not rule it out)")
    above = cell(_flag())
    assert "below the minimum" not in above and above.endswith("(null 0.50, MDE 0.05)")
    slot_b = cell(_flag(value=0.45, ci=[0.40, 0.49], equivalence_bound=[0.38, 0.48], direction="slot B"))
    assert "95% bound 0.38 does not rule it out" in slot_b
