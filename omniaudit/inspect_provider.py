"""omniaudit's runners as an Inspect model provider: ``inspect eval TASK --model omniaudit/SPEC``.

``SPEC`` is any judge spec ``omniaudit judge`` takes (``scripted:oracle``, ``hf:PATH``, ``openai:MODEL@URL``,
``reward:FOLDER``, a plugin's ``KIND:REST``); the provider is registered with Inspect's ``@modelapi`` under the name
``omniaudit`` through the entry point ``[project.entry-points.inspect_ai] omniaudit =
"omniaudit.inspect_provider"``, so Inspect finds it once omniaudit is installed (no import in the task needed).
Inspect's model arguments (``-M key=value``, ``model_args=``) are :func:`~omniaudit.runners.make_judge`'s options
(``mode``, ``dialect``, ``fps``, ``max_frames``, ``batch_size``, ``device_map``, ``dtype``, ...); the generate
config's ``max_tokens`` (an exported task sets it) is the runner's token budget unless ``-M max_tokens=N`` is given.
The runner is made at the first call (one per token budget) and answers every later one.

Each ``generate`` call is one item: the system message's text, the user message's media content parts in order
(data URIs or files: audio, images, videos) and its text. A task written by ``omniaudit export inspect`` also puts
in the user message's metadata (``omniaudit_item``) what omniaudit's runners get beside the messages (id, options,
order, media columns and soundtrack flags, the labels scripted reference models read), so the item is the one
``omniaudit judge`` answers (audio exported as WAV: the same samples); any other Inspect task's messages are
answered as a free-form item. The run's temperature, top-p and seed come from Inspect's generate config (temperature
unset: greedy, as ``omniaudit judge``). Calls reach the runner one at a time (a local model is not shared between
threads). The output carries, in ``metadata["omniaudit"]``, the runner's identity and settings, the answer's option
probabilities, answer path and finish reason where the runner has them: ``omniaudit import inspect`` records them.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote_to_bytes

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentAudio,
    ContentImage,
    ContentText,
    ContentVideo,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    StopReason,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from omniaudit.errors import InputError
from omniaudit.runners.items import JudgeItem, MediaPart, Sampling

T = TypeVar("T")
ITEM_METADATA = "omniaudit_item"  # omniaudit.inspect_task.ITEM_METADATA
STOP_REASONS: dict[str, StopReason] = {"stop": "stop", "length": "max_tokens", "content_filter": "content_filter",
                                       "tool_calls": "tool_calls"}


class ProviderError(RuntimeError):
    """What an omniaudit runner refuses, raised to Inspect as a plain error with omniaudit's message (Inspect hashes
    the exceptions it handles, and omniaudit's own errors are dataclasses: unhashable)."""


def plainly(call: Callable[[], T]) -> T:
    """``call()``, omniaudit's refusals raised as :class:`ProviderError` outside the handler (so without the
    unhashable omniaudit error as its ``__context__``)."""
    try:
        return call()
    except InputError as exc:
        message = str(exc)
    raise ProviderError(message)


def media_bytes(source: str) -> bytes:
    """The bytes of a media content part: a ``data:`` URI's payload, else the file it names."""
    if source.startswith("data:"):
        head, _, payload = source.partition(",")
        return base64.b64decode(payload) if head.endswith(";base64") else unquote_to_bytes(payload)
    if "://" in source:
        raise InputError("an omniaudit runner takes media as data URIs or local files, not URLs", value=source[:200])
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the media file: {exc.strerror or exc}", file=source) from None


