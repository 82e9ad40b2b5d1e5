"""The STaR generative verifier: the filter on scripted rationales, the verdict read after a rationale, and a tiny
run (rationales sampled from a random model: usually none kept, said plainly; then rationales given in a file)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_training import RECIPES, tiny_root  # noqa: F401  (tiny_root: the session fixture)

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
        {"id": "p", "order": "ab", "text": "Answer: A"},  # right, but a later sample of a kept item
        {"id": "p", "order": "ba", "text": "Answer: A"},  # wrong in order ba
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
def test_tiny_star_run_samples_filters_trains_and_judges(tiny_root, tmp_path):  # noqa: F811
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
