"""A fifth audit written the way a lab would ship one (one :class:`omniaudit.audits.Audit` subclass, nothing else of
omniaudit touched): which of two words was said, asked in both orders, with somebody's wrong guess quoted. It
measures the ``position`` shortcut of the table with a measure of its own (the slot-A rate over both orders of a
trial). :class:`GuessAudit` measures a sixth shortcut, ``guess_following`` (:data:`GUESS_FOLLOWING`), added to the
table by one entry; its planted model answers by :func:`the_guessed_word`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from omniaudit.audits import Audit
from omniaudit.results import AuditOptions, AuditResult, AuditRun, put
from omniaudit.shortcuts import MeasureSpec, Shortcut

SLOT_A = MeasureSpec("toy_slot_a", "slot-A rate over both orders of a word trial", "toy", "outside", 0.10)
WORDS = ("apple", "river", "stone", "cloud", "ember", "maple", "pearl", "cedar")


class ToyAudit(Audit):
    name = "toy"
    paper = "a test's own protocol"
    title = "Which of two words was said, in both orders"
    item_configs = {"items": ("text",)}
    headline = ("accuracy", "slot_a")
    shortcuts = ("position",)
    references = {"oracle": "the word said", "position-locked": "slot A: position"}
    source = "toy/answers.csv"

    def build(self, out: Path, size: str = "default", progress=None) -> Path:
        import pandas as pd
        import yaml

        from omniaudit.data_builders.hub import configs_metadata, write_hub_dataset

        n = {"default": 40, "small": 24}[size]
        rows = []
        for t in range(n):
            said, other = WORDS[t % len(WORDS)], WORDS[(t + 3) % len(WORDS)]
            for order, pair in (("AB", (said, other)), ("BA", (other, said))):
                rows.append({"id": f"t{t}/{order}", "trial": f"t{t}", "order": order, "options": ["A", "B"],
                             "prompt": f"The word '{said}' was said; somebody guessed '{other}'. Which was said? "
                                       f"A: {pair[0]}  B: {pair[1]}",
                             "gold": "A" if pair[0] == said else "B", "guess": "A" if pair[0] == other else "B"})
        card = "---\n" + yaml.safe_dump({"configs": configs_metadata({"items": ["train"]})}) + "---\ntoy audit\n"
        return write_hub_dataset(out, {"items": {"train": pd.DataFrame(rows)}}, card)

    def build_parameters(self, size: str = "default") -> dict:
        return {"size": size}

    def audit(self, out: Path, dataset: Path | str, predictions: Mapping[str, Mapping[str, Path]],
              options: AuditOptions) -> AuditResult:
        import pandas as pd

        from omniaudit.data_builders.hub import load_config
        from omniaudit.io import atomic_dir
        from omniaudit.predictions import read_prediction_file

        items = load_config(dataset, "items")
        frames = []
        for model, files in predictions.items():
            for file in files.values():
                read = read_prediction_file(file, dataset, ("items",), options.partial, needs=("label",),
                                            known=items["id"].astype(str))
                frames.append(pd.DataFrame({"id": read.ids, "label": read.labels(), "model": model}))
        answers = pd.concat(frames).merge(items[["id", "trial", "order", "gold", "guess"]], on="id")
        answers["slot_a"] = (answers["label"] == "A").astype(float)
        answers["guessed"] = (answers["label"] == answers["guess"]).astype(float)
        answers["correct"] = (answers["label"] == answers["gold"]).astype(float)
        summary = {m: {"accuracy": {"value": g["correct"].mean(), "n": len(g)},
                       "slot_a": {"value": g["slot_a"].mean(), "n": len(g)}} for m, g in answers.groupby("model")}
        with atomic_dir(out) as tmp:
            answers.to_csv(tmp / "answers.csv", index=False)
            (tmp / "audit.json").write_text(json.dumps({"audit": "toy", "models": summary}), encoding="utf-8")
            (tmp / "report.md").write_text("# Toy audit\n", encoding="utf-8")
        return AuditResult.read(self.name, out)

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        import numpy as np
        import pandas as pd

        from omniaudit.evaluation.scorecard.inference import arm, contrast
        from omniaudit.evaluation.scorecard.rules import Tested

        answers = pd.read_csv(Path(str(run.folder)) / "answers.csv")
        answers = answers[answers["model"] == run.name]
        c = contrast(answers["trial"].astype(str).to_numpy(),
                     [arm(answers["slot_a"].to_numpy(float), np.ones(len(answers), bool), 0.5, 0.25)])
        return {"position": [Tested(SLOT_A, "all", c)]}, {}

    def metrics(self, audit: dict) -> dict[str, float]:
        out: dict[str, float] = {}
        for model, entry in audit["models"].items():
            for key in ("accuracy", "slot_a"):
                put(out, f"{key}/{model}", entry[key]["value"])
        return out

    def tables(self, audit: dict, folder: Path):
        import pandas as pd

        return {"answers": pd.read_csv(folder / "answers.csv")}


GUESS = MeasureSpec("guessed", "answers the guessed word", "toy_guess", "above", 0.10)
GUESS_FOLLOWING = Shortcut("guess_following", "answers with a quoted guess instead of what was said", "guess-follower",
                           "guess", "toy_audit:the_guessed_word", (GUESS,))


def the_guessed_word(item) -> str | None:
    """``guess-follower``: the option holding the word somebody guessed, where an item quotes a guess."""
    guess = re.search(r"somebody guessed '(\w+)'", item.prompt)
    options = re.search(r"A: (\w+)  B: (\w+)", item.prompt)
    if guess is None or options is None:
        return None
    return item.options[0] if options[1] == guess[1] else item.options[1]


class GuessAudit(ToyAudit):
    name = "toy_guess"
    shortcuts = ("guess_following",)
    references = {"oracle": "the word said", "guess-follower": "the guessed word: guess_following"}

    def measures(self, run: AuditRun) -> tuple[dict[str, list], dict[str, list[dict]]]:
        import numpy as np
        import pandas as pd

        from omniaudit.evaluation.scorecard.inference import arm, contrast
        from omniaudit.evaluation.scorecard.rules import Tested

        answers = pd.read_csv(Path(str(run.folder)) / "answers.csv")
        answers = answers[answers["model"] == run.name]
        c = contrast(answers["trial"].astype(str).to_numpy(),
                     [arm(answers["guessed"].to_numpy(float), np.ones(len(answers), bool), 0.5, 0.25)])
        return {"guess_following": [Tested(GUESS, "all", c)]}, {}
