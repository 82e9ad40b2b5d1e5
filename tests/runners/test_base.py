"""The one runner contract (omniaudit/runners/base.py): every runner is a Runner whose abilities are declared, and a
duck-typed plugin is adapted once, when it is made; nothing probes a runner for what it can do."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from omniaudit.errors import InputError
from omniaudit.runners.base import PluginRunner, Runner, as_runner
from omniaudit.runners.items import JudgeItem, Sampling
from omniaudit.runners.openai_compat import OpenAIJudge
from omniaudit.runners.run import make_judge

ROOT = Path(__file__).resolve().parents[2]


def test_built_in_runners_declare_what_they_take_and_render():
    scripted = make_judge("scripted:oracle")
    assert isinstance(scripted, Runner) and scripted.renders
    assert scripted.accepts == {"audio", "image", "video", "video+audio"}
    assert scripted.identity() == {"kind": "scripted", "model": "oracle"}
    served = OpenAIJudge("m", "http://127.0.0.1:9/v1", None, dialect="openai")
    assert isinstance(served, Runner) and served.renders and served.where == "http://127.0.0.1:9/v1"
    assert "video+audio" not in served.accepts and "audio" in served.accepts  # openai sends no video soundtrack
    assert "video+audio" in OpenAIJudge("m", "http://127.0.0.1:9/v1", None, dialect="vllm").accepts
    scripted.set_sampling(Sampling(0.7, 0.9, 3, run=1))
    assert scripted.sampling.seed == 3 and scripted.seed == 3


def test_a_duck_typed_runner_is_adapted_once_with_what_it_has():
    class Bare:
        def answer(self, items, progress=None):
            return ["A"] * len(items)

        def identity(self):
            return {"kind": "bare", "model": "x"}

    class Hearing(Bare):
        accepts = {"audio"}

        def render(self, item):
            return f"<{item.prompt}>"

    bare, hearing = as_runner(Bare()), as_runner(Hearing())
    assert isinstance(bare, PluginRunner) and bare.accepts == frozenset() and not bare.renders
    assert hearing.accepts == {"audio"} and hearing.render(JudgeItem(id="1", prompt="q")) == "<q>"
    with pytest.raises(InputError, match="cannot render its prompts"):
        bare.render(JudgeItem(id="1", prompt="q"))
    assert bare.answer([JudgeItem(id="1", prompt="q", options=["A", "B"])]) == ["A"]
    assert bare.identity(refresh=True) == {"kind": "bare", "model": "x"}
    scripted = make_judge("scripted:random")
    assert as_runner(scripted) is scripted


@pytest.mark.parametrize("path", ["omniaudit/runners/run.py", "omniaudit/runners/rows.py",
                                  "omniaudit/runners/factory.py", "omniaudit/runners/identity.py",
                                  "evaluation/scorecard/modalities.py"])
def test_nothing_probes_a_runner_for_what_it_can_do(path):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    probes = [ast.unparse(node) for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and node.args
              and isinstance(node.args[0], ast.Name) and node.args[0].id in ("judge", "runner")]
    assert probes == []
