"""Every numeric option of every command reads its value through a range-checked type (omniaudit.cli.numbers): nan,
inf and values out of the option's range are refused by argparse with one error line naming the option, the value and
the range, and exit 2, before anything is read or written; the boundary values of the range still parse."""

from __future__ import annotations

import argparse
import math

import pytest

from omniaudit.cli import build_parser, main, numbers
from omniaudit.cli.scorecard import LIBRARY_CHECKED
from omniaudit.errors import InputError

# plain int / float on purpose: the library refuses a wrong value before any work, in one line that tests pin
# (scorecard: evaluation.scorecard.options.check_options; interventions: the shift plan, the unit counts and the
# offset tolerance, see tests/data_builders/interventions/test_interventions_build.py,
# test_interventions_frame_units.py and tests/evaluation/interventions/test_interventions_audit.py)
PLAIN = {("scorecard", flag) for flag in LIBRARY_CHECKED} | {
    ("build interventions", "--shift"), ("build interventions", "--shift-range"), ("annotate", "--units"),
    ("annotate", "--frames-per-unit"), ("audit interventions", "--offset-tolerance"),
    ("plan", "--zero")}  # choices (2, 3): argparse refuses anything else


def _options() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    """(command, its parser, action) of every option that has a type, over every command."""
    found = []

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*words, name))
            elif action.option_strings and action.type is not None:
                found.append((" ".join(words), parser, action))

    walk(build_parser(), ())
    return found


OPTIONS = _options()
CHECKED = [(c, p, a) for c, p, a in OPTIONS if getattr(a.type, "__module__", None) == numbers.__name__]


def _bad_values(action: argparse.Action) -> list[str]:
    kind = action.type
    low, high, low_open, high_open = kind.bounds
    # "-inf" among several values is read as a flag by argparse ("expected 2 arguments"): refused, another message
    values = ["nan", "inf", "ten"] + (["-inf"] if action.nargs is None else [])
    if kind.__name__ == "integer":
        values += ["1.5"] + ([str(low - 1)] if low is not None else []) + ([str(high + 1)] if high is not None else [])
    else:
        values += [] if low is None else [f"{low:g}" if low_open else f"{low - 0.5:g}"]
        values += [] if high is None else [f"{high:g}" if high_open else f"{high + 0.5:g}"]
    return values


def _boundaries(kind) -> list[tuple[str, float]]:
    """Valid values at the edges of the range (an open end: just inside it)."""
    low, high, low_open, high_open = kind.bounds
    out = []
    if low is not None:
        out.append((f"{low + 1e-6:g}", low + 1e-6) if low_open else (str(low), low))
    if high is not None:
        out.append((f"{high - 1e-6:g}", high - 1e-6) if high_open else (str(high), high))
    return out or [("0", 0)]


def _argv(parser: argparse.ArgumentParser, action: argparse.Action, value: str, fill: str) -> list[str]:
    """The option with ``value`` (an option of two values gets ``fill`` as its second)."""
    flag = action.option_strings[0]
    if isinstance(action.nargs, int) and action.nargs > 1:
        return [flag, value, *[fill] * (action.nargs - 1)]
    return [f"{flag}={value}"]  # "--x=-inf": never read as a flag of its own


def _required(parser: argparse.ArgumentParser) -> list[str]:
    """Dummy values for a command's required arguments (positionals, required options, one of each required
    group), so a parse can succeed."""
    out, positional = [], []
    chosen = {g._group_actions[0] for g in parser._mutually_exclusive_groups if g.required}
    for action in parser._actions:
        value = str(next(iter(action.choices))) if action.choices else "x"
        if not action.option_strings:
            positional.append(value)
        elif action.required or action in chosen:
            out += [action.option_strings[0], value]
    return positional + out


def test_no_numeric_option_is_read_unchecked():
    plain = {(c, a.option_strings[0]) for c, _, a in OPTIONS if a.type in (int, float)}
    assert plain == PLAIN
    assert len(CHECKED) > 40  # every command's counts, seconds, shares and seeds


@pytest.mark.parametrize(("command", "parser", "action", "value"), [
    pytest.param(c, p, a, v, id=f"{c} {a.option_strings[0]} {v}") for c, p, a in CHECKED for v in _bad_values(a)])
