"""The tables that name the audits and shortcuts agree: an audit added or renamed in one place and not another fails
here, not in a user's run ("no scorecard adapter", a KeyError under --report-to wandb)."""

import pytest

from omniaudit.audits import AUDITS
from omniaudit.cli import build_parser
from omniaudit.evaluation import audit_outputs
from omniaudit.evaluation.runners.scripted import SCRIPTED
from omniaudit.evaluation.scorecard.adapters import ADAPTERS
from omniaudit.shortcuts import PLANTED, REFERENCE_NAMES, SHORTCUTS, TABLE


def _subcommands(parser, *path):
    for name in path:
        parser = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[name]
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return set(action.choices)


def test_every_audit_has_a_builder_an_audit_an_adapter_outputs_and_commands():
    parser = build_parser()
    assert set(ADAPTERS) == set(AUDITS) == set(audit_outputs.AUDITS)
    assert set(audit_outputs.METRICS) == set(audit_outputs.TABLES) == set(AUDITS)
    assert set(AUDITS) <= _subcommands(parser, "build") and set(AUDITS) <= _subcommands(parser, "audit")
    for audit in AUDITS.values():
        assert callable(audit.builder()) and callable(audit.runner()), audit.name


@pytest.mark.parametrize("shortcut", TABLE, ids=lambda s: s.name)
def test_every_shortcut_is_measured_by_audits_that_list_it_and_has_a_planted_reference(shortcut):
    for measure in shortcut.measures:
        assert measure.audit in AUDITS, (shortcut.name, measure.key)
        assert shortcut.name in AUDITS[measure.audit].shortcuts, (shortcut.name, measure.audit)
    assert PLANTED[shortcut.reference] == shortcut.name and shortcut.reference in SCRIPTED
    assert shortcut.name in REFERENCE_NAMES


def test_every_shortcut_an_audit_lists_is_in_the_shortcut_table():
    assert {s for a in AUDITS.values() for s in a.shortcuts} <= set(SHORTCUTS)
