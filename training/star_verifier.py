"""A generative-verifier (CoT) pairwise judge trained on STaR rationales (EmoPrefer audit §4 and appendix B, Table 1's
"CoT" row: "finetuned on 2,633 STaR rationales ... reaches only 58.9 WAF, below its non-CoT counterpart").

    accelerate launch --config_file accelerate_configs/multi_gpu.yaml training/star_verifier.py \\
        --config training/recipes/qwen2.5-7b/star_verifier.yaml

From a pip install, in any folder (``omniaudit recipes list`` names the recipes)::

    accelerate launch --config_file "$(omniaudit recipes path accelerate:multi_gpu)" \\
        -m omniaudit.training.star_verifier \\
        --config recipe:qwen2.5-7b/star_verifier

Per held-out fold (``eval_folds``, as ``training/pairwise_judge.py``), on the binary pairs of the other folds:

1. sample: the model is asked for two or three sentences comparing the facial expression, voice and visible events
   the descriptions imply, then its verdict (:data:`PROMPT`); ``samples_per_order`` rationales per pair and order
   at ``sample_temperature`` (the paper: up to four at 0.7), on the accelerator, each process of a launch sampling
   its own share of the items (:func:`sharded_generate`; the samples depend on the number of processes). Or read
   them from ``rationales_file`` (JSONL ``id``, ``order``, ``text``, in sampling order: e.g. sampled from a vLLM
   server);
2. STaR filter (:func:`star_filter`): keep the first rationale whose verdict, read after it by the reader
   ``omniaudit judge`` uses (:func:`~omniaudit.runners.items.parse_answer`: a final explicit answer
   wins over earlier mentions of A and B), is the gold letter; a text that echoes the prompt, or has no rationale
   before its verdict (a bare "Answer: B"), gives no verdict (:func:`verdict`). The paper has no rationalisation
   step (STaR's hinted re-generation for failed items): "retain the first whose final answer matches the training
   label", so neither does this script; an item without a matching rationale is left out. No rationale kept is an
   error saying so;
3. SFT (TRL ``SFTTrainer``) on the kept prompt -> rationale + verdict records;
4. judge: greedy generation on the held-out fold in both orders (shared across processes as in 1), the verdict
   read after the rationale; no verdict is no preference (P = 0.5).

``OUTPUT_DIR`` gets ``predictions.csv`` (``id, order, p_a1`` per pair and order, what ``audit preference
--predictions`` reads), ``star_metrics.json`` (held-out WAF per fold as the audit scores it, and per fold the
rationales sampled, kept and without a verdict), and per fold ``rationales.jsonl`` (every sample, ``kept`` marked)
and ``judgements.jsonl`` (the held-out generations). Text only: the paper's CoT judge sees 8 video frames without
audio, which this script does not feed.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError
from omniaudit.runners.items import parse_answer
from omniaudit.training.common import (
    DataArguments,
    end_fold,
    finish_cross_fit,
    fold_arguments,
    load_split,
    load_tokenizer,
    model_kwargs,
    parse,
    peft_config,
    refuse_heldout_fold,
    report_setup,
    train_and_save,
)

PAIR_COLUMNS = ("id", "a1", "a2", "preference", "fold")
ORDERS = ("ab", "ba")
LETTERS = ["A", "B"]
PROMPT = ("Two descriptions of the emotional state of the person in a video clip follow.\n\nDescription A: {a}\n\n"
          "Description B: {b}\n\nIn two or three sentences, compare the facial expression, voice and visible events "
          "each description implies and which is more faithful to the person's emotion. Then give your verdict on "
          "the last line as 'Answer: <A or B>'.")  # no standalone "Answer: B" cue: an echoed prompt names nothing
# clauses of the prompt (and of its earlier wording, "... as 'Answer: A' or 'Answer: B'"): a text holding one echoes
# the prompt, and the verdict after it is the instruction's, not the model's
ECHOES = ("descriptions of the emotional state of the person in a video clip", "compare the facial expression, voice "
          "and visible events", "give your verdict on the last line")
MIN_RATIONALE_WORDS = 3  # words besides the verdict's own ("Answer", "final", "Description", the letter)
_VERDICT_WORDS = {"answer", "final", "verdict", "description", "option", "choice"}


@dataclass
class StarArguments:
    eval_folds: str = field(default="0", metadata={"help": "held-out folds, e.g. '0', '0,1' or 'all'"})
    samples_per_order: int = field(default=4, metadata={"help": "rationales sampled per pair and order (paper: 4)"})
    sample_temperature: float = field(default=0.7, metadata={"help": "sampling temperature (paper: 0.7)"})
    max_new_tokens: int = field(default=256, metadata={"help": "tokens per rationale + verdict"})
    sample_batch_size: int = field(default=8, metadata={"help": "prompts per generate call"})
    rationales_file: str | None = field(default=None, metadata={
        "help": "JSONL of rationales sampled elsewhere (id, order, text; in sampling order) instead of sampling"})

    def __post_init__(self) -> None:
        if self.samples_per_order < 1 or not self.sample_temperature > 0 or self.max_new_tokens < 1:
            raise InputError("expected samples_per_order >= 1, sample_temperature > 0 and max_new_tokens >= 1",
                             value=(self.samples_per_order, self.sample_temperature, self.max_new_tokens))


def prompts(rows: list[dict]) -> list[dict]:
    """Both orders of every pair: ``id``, ``order``, ``prompt`` and ``gold`` (the letter of the preferred one)."""
    out = []
    for r in rows:
        for order in ORDERS:
            a, b = (r["a1"], r["a2"]) if order == "ab" else (r["a2"], r["a1"])
            gold = "A" if (r["preference"] == "a1") == (order == "ab") else "B"
            out.append({"id": r["id"], "order": order, "prompt": PROMPT.format(a=a, b=b), "gold": gold})
    return out


def verdict(text: str) -> str | None:
    """The A/B verdict after a rationale, read as ``omniaudit judge`` reads answers; None (no verdict) for a text
    that echoes the prompt (:data:`ECHOES`) or has no rationale (fewer than :data:`MIN_RATIONALE_WORDS` words besides
    the verdict's: a bare "Answer: A" is not a rationale STaR may keep, nor a judgement)."""
    flat = " ".join((text or "").lower().split())
    if any(echo in flat for echo in ECHOES):
        return None
    words = [w for w in re.findall(r"[a-z]{2,}", flat) if w not in _VERDICT_WORDS]
    return parse_answer(text, LETTERS) if len(words) >= MIN_RATIONALE_WORDS else None


def star_filter(samples: list[dict], items: list[dict]) -> tuple[list[dict], dict]:
    """STaR's filter: per item (pair, order) the first sample (in ``samples`` order) whose verdict is the gold
    letter. Returns the kept records (chat messages: the prompt, then the rationale as the answer) and counts;
    ``samples`` get ``verdict`` and ``kept``. A sample for an item not in ``items`` is an error."""
    by_key = {(i["id"], i["order"]): i for i in items}
    kept, done, no_verdict = [], set(), 0
    for s in samples:
        key = (s["id"], s["order"])
        if key not in by_key:
            raise InputError(f"a rationale for pair '{s['id']}' order '{s['order']}', which is not a training item "
                             "of this fold", column="id", value=s["id"])
        s["verdict"], s["kept"] = verdict(s["text"]), False
        no_verdict += s["verdict"] is None
        if key in done or s["verdict"] != by_key[key]["gold"]:
            continue
        done.add(key)
        s["kept"] = True
        kept.append({"id": s["id"], "order": s["order"], "messages": [
            {"role": "user", "content": by_key[key]["prompt"]}, {"role": "assistant", "content": s["text"].strip()}]})
    return kept, {"items": len(items), "sampled": len(samples), "kept": len(kept), "no_verdict": no_verdict}


def generate(model, tokenizer, texts: list[str], n: int, temperature: float | None, max_new_tokens: int,
             batch_size: int) -> list[list[str]]:
    """``n`` completions per prompt (sampled at ``temperature``; None: greedy), prompts left-padded in batches."""
    import torch

    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    model.eval()
    out = []
    try:
        for start in range(0, len(texts), batch_size):
            chats = [tokenizer.apply_chat_template([{"role": "user", "content": t}], tokenize=False,
                                                   add_generation_prompt=True)
                     for t in texts[start:start + batch_size]]
            enc = tokenizer(chats, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
            sampling = {"do_sample": True, "temperature": temperature, "top_p": 1.0} if temperature else \
                {"do_sample": False}
            with torch.no_grad():
                ids = model.generate(**enc, max_new_tokens=max_new_tokens, num_return_sequences=n,
                                     pad_token_id=tokenizer.pad_token_id, **sampling)
            texts_out = tokenizer.batch_decode(ids[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            out += [texts_out[i:i + n] for i in range(0, len(texts_out), n)]
    finally:
        tokenizer.padding_side = side
    return out


def sharded_generate(model, tokenizer, texts: list[str], n: int, temperature: float | None, max_new_tokens: int,
                     batch_size: int, args) -> list[list[str]]:
    """:func:`generate` on the accelerator, split across the processes of a launch. The model goes to ``args.device``
    (``cuda:LOCAL_RANK`` under a GPU launch; a quantised model already sits on its device); process r of W takes the
    r-th contiguous share of ``texts``, the shares padded to equal length (every process runs the same generate
    calls, so synced forwards line up), and all gather the completions back into ``texts`` order."""
    from accelerate.utils import gather_object

    if getattr(model, "hf_device_map", None) is None:
        model.to(args.device)
    world, rank = args.world_size, args.process_index
    if world == 1:
        return generate(model, tokenizer, texts, n, temperature, max_new_tokens, batch_size)
    per = -(-len(texts) // world)
    mine = texts[rank * per:(rank + 1) * per]
    mine += texts[:1] * (per - len(mine))  # padding, dropped after the gather
    said = generate(model, tokenizer, mine, n, temperature, max_new_tokens, batch_size)
    return gather_object(said)[:len(texts)]  # shares in rank order: padding only past the last text


def read_rationales(path: str | Path) -> list[dict]:
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InputError(f"not a JSON line ({exc})", file=path, row=n) from exc
        if not isinstance(row, dict) or not all(isinstance(row.get(k), str) for k in ("id", "order", "text")):
            raise InputError("expected id, order and text (strings)", file=path, row=n)
        rows.append({k: row[k] for k in ("id", "order", "text")})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> None:
    from omniaudit.io import atomic_file

    with atomic_file(path) as tmp:
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(data_args: DataArguments, training_args, model_args, star_args: StarArguments) -> dict:
    import datasets
    import torch
    from transformers import AutoModelForCausalLM
    from trl import SFTTrainer

    from omniaudit.training.pairwise_judge import held_out_scores

    info = report_setup(training_args, data_args, model_args)
    refuse_heldout_fold(data_args, "training/star_verifier.py", "set eval_folds (the folds held out)")
    tokenizer = load_tokenizer(model_args)
    rows = [r for r in load_split(data_args, PAIR_COLUMNS) if r["preference"] in ("a1", "a2")]
    all_folds = sorted({r["fold"] for r in rows})
    folds = all_folds if star_args.eval_folds == "all" else [int(f) for f in star_args.eval_folds.split(",")]
    if set(folds) - set(all_folds):
        raise InputError(f"eval_folds not in the dataset's folds {all_folds}", value=star_args.eval_folds)
    external = read_rationales(star_args.rationales_file) if star_args.rationales_file else None
    ids, orders, p_a1, results, star = [], [], [], {}, {}
    for fold in folds:
        args = fold_arguments(training_args, fold, len(folds))
        out = Path(args.output_dir)
        items = prompts([r for r in rows if r["fold"] != fold])
        model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs(model_args))
        if external is None:
            torch.manual_seed(training_args.seed + fold)
            texts = sharded_generate(model, tokenizer, [i["prompt"] for i in items], star_args.samples_per_order,
                                     star_args.sample_temperature, star_args.max_new_tokens,
                                     star_args.sample_batch_size, args)
            samples = [{"id": i["id"], "order": i["order"], "text": t} for i, ts in zip(items, texts, strict=True)
                       for t in ts]
        else:
            train_ids = {i["id"] for i in items}
            samples = [dict(s) for s in external if s["id"] in train_ids]
        kept, counts = star_filter(samples, items)
        if int(args.process_index) == 0:
            write_jsonl(out / "rationales.jsonl", samples)
        if not kept:
            raise InputError(f"fold {fold}: none of the {counts['sampled']} rationales sampled for {counts['items']} "
                             f"training items ends in the gold verdict ({counts['no_verdict']} give no verdict), so "
                             f"STaR keeps nothing to fine-tune on; sample more (samples_per_order), start from a "
                             f"stronger model, or check the verdicts in {out / 'rationales.jsonl'}")
        trainer = SFTTrainer(model=model, args=args, train_dataset=datasets.Dataset.from_list(kept),
                             processing_class=tokenizer, peft_config=peft_config(model_args))
        train_and_save(trainer, training_args, args.output_dir, run_info={**info, "eval_fold": fold, **counts})
        held = prompts([r for r in rows if r["fold"] == fold])  # ab, ba per pair
        said = sharded_generate(trainer.model, tokenizer, [h["prompt"] for h in held], 1, None,
                                star_args.max_new_tokens, star_args.sample_batch_size, args)
        letters = [verdict(t[0]) for t in said]
        p_first = np.array([{"A": 1.0, "B": 0.0}.get(v, 0.5) for v in letters])  # no verdict: no preference
        y = np.array([h["gold"] == "A" for h in held[0::2]])
        results[f"fold{fold}"] = held_out_scores(p_first, y)
        star[f"fold{fold}"] = {**counts, "held_out_no_verdict": sum(v is None for v in letters)}
        if int(args.process_index) == 0:
            write_jsonl(out / "judgements.jsonl", [{"id": h["id"], "order": h["order"], "text": t[0], "verdict": v}
                                                   for h, t, v in zip(held, said, letters, strict=True)])
        end_fold(trainer, results[f"fold{fold}"])
        for h, p in zip(held, p_first, strict=True):
            ids.append(h["id"])
            orders.append(h["order"])
            p_a1.append(float(p if h["order"] == "ab" else 1.0 - p))
    return finish_cross_fit(training_args.output_dir, "star_metrics.json", results, ids, p_a1, orders=orders,
                            star=star)


if __name__ == "__main__":
    from trl import ModelConfig, SFTConfig

    try:
        main(*parse((DataArguments, SFTConfig, ModelConfig, StarArguments)))
    except InputError as exc:
        sys.exit(f"error: {exc}")
