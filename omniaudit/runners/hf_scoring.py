"""Closed-set answers from option probabilities, and sampling whose draws do not depend on the batch.

:func:`score_options`: the log-probability that the model answers exactly an option, i.e. generates the option's
tokens followed by the end-of-answer tokens (the chat template's end of turn). The prompt, with its media, is run
once per batch with the KV cache kept; all options' continuations are then scored against that cache in one short
forward (packed per row behind a block attention mask), so options sharing a first token cost no extra pass over
the prompt, and a prefix option ("no" vs "not sure") is not favoured: it must be followed by the end of turn.

Sampling (temperature > 0) draws from a generator seeded by (seed, item id, order): an item gets the same sample
whatever batch, shard or position it is judged in. Generation uses the Gumbel-max trick (:class:`RowSampler` adds
per-row Gumbel noise to the tempered, top-p-filtered logits and decoding takes the argmax), which samples from the
same distribution as multinomial sampling.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from omniaudit.runners.items import JudgeItem


def item_seed(seed: int, item: JudgeItem) -> int:
    """A 63-bit seed for one item (and order) of a run with ``seed``."""
    digest = hashlib.sha256(f"{seed}\0{item.id}\0{item.order}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def softmax(scores: np.ndarray) -> np.ndarray:
    z = np.exp(scores - scores.max())
    return z / z.sum()


def nucleus(probs: np.ndarray, top_p: float) -> np.ndarray:
    """``probs`` restricted to the smallest most-probable set whose mass reaches ``top_p`` (renormalised)."""
    if top_p >= 1.0:
        return probs
    order = np.argsort(-probs, kind="stable")
    keep = np.cumsum(probs[order]) - probs[order] < top_p  # the first option always stays
    out = np.zeros_like(probs)
    out[order[keep]] = probs[order[keep]]
    return out / out.sum()


def pick_option(scores: np.ndarray, temperature: float, top_p: float, seed: int) -> int:
    """The argmax option (temperature 0) or one drawn from softmax(scores / temperature) within ``top_p``."""
    if temperature <= 0:
        return int(np.argmax(scores))
    probs = nucleus(softmax(scores / temperature), top_p)
    return int(np.random.default_rng(seed).choice(len(probs), p=probs))


def prompt_pass(model, inputs: dict, model_kwargs: dict, prefill_kwargs: dict | None = None):
    """The forward pass over a left-padded batch of prompts (media included) that keeps the KV cache, projecting only
    the last position onto the vocabulary: the part of :func:`score_options` every closed answer pays, whatever it
    then scores (``benchmarks/judge_logits.py`` times it alone as the floor). Returns the model's output."""
    import torch

    mask = inputs["attention_mask"]
    call = {**inputs, **model_kwargs, **(prefill_kwargs or {}), "use_cache": True}
    if not hasattr(getattr(model, "model", None), "rope_deltas"):  # M-RoPE models compute their own 3-D positions
        call["position_ids"] = (mask.long().cumsum(-1) - 1).clamp(min=0)
    head = None if "logits_to_keep" in call else model.get_output_embeddings()
    # models without logits_to_keep (the Omni thinkers) would project every prompt position onto the vocabulary
    hook = head.register_forward_pre_hook(lambda _m, args: (args[0][:, -1:], *args[1:])) if head is not None else None
    try:
        with torch.no_grad():
            return model(**call)
    finally:
        if hook is not None:
            hook.remove()


