"""The registry and the shortcut table agree: every audit implements the one contract and has its commands, every
shortcut is measured by audits that list it, and every planted reference exists."""

import pytest

from omniaudit.audits import AUDITS, SIZES, Audit
from omniaudit.cli import build_parser
from omniaudit.runners.scripted import plant_of, scripted_names
from omniaudit.shortcuts import PLANTED, REFERENCE_NAMES, SHORTCUTS, TABLE


def _subcommands(parser, *path):
    for name in path:
        parser = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[name]
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return set(action.choices)


def test_every_built_in_audit_implements_the_contract_and_has_its_commands():
    parser = build_parser()
    assert set(AUDITS) <= _subcommands(parser, "build") and set(AUDITS) <= _subcommands(parser, "audit")
    for audit in AUDITS.values():
        assert isinstance(audit, Audit), audit
        for hook in ("build", "audit", "measures", "metrics", "tables"):
            assert getattr(type(audit), hook) is not getattr(Audit, hook), (audit.name, hook)
        assert audit.sizes.keys() == set(SIZES) and "{" in audit.summary, audit.name  # its default, described


@pytest.mark.parametrize("shortcut", TABLE, ids=lambda s: s.name)
def test_every_shortcut_is_measured_by_audits_that_list_it_and_has_a_planted_reference(shortcut):
    for measure in shortcut.measures:
        assert measure.audit in AUDITS, (shortcut.name, measure.key)
        assert shortcut.name in AUDITS[measure.audit].shortcuts, (shortcut.name, measure.audit)
    assert PLANTED[shortcut.reference] == shortcut.name and shortcut.reference in scripted_names()
    assert REFERENCE_NAMES[shortcut.name] == shortcut.card_name and callable(plant_of(shortcut.reference))


def test_every_shortcut_an_audit_lists_is_in_the_shortcut_table():
    assert {s for a in AUDITS.values() for s in a.shortcuts} <= set(SHORTCUTS)