def test_every_numeric_option_refuses_nan_inf_and_out_of_range_values(capsys, command, parser, action, value):
    fill = _boundaries(action.type)[0][0]
    with pytest.raises(SystemExit) as stop:
        parser.parse_args([*_argv(parser, action, value, fill), *_required(parser)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {action.option_strings[0]}" in err, err
    assert f": expected {action.type.expected}, got {value!r}" in err, err


@pytest.mark.parametrize(("command", "parser", "action"), [
    pytest.param(c, p, a, id=f"{c} {a.option_strings[0]}") for c, p, a in CHECKED])
def test_every_numeric_options_boundary_values_and_default_still_parse(command, parser, action):
    for text, value in _boundaries(action.type):
        args = parser.parse_args([*_required(parser), *_argv(parser, action, text, text)])
        got = getattr(args, action.dest)
        assert (got[0] if isinstance(got, list) else got) == pytest.approx(value), text
    defaults = action.default if isinstance(action.default, list) else [action.default]
    for default in defaults:
        if default is not None:  # the default lies in the option's own range
            assert action.type(repr(default)) == default


@pytest.mark.parametrize(("argv", "value"), [
    (["judge", "--dataset", "d", "--config", "judge", "--judge", "scripted:oracle", "--timeout", "inf"], "inf"),
    (["judge", "--dataset", "d", "--config", "judge", "--judge", "scripted:oracle", "--max-reply-mb", "nan"], "nan"),
    (["judge", "--dataset", "d", "--config", "judge", "--judge", "scripted:oracle", "--max-reply-mb", "0"], "0"),
    (["judge", "--dataset", "d", "--config", "judge", "--judge", "scripted:oracle", "--max-tokens", "0"], "0"),
    (["audit", "preference", "--n-resamples", "-5"], "-5"),
    (["build", "preference", "--length-control", "-0.1"], "-0.1"),
    (["build", "preference", "--length-tolerance", "nan"], "nan"),
])
def test_the_reported_values_exit_2_writing_nothing(tmp_path, capsys, monkeypatch, argv, value):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {argv[-2]}: expected " in err and f"got {value!r}" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_zero_keeps_its_documented_meaning(tmp_path):
    args = build_parser().parse_args(["judge", "--dataset", "d", "--config", "c", "--judge", "scripted:oracle",
                                      "--out", "p.jsonl", "--top-logprobs", "0", "--max-retries", "0",
                                      "--min-usable", "0", "--temperature", "0", "--seed", "0"])
    assert (args.top_logprobs, args.max_retries, args.min_usable, args.temperature, args.seed) == (0, 0, 0.0, 0.0, 0)
    args = build_parser().parse_args(["build", "protocols", "--out", "o", "--max-trials", "0", "--cleanness-trials",
                                      "0", "--snr", "-5", "--mos-gap", "0", "--min-seconds", "0"])
    assert (args.max_trials, args.cleanness_trials, args.snr, args.mos_gap, args.min_seconds) == (0, 0, -5.0, 0, 0)


@pytest.mark.parametrize(("flag", "value", "option"), [
    ("--timeout", "inf", "timeout_s"), ("--fps", "nan", "fps"), ("--temperature", "inf", "temperature"),
    ("--top-p", "nan", "top_p"), ("--min-usable", "nan", "min_usable"), ("--max-reply-mb", "inf", "--max-reply-mb")])
def test_the_scorecard_refuses_nan_and_inf_in_its_own_one_line(tmp_path, capsys, flag, value, option):
    argv = ["scorecard", "--model", "x=scripted:oracle", "--audits", "preference", flag, value]
    assert main([*argv, "--out", str(tmp_path / "card")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and option in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_depth_range_low_above_high_is_refused_before_any_work(tmp_path, capsys):
    rc = main(["audit", "composition", "--dataset", str(tmp_path / "d"), "--predictions", str(tmp_path / "p.jsonl"),
               "--depth-range", "0.8", "0.2", "--out", str(tmp_path / "out")])
    assert rc == 2 and "--depth-range LOW HIGH needs LOW <= HIGH (got 0.8 0.2)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("options", [{"length_control": -0.1}, {"length_control": 0.0}, {"length_control": 1.5},
                                     {"length_tolerance": math.nan}, {"length_tolerance": 0},
                                     {"length_tolerance": math.inf}, {"length_tolerance": "0.15"}])
def test_the_preference_builder_refuses_a_length_tolerance_outside_0_1(tmp_path, options):
    from omniaudit.data_builders.preference import PreferenceBuildOptions, build_preference_dataset

    with pytest.raises(InputError, match=r"must be a relative length gap in \(0, 1\]"):
        build_preference_dataset(tmp_path / "out", options=PreferenceBuildOptions(**options))
    assert list(tmp_path.iterdir()) == []
    PreferenceBuildOptions(length_control=1.0, length_tolerance=1e-3)  # the range's ends
