"""Thud test helpers: scripted policies whose errors are known, and the tiny omni model + intervention dataset."""

from __future__ import annotations

from pathlib import Path

from omniaudit.data_builders.interventions.answers import QUESTIONS

# What a model answering from the pictures says (Thud §3.2): synchronized, a sound is heard, the sound matches.
SHORTCUT = {"sync": "The audio is synchronized with the video.",
            "existence": "I hear the sound of the event, matching what happens in the video.",
            "consistency": "I see the event, and I hear its sound, which matches what I see."}
DIMENSION_OF = {question: dim for dim, question in QUESTIONS.items()}


class ShortcutPolicy:
    """Run 0 (and every run without ``hedge_runs``): the visual shortcut; runs in ``hedge_runs``: "I don't know."
    (unparseable); runs in ``empty_runs``: an empty answer. Answers are objects with ``.raw``, as some runners
    return."""

    def __init__(self, hedge_runs: tuple[int, ...] = (), empty_runs: tuple[int, ...] = ()) -> None:
        self.hedge_runs, self.empty_runs = hedge_runs, empty_runs
        self.sampling = None
        self.calls = 0

    def answer(self, items, progress=None):
        run = self.sampling.run if self.sampling is not None else 0
        self.calls += 1

        class Reply:
            def __init__(self, raw: str) -> None:
                self.raw = raw

        if run in self.empty_runs:
            return [Reply("") for _ in items]
        if run in self.hedge_runs:
            return [Reply("I don't know.") for _ in items]
        return [Reply(SHORTCUT[DIMENSION_OF[item.prompt]]) for item in items]


def tiny_thud_root(root: Path) -> Path:
    """``root/runs/tiny/{omni, data/interventions}`` exactly as `omniaudit tiny-models` writes them (the tiny omni
    recipes' model and data), without the suite's other models."""
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset
    from omniaudit.tiny_models import tiny_omni

    tiny_omni(root / "runs/tiny/omni")
    build_interventions_dataset(root / "runs/tiny/data/interventions",
                                spec=SyntheticClipSpec(n_clips=4, width=112, height=112))
    return root


def launch(root: Path, script: str, recipe: Path, out: Path, *extra: str, timeout: int = 900):
    """``accelerate launch training/<script> --config <recipe>`` on CPU in ``root``, offline."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    cmd = [str(Path(sys.executable).parent / "accelerate"), "launch", "--config_file",
           str(repo / "accelerate_configs" / "cpu.yaml"), str(repo / "training" / script), "--config", str(recipe),
           "--output_dir", str(out), *extra]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false"}
    result = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-4000:]
    return result
