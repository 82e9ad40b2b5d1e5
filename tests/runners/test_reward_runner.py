"""``reward:FOLDER`` judges pairwise items with a reward model's content head: P(A) = sigmoid(r_C(A) - r_C(B)),
both orders consistent, the length and prior heads never read; an item it cannot read as a pair gets no answer."""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from omniaudit.cli import main  # noqa: E402
from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset  # noqa: E402
from omniaudit.runners.items import JudgeItem  # noqa: E402
from omniaudit.runners.reward import RewardJudge, descriptions  # noqa: E402


@pytest.fixture(scope="module")
def reward_folder(tiny_models, tmp_path_factory):
    """An ODIN model over the tiny causal LM (LoRA adapter + three heads, random but fixed), saved as
    training/reward_odin.py saves it."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModel

    from omniaudit.runners.odin_model import OdinRewardModel

    torch.manual_seed(0)
    base = AutoModel.from_pretrained(tiny_models["text"])
    trunk = get_peft_model(base, LoraConfig(r=4, target_modules=["q_proj", "v_proj"]))
    model = OdinRewardModel(trunk, base.config.hidden_size)
    with torch.no_grad():
        model.heads.weight.normal_(0, 1.0)
    folder = tmp_path_factory.mktemp("reward") / "odin"
    model.save(folder)
    return folder


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    return build_preference_dataset(tmp_path_factory.mktemp("pref") / "d", spec=SyntheticSpec(n_pairs=12, seed=4))


def _item(a: str, b: str, order: str = "ab") -> JudgeItem:
    return JudgeItem(id=f"p/{order}", prompt=f"Two descriptions follow.\n\nDescription A: {a}\n\nDescription B: {b}"
                     "\n\nWhich is more faithful? Answer with a single letter: A or B.", options=["A", "B"],
                     order=order)


def test_the_content_head_alone_decides_and_both_orders_agree(reward_folder, tiny_models):
    judge = RewardJudge(f"{reward_folder}@{tiny_models['text']}")
    a, b = "She seems calm and quietly content.", "He is furious, shouting, with clenched fists and a red face."
    ab, ba = judge.answer([_item(a, b), _item(b, a, "ba")])
    r_a, r_b = judge.content_scores([a, b])
    assert ab.option_probs["A"] == pytest.approx(1 / (1 + math.exp(-(r_a - r_b))))
    assert ab.option_probs["A"] == pytest.approx(ba.option_probs["B"]) and str(ab) != str(ba)
    model, tokenizer = judge._load()
    enc = tokenizer([a], return_tensors="pt")
    scores, _ = model(enc["input_ids"], enc["attention_mask"])
    assert scores.shape[1] == 3 and float(scores[0, 0]) == pytest.approx(r_a, abs=1e-5)  # column 0: r_C


@pytest.mark.parametrize("item", [
    JudgeItem(id="x", prompt="Is the voice happy? Answer yes or no.", options=["yes", "no"]),
    JudgeItem(id="y", prompt="Description A: one\n\nDescription B: two\n\nDescription B: three\n\n",
              options=["A", "B"]),
])
def test_an_item_that_is_no_readable_pair_is_not_answered(reward_folder, tiny_models, item):
    judge = RewardJudge(f"{reward_folder}@{tiny_models['text']}")
    assert descriptions(item) is None
    (answer,) = judge.answer([item])
    assert answer == "" and answer.option_probs is None and judge.answer_paths == ["free"]


def test_a_reward_model_goes_through_judge_and_the_preference_audit(reward_folder, tiny_models, pairs, tmp_path):
    out = tmp_path / "rm.jsonl"
    spec = f"reward:{reward_folder}@{tiny_models['text']}"
    assert main(["judge", "--dataset", str(pairs), "--config", "judge", "--judge", spec, "--out", str(out),
                 "-q"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all(r["answer_path"] == "option_scores" and r["label"] in ("A", "B") for r in rows)
    assert rows[0]["provenance"]["model"]["kind"] == "reward" and rows[0]["provenance"]["model"]["base"]
    assert main(["audit", "preference", "--data", str(pairs), "--predictions", f"rm={out}",
                 "--out", str(tmp_path / "audit"), "--n-resamples", "50", "-q"]) == 0
    audit = json.loads((tmp_path / "audit" / "audit.json").read_text())
    assert audit["judges"]["rm"]["p_a1_from"] == {"probs": len(rows)}


def test_a_missing_folder_is_refused_with_one_line(tmp_path):
    with pytest.raises(Exception, match="reward model folder not found"):
        RewardJudge(str(tmp_path / "nope"))
