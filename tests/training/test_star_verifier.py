"""The STaR generative verifier: the filter on scripted rationales, the verdict read after a rationale, and a tiny
run (rationales sampled from a random model: usually none kept, said plainly; then rationales given in a file)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_training import RECIPES

from omniaudit.errors import InputError

PAIRS = [{"id": "p", "a1": "a calm voice", "a2": "a tense face", "preference": "a1", "fold": 1},
         {"id": "q", "a1": "loud", "a2": "low and sad", "preference": "a2", "fold": 1}]


def test_star_keeps_the_first_rationale_ending_in_the_gold_verdict():
    from omniaudit.training.star_verifier import prompts, star_filter, verdict

    items = prompts(PAIRS)
    assert [(i["id"], i["order"], i["gold"]) for i in items] == [("p", "ab", "A"), ("p", "ba", "B"),
                                                                  ("q", "ab", "B"), ("q", "ba", "A")]
    assert "Description A: a tense face" in items[1]["prompt"]
    samples = [
        {"id": "p", "order": "ab", "text": "Description A sounds calm and B sounds tense."},  # no verdict
        {"id": "p", "order": "ab", "text": "B fits the face.\nAnswer: B"},  # wrong
        {"id": "p", "order": "ab", "text": "Description B mentions a face, but A matches the voice.\nAnswer: A"},
        {"id": "p", "order": "ab", "text": "The voice is calm. Answer: A"},  # right, but a later sample of a kept item
        {"id": "p", "order": "ba", "text": "The voice is calm. Answer: A"},  # wrong in order ba
        {"id": "q", "order": "ab", "text": "The second is sadder. Answer: B"},
        {"id": "q", "order": "ba", "text": ""},  # empty: no verdict, never kept
    ]
    kept, counts = star_filter(samples, items)
    assert counts == {"items": 4, "sampled": 7, "kept": 2, "no_verdict": 2}
    assert [(k["id"], k["order"]) for k in kept] == [("p", "ab"), ("q", "ab")]
    assert kept[0]["messages"] == [{"role": "user", "content": items[0]["prompt"]},
                                   {"role": "assistant", "content": samples[2]["text"]}]
    assert [s["kept"] for s in samples] == [False, False, True, False, False, True, False]
    assert verdict("Description A is vague; Description B names the voice.\nAnswer: B") == "B"
    assert verdict("A or B, hard to say.") is None and verdict("") is None
    kept, counts = star_filter([{"id": "p", "order": "ba", "text": "Answer: A"}], items)
    assert kept == [] and counts["kept"] == 0
    with pytest.raises(InputError, match="not a training item"):
        star_filter([{"id": "z", "order": "ab", "text": "Answer: A"}], items)


def run_star(root, out, *extra: str) -> dict:
    from trl import ModelConfig, SFTConfig

    from omniaudit.training.common import DataArguments, parse
    from omniaudit.training.star_verifier import StarArguments, main

    args = parse((DataArguments, SFTConfig, ModelConfig, StarArguments),
                 ["--config", str(RECIPES / "star_verifier.yaml"), "--output_dir", str(out), "--model_name_or_path",
                  str(root / "runs/tiny/causal_lm"), "--dataset_name", str(root / "runs/tiny/data/preference"),
                  "--disable_tqdm", "true", *extra])
    return main(*args)


@pytest.mark.slow
def test_tiny_star_run_samples_filters_trains_and_judges(tiny_root, tmp_path):
    from omniaudit.cli import main as omniaudit
    from omniaudit.data_builders.hub import load_config

    # sampled from the random tiny model: every sample is recorded with its verdict; kept or said plainly
    sampled = tmp_path / "sampled"
    try:
        run_star(tiny_root, sampled)
        kept_any = True
    except InputError as exc:
        assert "STaR keeps nothing to fine-tune on" in str(exc)
        kept_any = False
    rationales = [json.loads(line) for line in (sampled / "rationales.jsonl").read_text().splitlines()]
    pairs = load_config(tiny_root / "runs/tiny/data/preference", "pairs").head(40)
    train = pairs[pairs["is_binary"] & (pairs["fold"] != 0)]
    assert len(rationales) == 2 * 2 * len(train)  # two samples per pair and order
    assert kept_any == any(r["kept"] for r in rationales)

    # scripted rationales: the gold verdict after a wrong one for even pairs, no verdict for odd ones
    lines = []
    for k, pair in enumerate(train.itertuples()):
        for order in ("ab", "ba"):
            gold = "A" if (pair.preference == "a1") == (order == "ab") else "B"
            if k % 2 == 0:
                lines += [{"id": pair.id, "order": order, "text": f"Answer: {'B' if gold == 'A' else 'A'}"},
                          {"id": pair.id, "order": order, "text": f"A calm voice fits. Answer: {gold}"}]
            else:
                lines.append({"id": pair.id, "order": order, "text": "Hard to tell."})
    file = tmp_path / "rationales.jsonl"
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "star"
    summary = run_star(tiny_root, out, "--rationales_file", str(file))
    star = summary["star"]["fold0"]
    assert star["kept"] == 2 * len(train[::2]) and star["sampled"] == len(lines)
    held = pairs[pairs["is_binary"] & (pairs["fold"] == 0)]
    predictions = pd.read_csv(out / "predictions.csv")
    assert len(predictions) == 2 * len(held) and set(predictions["order"]) == {"ab", "ba"}
    judged = [json.loads(line) for line in (out / "judgements.jsonl").read_text().splitlines()]
    assert star["held_out_no_verdict"] == sum(j["verdict"] is None for j in judged)
    assert omniaudit(["audit", "preference", "--dataset", str(tiny_root / "runs/tiny/data/preference"),
                      "--predictions", f"cot={out / 'predictions.csv'}", "--judged-only", "--out",
                      str(tmp_path / "audit"), "--n-resamples", "20", "--no-source-classifier",
                      "--no-controls"]) == 0


def test_an_echoed_prompt_or_a_bare_verdict_is_no_verdict_and_never_kept():
    """The review's case: the prompt's instruction once ended "'Answer: A' or 'Answer: B'", so an echoed prompt read
    as verdict B and was kept for every gold-B item. The prompt, its tail (old and new wording) and a verdict with no
    rationale before it give no verdict; the prompt itself names no option."""
    from omniaudit.runners.items import parse_answer
    from omniaudit.training.star_verifier import PROMPT, prompts, star_filter, verdict

    items = prompts(PAIRS)
    gold_b = [i for i in items if i["gold"] == "B"]
    assert parse_answer(PROMPT.format(a="happy", b="sad"), ["A", "B"]) is None  # the wording has no standalone cue
    echoes = [i["prompt"] for i in gold_b] + [
        "Then give your verdict on the last line as 'Answer: A' or 'Answer: B'.",  # the old wording's tail
        PROMPT.format(a="x", b="y").split("\n\n")[-1],  # the new one
        "Sure. " + gold_b[0]["prompt"] + "\nAnswer: B",  # echo, then a verdict the instruction supplied
        "Answer: A", "Answer: B", "**Answer: B**", "B B B", ""]
    assert [verdict(t) for t in echoes] == [None] * len(echoes)
    samples = [{"id": i["id"], "order": i["order"], "text": t} for i in gold_b for t in echoes]
    kept, counts = star_filter(samples, items)
    assert kept == [] and counts["no_verdict"] == len(samples)
    # a rationale before the verdict is still read, the final answer winning
    assert verdict("The voice is calm and the face relaxed.\nAnswer: B") == "B"
    assert verdict("Answer: B\n\nWait, the calm voice fits description A better. Answer: A") == "A"


def test_sampling_runs_on_the_accelerator_one_share_per_process(monkeypatch):
    """Each of W processes generates a contiguous, equally long (padded) share of the prompts on ``args.device``,
    and the gather gives back every prompt's completions in order, padding dropped; one process: all prompts."""
    import types

    import accelerate.utils

    from omniaudit.training import star_verifier

    asked: list[list[str]] = []

    def fake_generate(model, tokenizer, texts, n, *rest):
        asked.append(list(texts))
        return [[f"{t}#{k}" for k in range(n)] for t in texts]

    class Model:
        def __init__(self, device_map=None):
            self.hf_device_map, self.moved = device_map, []

        def to(self, device):
            self.moved.append(device)
            return self

    monkeypatch.setattr(star_verifier, "generate", fake_generate)
    texts = [f"p{i}" for i in range(5)]
    expect = [[f"p{i}#0", f"p{i}#1"] for i in range(5)]
    shares = []
    monkeypatch.setattr(accelerate.utils, "gather_object", lambda obj: obj)  # one process's own share
    for rank in (0, 1):
        args = types.SimpleNamespace(device="cuda:1", world_size=2, process_index=rank)
        model = Model()
        shares.append(star_verifier.sharded_generate(model, None, texts, 2, 0.7, 8, 4, args))
        assert model.moved == ["cuda:1"]
    assert asked == [["p0", "p1", "p2"], ["p3", "p4", "p0"]]  # equal lengths: the last share padded
    monkeypatch.setattr(accelerate.utils, "gather_object", lambda obj: [x for s in shares for x in s])
    args = types.SimpleNamespace(device="cuda:0", world_size=2, process_index=0)
    assert star_verifier.sharded_generate(Model(), None, texts, 2, 0.7, 8, 4, args) == expect
    quantised = Model(device_map={"": "cuda:0"})  # already placed by from_pretrained: not moved
    one = types.SimpleNamespace(device="cpu", world_size=1, process_index=0)
    assert star_verifier.sharded_generate(quantised, None, texts, 2, 0.7, 8, 4, one) == expect
    assert quantised.moved == [] and asked[-1] == texts