def score_options(model, inputs: dict, model_kwargs: dict, sequences: list[list[list[int]]], pad_id: int,
                  prefill_kwargs: dict | None = None) -> list[np.ndarray]:
    """Total log-probability of every option token sequence after each prompt of a left-padded batch.

    ``sequences[b][k]``: the token ids of option k of row b, end-of-answer tokens included. One forward pass over
    the prompts (media included) keeps the KV cache; then one short forward feeds, per row, all its options packed
    one after the other, with a block attention mask (each option sees the prompt and its own earlier tokens, never
    another option) and positions that restart after the prompt for each option (for M-RoPE models shifted by the
    ``rope_deltas`` the prompt pass stored, as ``generate`` does). The cache is then cropped back.
    """
    import torch

    mask = inputs["attention_mask"]
    device = mask.device
    holder: Any = getattr(model, "model", None)  # has rope_deltas where mrope
    mrope = hasattr(holder, "rope_deltas")  # Qwen2-VL / Qwen-Omni: 3-D positions computed from the media grids
    out = prompt_pass(model, inputs, model_kwargs, prefill_kwargs)
    cache = out.cache if getattr(out, "cache", None) is not None else out.past_key_values
    first = torch.log_softmax(out.logits[:, -1].float(), dim=-1).cpu()
    scores = [np.array([float(first[b, seq[0]]) for seq in seqs]) for b, seqs in enumerate(sequences)]
    feeds = [[seq[:-1] for seq in seqs] for seqs in sequences]  # the last token of an option is only predicted
    width = max(sum(len(f) for f in row) for row in feeds)
    if width == 0:
        return scores
    n_rows, prompt_len = mask.shape
    dtype = next(model.parameters()).dtype
    blocked = torch.finfo(dtype).min
    ids = torch.full((n_rows, width), pad_id, dtype=torch.long)
    positions = torch.zeros((n_rows, width), dtype=torch.long)
    attend = torch.full((n_rows, 1, width, prompt_len + width), blocked, dtype=dtype)
    attend[:, 0, :, :prompt_len] = torch.where(mask[:, None, :].cpu().bool(), 0.0, blocked)
    n_valid = mask.long().sum(-1).cpu()
    starts = []
    for b, row in enumerate(feeds):
        at, row_starts = 0, []
        for feed in row:
            n = len(feed)
            row_starts.append(at)
            if n:
                ids[b, at : at + n] = torch.tensor(feed)
                positions[b, at : at + n] = n_valid[b] + torch.arange(n)
                attend[b, 0, at : at + n, prompt_len + at : prompt_len + at + n] = torch.triu(
                    torch.full((n, n), blocked, dtype=dtype), diagonal=1)
            at += n
        starts.append(row_starts)
    positions = positions.to(device)
    if mrope:
        positions = (positions + holder.rope_deltas.to(device)).unsqueeze(0).expand(3, -1, -1)
    with torch.no_grad():
        step = model(input_ids=ids.to(device), attention_mask=attend.to(device), position_ids=positions, cache=cache,
                     use_cache=True)
    logp = torch.log_softmax(step.logits.float(), dim=-1).cpu()
    for b, seqs in enumerate(sequences):
        for k, seq in enumerate(seqs):
            if len(seq) > 1:
                at = starts[b][k]
                target = torch.tensor(seq[1:])[:, None]
                scores[b][k] += float(logp[b, at : at + len(seq) - 1].gather(-1, target).sum())
    cache.crop(-width)
    return scores


def row_sampler(seeds: list[int], temperature: float, top_p: float):
    """A logits processor that makes greedy decoding sample, row ``b`` with its own generator ``seeds[b]``."""
    import torch
    from transformers import LogitsProcessor, TopPLogitsWarper

    class RowSampler(LogitsProcessor):
        def __init__(self) -> None:
            self.generators = [torch.Generator().manual_seed(s) for s in seeds]
            self.top_p = TopPLogitsWarper(top_p) if top_p < 1.0 else None

        def __call__(self, input_ids, scores):
            scores = scores.float() / temperature
            if self.top_p is not None:
                scores = self.top_p(input_ids, scores)
            u = torch.stack([torch.rand(scores.shape[-1], generator=g) for g in self.generators])
            gumbel = -torch.log(-torch.log(u.clamp(1e-20, 1.0 - 1e-7)))
            return scores + gumbel.to(scores.device)

    return RowSampler()
