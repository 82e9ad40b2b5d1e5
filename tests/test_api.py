"""The Python API at the top level of the package (omniaudit/api.py): ``omniaudit.scorecard``, ``omniaudit.audit`` and
``omniaudit.build``, imported on first use (``import omniaudit`` loads no numerical library), with the command line's
defaults; the example of docs/api.md runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import omniaudit
from omniaudit.api import BUILDERS, scorecard_options
from omniaudit.cli import main as cli
from omniaudit.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_import_omniaudit_loads_no_numerical_library_and_the_api_on_first_use():
    code = ("import sys, omniaudit; heavy = ('torch', 'pandas', 'numpy', 'scipy', 'datasets', 'omniaudit.api'); "
            "before = [m for m in heavy if m in sys.modules]; f = omniaudit.build; "
            "print(before, 'omniaudit.api' in sys.modules, f.__module__, "
            "sorted(set(omniaudit.__all__) - set(dir(omniaudit))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "True", "omniaudit.api", "[]"]


def test_the_lazy_names_are_the_api_s():
    from omniaudit import api, results

    assert (omniaudit.scorecard, omniaudit.audit, omniaudit.build) == (api.scorecard, api.audit, api.build)
    assert omniaudit.ScorecardResult is results.ScorecardResult and omniaudit.AuditResult is results.AuditResult
    from omniaudit import Verdict  # a from-import goes through the module's __getattr__ too

    assert Verdict is results.Verdict
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        omniaudit.nope  # noqa: B018


class Captured(Exception):
    """Stops the command once it has built its options."""


def cli_options(monkeypatch, tmp_path, *flags: str):
    """The ScorecardOptions `omniaudit scorecard` builds from ``flags``."""
    import omniaudit.evaluation.scorecard as package

    def capture(out, models, options, progress=None, launch=None):
        raise Captured(options)

    monkeypatch.setattr(package, "run_scorecard", capture)
    with pytest.raises(Captured) as caught:
        cli(["scorecard", "--model", "m=scripted:oracle", "--out", str(tmp_path / "card"), *flags])
    return caught.value.args[0]


@pytest.mark.parametrize(("flags", "options"), [
    ((), {}),
    (("--size", "small", "--references", "--batch-size", "4", "--temperature", "0.5", "--audits",
      "preference,protocols", "--limit", "5", "--max-reply-mb", "8", "--no-reuse", "--cache", "c"),
     {"size": "small", "references": "scripted", "batch_size": 4, "temperature": 0.5,
      "audits": ["preference", "protocols"], "limit": 5, "reuse": False, "cache_dir": "c"}),
    (("--references", "learned", "--seed", "3", "--top-p", "0.9", "--dialect", "frames", "--n-resamples", "300",
      "--allow-uncalibrated", "--data", "preference=d"),
     {"references": "learned", "seed": 3, "top_p": 0.9, "dialect": "frames", "n_resamples": 300,
      "allow_uncalibrated": True, "data": {"preference": "d"}}),
])
def test_the_scorecard_takes_the_command_s_defaults(monkeypatch, tmp_path, flags, options):
    assert scorecard_options(**options) == cli_options(monkeypatch, tmp_path, *flags)


def test_a_scorecard_option_it_does_not_know_or_out_of_range_fails_before_any_work(tmp_path):
    with pytest.raises(InputError, match="no option 'batchsize'.*batch_size"):
        omniaudit.scorecard({"m": "scripted:oracle"}, tmp_path / "card", batchsize=4)
    with pytest.raises(InputError, match="n_resamples"):
        omniaudit.scorecard({"m": "scripted:oracle"}, tmp_path / "card", n_resamples=10)
    assert not (tmp_path / "card").exists()


def test_build_gives_each_option_to_the_first_class_that_declares_it():
    from omniaudit.api import _option_objects
    from omniaudit.data_builders.protocols import SpeechSetSpec

    made = _option_objects(BUILDERS["protocols"], {"seed": 3, "sentences_per_cell": 1, "per_class": 5})
    assert made["options"].seed == 3 and made["spec"] == SpeechSetSpec(sentences_per_cell=1)
    assert made["corpus_options"].per_class == 5 and made["corpus_options"].seed == 0
    made = _option_objects(BUILDERS["protocols"], {"spec": SpeechSetSpec(seed=2), "sentences_per_cell": 1})
    assert made["spec"] == SpeechSetSpec(sentences_per_cell=1, seed=2) and "options" not in made


@pytest.mark.parametrize(("call", "message"), [
    (lambda out: omniaudit.build("nope", out), "no builder of this name"),
    (lambda out: omniaudit.build("preference", out, pairs=10), "no option 'pairs'.*n_pairs"),
    (lambda out: omniaudit.build("preference", out, size="small", n_pairs=10), "no source or options"),
    (lambda out: omniaudit.build("preference", out, spec="x"), "must be a SyntheticSpec"),
    (lambda out: omniaudit.audit("nope", dataset="d", out=out), "unknown audit"),
    (lambda out: omniaudit.audit("preference", dataset="d", predictions={"m": "missing.jsonl"}, out=out),
     "no such file"),
])
def test_wrong_input_is_one_input_error_and_nothing_written(tmp_path, call, message):
    with pytest.raises(InputError, match=message):
        call(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_build_writes_as_the_command_does_and_refuses_a_users_folder(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    with pytest.raises(InputError):
        omniaudit.build("preference", mine, n_pairs=40)
    assert (mine / "notes.txt").read_text() == "mine"
    out = omniaudit.build("preference", tmp_path / "pairs", n_pairs=40, dual_order=True)
    marker = json.loads((out / ".omniaudit.json").read_text())
    assert marker["command"] == "omniaudit build preference" and (out / "dual_order").is_dir()
    assert cli(["build", "preference", "--pairs", "40", "--out", str(out)]) == 0  # the command's own output


def test_the_api_page_example_runs(tmp_path, monkeypatch):
    """Every ```python block of docs/api.md, in order, in an empty folder."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert blocks
    monkeypatch.chdir(tmp_path)
    exec(compile("\n".join(blocks), "docs/api.md", "exec"), {})  # noqa: S102 - the page's own example
    card = omniaudit.ScorecardResult.read("runs/api/card")
    assert card.verdict("pos", "position").flagged and card.audit("pos", "preference") is not None
    assert set(card.verdicts("oracle")) == set(card.data["shortcuts"])
