"""The shortcut table (omniaudit/shortcuts.py) is the one place a shortcut is added: a sixth one, registered with the
audit that measures it, is measured, planted, calibrated and shown on the card with the five."""

from __future__ import annotations

import json

import pytest
from toy_audit import GUESS_FOLLOWING, GuessAudit

from omniaudit.audits import register_audit, unregister_audit
from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.shortcuts import BY_NAME, SHORTCUTS, TABLE, register_shortcut, unregister_shortcut


@pytest.fixture
def sixth():
    register_audit(GuessAudit)
    shortcut = register_shortcut(GUESS_FOLLOWING)
    yield shortcut
    unregister_shortcut(shortcut.name)
    unregister_audit(GuessAudit.name)


def test_a_sixth_shortcut_added_by_one_table_entry_is_measured_planted_and_on_the_card(sixth, tmp_path, capsys):
    out = tmp_path / "card"
    assert main(["scorecard", "--model", "x=scripted:random", "--audits", "toy_guess", "--references", "--size",
                 "small", "--n-resamples", "200", "--out", str(out), "-q"]) == 0
    card = json.loads((out / "scorecard.json").read_text())
    assert card["shortcuts"][-1] == "guess_following" and len(card["shortcuts"]) == 6
    assert card["rules"]["guess_following"].startswith("answers the guessed word (toy_guess)")
    models = card["models"]
    assert models["guess"]["spec"] == "scripted:guess-follower"
    assert card["flagged"]["guess"] == ["guess_following"]
    assert models["oracle"]["shortcuts"]["guess_following"]["status"] == "clear"
    assert all(card["flagged"][m] == [] for m in ("oracle", "pos", "label", "verbose"))
    assert "guess_following" in (out / "scorecard.md").read_text()


def test_the_table_refuses_a_taken_name_and_forgets_what_it_was_given(sixth):
    assert SHORTCUTS[-1] == "guess_following" and BY_NAME["guess_following"] is TABLE[-1]
    with pytest.raises(InputError, match="already has this shortcut"):
        register_shortcut(GUESS_FOLLOWING)
    unregister_shortcut("guess_following")
    assert "guess_following" not in SHORTCUTS and len(TABLE) == 5
    register_shortcut(GUESS_FOLLOWING)  # for the fixture to take out


def _minimum_effects_in(page: str) -> dict[str, list[float]]:
    """Per shortcut row of a docs table (``| `name` | ... | minimum effect |``), the numbers of its last cell."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / page).read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\| `(\w+)` \|.*\| ([^|]*) \|$", line)
        if m and m.group(1) in BY_NAME and m.group(1) not in rows:  # the first table naming the shortcuts
            rows[m.group(1)] = [float(x) for x in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", m.group(2).split("(")[0])]
    return rows


@pytest.mark.parametrize("page", ["scorecard.md", "statistics.md"])
def test_the_docs_state_each_measures_minimum_effect_as_the_table_does(page):
    rows = _minimum_effects_in(page)
    assert set(rows) == set(BY_NAME), page
    for name, numbers in rows.items():
        deltas = [m.delta for m in BY_NAME[name].measures]
        if len(set(deltas)) == 1:  # one minimum for all its measures may be stated once
            deltas = deltas[:len(numbers)] if len(numbers) == 1 else deltas
        assert numbers == [pytest.approx(d) for d in deltas], (page, name, numbers)
