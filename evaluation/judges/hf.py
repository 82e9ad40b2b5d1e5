"""A local Transformers model as a judge: chat template (with audio when the model takes it), batched.

Closed-set answers are read from the logits instead of generated text: with ``mode="logits"`` (the default) the
answer is the option whose first token has the highest next-token logit after the generation prompt (one forward
pass per batch), or, when two options share a first token, the option with the highest total log-probability of
its tokens. ``mode="generate"`` decodes greedily and parses the text like any other judge.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError
from omniaudit.evaluation.judges.items import JudgeItem, decode, refuse_unsent_media

AUTO_CLASSES = ("AutoModelForMultimodalLM", "AutoModelForImageTextToText", "AutoModelForCausalLM")


class HFJudge:
    def __init__(self, path: str | Path, batch_size: int = 8, mode: str = "logits", max_new_tokens: int = 16,
                 device: str | None = None, min_new_tokens: int = 0) -> None:
        import torch
        import transformers
        from transformers import AutoConfig, AutoProcessor, AutoTokenizer

        if mode not in ("logits", "generate"):
            raise InputError("judge mode must be 'logits' or 'generate'", value=mode)
        self.path, self.batch_size, self.mode = str(path), batch_size, mode
        self.max_new_tokens, self.min_new_tokens = max_new_tokens, min_new_tokens
        try:
            config = AutoConfig.from_pretrained(self.path)
        except (OSError, ValueError) as exc:
            raise InputError(f"not a Transformers model folder or repo: {exc}", file=path) from exc
        self.takes_audio = hasattr(config, "audio_config")
        if self.takes_audio:
            self.processor = AutoProcessor.from_pretrained(self.path)
            self.tokenizer = self.processor.tokenizer
        else:
            self.processor = None
            self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        if not self.tokenizer.chat_template and not (self.processor and self.processor.chat_template):
            raise InputError("the model has no chat template; a judge needs one to build its prompts", file=path)
        self.tokenizer.padding_side = "left"  # the answer position is the last one in every row
        self.model = None
        for name in AUTO_CLASSES:
            try:
                self.model = getattr(transformers, name).from_pretrained(self.path)
                break
            except (ValueError, KeyError):
                continue
        if self.model is None:
            raise InputError(f"no generative head for this model type ({type(config).__name__})", file=path)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.model.to(self.device).eval()
        # only the answer position's logits are needed; models that support it skip the rest of the LM head
        self.last_only = ({"logits_to_keep": 1}
                          if "logits_to_keep" in inspect.signature(self.model.forward).parameters else {})

    def _texts(self, items: list[JudgeItem]) -> list[str]:
        templater = self.processor or self.tokenizer
        out = []
        for item in items:
            if item.audios and not self.takes_audio:
                raise InputError(f"item '{item.id}' has {len(item.audios)} audio input(s) but {self.path} takes no "
                                 "audio; judge a text-only condition (--conditions) or use an audio model")
            content = [{"type": "audio"} for _ in item.audios] + [{"type": "text", "text": item.prompt}]
            messages = ([{"role": "system", "content": item.system}] if item.system else []) + [
                {"role": "user", "content": content if self.takes_audio else item.prompt}]
            out.append(templater.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
        return out

    def _inputs(self, texts: list[str], items: list[JudgeItem]):
        if self.takes_audio:
            rate = self.processor.feature_extractor.sampling_rate
            audios = [decode(a, rate) for it in items for a in it.audios]
            kwargs = {"audio": audios, "sampling_rate": rate} if audios else {}
            inputs = self.processor(text=texts, return_tensors="pt", padding=True, **kwargs)
        else:
            inputs = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
        return inputs.to(self.device)

    def answer(self, items: list[JudgeItem], progress=None) -> list[str]:
        refuse_unsent_media(items, "hf")
        out: list[str] = []
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            out.extend(self._generate(batch) if self.mode == "generate" else self._by_logits(batch))
            if progress:
                progress(f"{len(out)}/{len(items)}")
        return out

    def _first_tokens(self, options: list[str]) -> list[int] | None:
        ids = [self.tokenizer(o, add_special_tokens=False).input_ids for o in options]
        first = [i[0] for i in ids if i]
        return first if len(first) == len(options) and len(set(first)) == len(first) else None

    def _by_logits(self, batch: list[JudgeItem]) -> list[str]:
        import torch

        texts = self._texts(batch)
        firsts = [self._first_tokens(it.options) for it in batch]
        answers: list[str | None] = [None] * len(batch)
        easy = [i for i, f in enumerate(firsts) if f is not None]
        if easy:
            with torch.no_grad():
                inputs = self._inputs([texts[i] for i in easy], [batch[i] for i in easy])
                logits = self.model(**inputs, **self.last_only).logits[:, -1]
            for row, i in enumerate(easy):
                scores = logits[row, firsts[i]].float().cpu().numpy()
                answers[i] = batch[i].options[int(np.argmax(scores))]
        for i in (i for i, f in enumerate(firsts) if f is None):
            answers[i] = self._by_sequence(texts[i], batch[i])
        return answers

    def _by_sequence(self, text: str, item: JudgeItem) -> str:
        """Options sharing a first token: the highest total log-probability of the option's tokens."""
        import torch

        n = [len(self.tokenizer(o, add_special_tokens=False).input_ids) for o in item.options]
        inputs = self._inputs([text + o for o in item.options], [item] * len(item.options))
        with torch.no_grad():
            logp = torch.log_softmax(self.model(**inputs).logits.float(), dim=-1)
        ids = inputs["input_ids"]
        scores = [float(logp[k, -n[k] - 1 : -1].gather(-1, ids[k, -n[k] :, None]).sum()) for k in range(len(n))]
        return item.options[int(np.argmax(scores))]

    def _generate(self, batch: list[JudgeItem]) -> list[str]:
        import torch

        inputs = self._inputs(self._texts(batch), batch)
        with torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, min_new_tokens=self.min_new_tokens,
                                      do_sample=False, pad_token_id=self.tokenizer.pad_token_id)
        new = out[:, inputs["input_ids"].shape[1] :]
        return [t.strip() for t in self.tokenizer.batch_decode(new, skip_special_tokens=True)]
