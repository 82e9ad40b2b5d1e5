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
