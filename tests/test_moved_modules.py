"""The evaluation modules' earlier names still import (one release), warn, and give the same objects."""

import importlib

import pytest

from omniaudit.evaluation._moved import MOVED, new_name


@pytest.mark.parametrize("old", [o for o, n in MOVED.items() if n])
def test_every_old_name_forwards_to_its_new_home(old):
    with pytest.warns(DeprecationWarning, match=f"omniaudit.evaluation.{old} moved to"):
        module = importlib.import_module(f"omniaudit.evaluation.{old}")
    new = importlib.import_module(new_name(f"omniaudit.evaluation.{old}"))
    public = [n for n in dir(new) if not n.startswith("_")]
    assert public and all(getattr(module, n) is getattr(new, n) for n in public)


def test_documented_names_keep_working():
    with pytest.warns(DeprecationWarning):
        from omniaudit.evaluation.judges import parse_answer, run_judge
        from omniaudit.evaluation.judges.run import run_judge as run_judge_too
    from omniaudit.evaluation.runners import parse_answer as new_parse
    from omniaudit.evaluation.runners import run_judge as new_run

    assert (parse_answer, run_judge, run_judge_too) == (new_parse, new_run, new_run)
    with pytest.warns(DeprecationWarning, match="preference.report"):
        from omniaudit.evaluation.report import preference_report
    from omniaudit.evaluation.preference.report import preference_report as new_report

    assert preference_report is new_report
    assert new_name("omniaudit.evaluation.stats") is None  # what did not move is not touched