def _text(message: ChatMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "\n\n".join(c.text for c in message.content if isinstance(c, ContentText))


def judge_item(messages: list[ChatMessage]) -> JudgeItem:
    """The item one ``generate`` call asks (see the module docstring): system text, the user message's media in
    order and its text, and (from an exported task) the item's id, options and labels."""
    system = [m for m in messages if isinstance(m, ChatMessageSystem)]
    users = [m for m in messages if isinstance(m, ChatMessageUser)]
    if len(users) != 1 or len(system) + len(users) != len(messages):
        raise InputError("an omniaudit runner answers one item: at most a system message and one user message "
                         f"(got {', '.join(m.role for m in messages)}); multi-turn and tool-use tasks are not "
                         "supported")
    user = users[0]
    item = dict((user.metadata or {}).get(ITEM_METADATA) or {})
    flags = list(item.get("media") or [])
    parts: list[MediaPart] = []
    for content in [] if isinstance(user.content, str) else user.content:
        if isinstance(content, ContentAudio | ContentImage | ContentVideo):
            source = content.audio if isinstance(content, ContentAudio) else (
                content.image if isinstance(content, ContentImage) else content.video)
            flag = flags[len(parts)] if len(parts) < len(flags) else {}
            parts.append(MediaPart(content.type, media_bytes(source), str(flag.get("column") or content.type),
                                   bool(flag.get("with_audio"))))
    prompt = _text(user)
    item_id = item.get("id") or "inspect/" + hashlib.sha256(prompt.encode()).hexdigest()[:16]
    return JudgeItem(id=str(item_id), prompt=prompt, options=[str(o) for o in item.get("options") or []],
                     system="\n\n".join(_text(m) for m in system) or None, media=parts, order=item.get("order"),
                     gold=item.get("gold"), reference=item.get("reference"), specialist=item.get("specialist"),
                     condition=item.get("condition"))


def runner_options(model_args: dict[str, Any]) -> dict[str, Any]:
    """:func:`~omniaudit.runners.make_judge`'s options from Inspect's model arguments (an unknown one is refused,
    naming those it takes)."""
    from omniaudit.runners.factory import make_judge

    known = [p for p in inspect.signature(make_judge).parameters if p not in ("spec", "sampling", "seed")]
    unknown = sorted(set(model_args) - set(known))
    if unknown:
        raise InputError(f"unknown model argument(s) {unknown} for omniaudit/SPEC; it takes {', '.join(known)}")
    return dict(model_args)


@modelapi(name="omniaudit")
class OmniauditModel(ModelAPI):
    """An omniaudit runner (``omniaudit/SPEC``) as an Inspect model API (see the module docstring)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        config = config or GenerateConfig()
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.options = plainly(lambda: runner_options(model_args))
        self.default_max_tokens = config.max_tokens
        self.runners: dict[int | None, tuple[Any, dict, dict]] = {}  # max_tokens -> runner, identity, settings
        self._lock = threading.Lock()

    def max_connections(self) -> int:
        return 1  # one call at a time reaches the runner

    def _runner(self, max_tokens: int | None, item: JudgeItem) -> tuple[Any, dict, dict]:
        """The runner for a token budget (``-M max_tokens`` wins over the generate config's), made when first asked
        (a task's calls share one budget), with its identity and recorded settings."""
        from omniaudit.runners.factory import input_settings, make_judge

        options = dict(self.options)
        budget = max_tokens if max_tokens is not None else self.default_max_tokens
        if "max_tokens" not in options and budget is not None:
            options["max_tokens"] = budget
        key = options.get("max_tokens")
        if key not in self.runners:
            runner = make_judge(self.model_name, **options)
            runner.prepare([item])
            self.runners[key] = (runner, runner.identity(), input_settings(self.model_name, options))
        return self.runners[key]

    def _answer(self, item: JudgeItem, sampling: Sampling, max_tokens: int | None) -> tuple[Any, dict, dict, dict]:
        with self._lock:
            runner, identity, settings = self._runner(max_tokens, item)
            runner.set_sampling(sampling)
            answers = runner.answer([item])
            probs, paths = getattr(runner, "option_probs", None), getattr(runner, "answer_paths", None)
            listed = {"option_probs": probs[0] if isinstance(probs, list) and len(probs) == 1 else None,
                      "answer_path": paths[0] if isinstance(paths, list) and len(paths) == 1 else None}
            return answers[0], listed, identity, settings

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        import anyio

        from omniaudit.runners.transport import redact

        if tools:
            raise ProviderError("an omniaudit runner takes no tools")
        item = plainly(lambda: judge_item(input))
        sampling = Sampling(temperature=config.temperature or 0.0, top_p=config.top_p, seed=config.seed)
        answer, listed, identity, settings = await anyio.to_thread.run_sync(
            plainly, lambda: self._answer(item, sampling, config.max_tokens))
        probs = getattr(answer, "option_probs", None) or listed["option_probs"]
        finish = getattr(answer, "finish_reason", None)
        output = ModelOutput.from_content(model=self.model_name, content=str(answer),
                                          stop_reason=STOP_REASONS.get(finish or "stop", "unknown"))
        output.metadata = {"omniaudit": {
            "judge": redact(self.model_name), "identity": identity, "settings": settings, "item": item.id,
            "option_probs": {str(k): float(v) for k, v in probs.items()} if probs else None,
            "answer_path": listed["answer_path"],
            "finish_reason": finish, "served_model": getattr(answer, "served_model", None),
            "system_fingerprint": getattr(answer, "system_fingerprint", None)}}
        return output
