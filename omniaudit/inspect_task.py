"""The Inspect task file that ``omniaudit export inspect`` writes: this module's code, copied verbatim, followed by one
``@task`` per exported dataset config (``TASK_NAME()`` returning :func:`omniaudit_task` of that task).

It runs wherever Inspect runs and imports nothing from omniaudit (only ``inspect_ai`` and the standard library), so
the exported folder works in any environment with Inspect. Beside it the export writes ``omniaudit_inspect.json``
(each task's identity: dataset, config, fingerprint, item count and ids digest, the generation settings),
``samples/<config>.jsonl`` (one item per line: its id, system text, prompt, media files in prompt order, options and
the labels the scripted reference models read) and ``media/`` (each media input once, by content hash).

Each item becomes one :class:`~inspect_ai.dataset.Sample`: its item id as the sample id, the system text as a
system message, then one user message holding the media as Inspect content parts in the item's prompt order
(``ContentAudio`` WAV / MP3, ``ContentImage``, ``ContentVideo`` MP4 / MOV / MPEG) followed by the prompt as
``ContentText``; the gold answer (where there is one) as the target; the options, order and task identity in the
sample's metadata. The user message's ``metadata["omniaudit_item"]`` repeats what omniaudit's own runners are given
beside the messages (id, options, order, the media columns and soundtrack flags, the scored labels), which no model
API sends on: the ``omniaudit/SPEC`` model provider (:mod:`omniaudit.inspect_provider`) rebuilds the item from it so
``inspect eval TASK --model omniaudit/scripted:oracle`` answers as ``omniaudit judge`` does.

The solver is ``generate()`` under the export's generation settings; the scorer says whether each sample was
answered (its mean: the share answered). The audits' measures come from ``omniaudit import inspect LOG --out
FILE`` and ``omniaudit audit AUDIT --predictions NAME=FILE``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentAudio,
    ContentImage,
    ContentText,
    ContentVideo,
    GenerateConfig,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

INFO_FILE = "omniaudit_inspect.json"
ITEM_METADATA = "omniaudit_item"  # the user message's metadata key: the item as omniaudit's runners are given it


def _here() -> Path:
    return Path(__file__).resolve().parent


def task_info(task_name: str) -> dict[str, Any]:
    """What the task is (written by the export beside this file)."""
    info = json.loads((_here() / INFO_FILE).read_text(encoding="utf-8"))
    return dict(info["tasks"][task_name])


def _content(part: dict[str, Any]) -> Content:
    """One media input as an Inspect content part (its file, relative to this file, resolved)."""
    path = str(_here() / part["file"])
    if part["kind"] == "audio":
        return ContentAudio(audio=path, format=part["format"])
    if part["kind"] == "video":
        return ContentVideo(video=path, format=part["format"])
    return ContentImage(image=path)


def item_sample(record: dict[str, Any], identity: dict[str, Any]) -> Sample:
    """One item as an Inspect sample (see the module docstring)."""
    item = {k: record.get(k) for k in ("id", "options", "order", "gold", "reference", "specialist", "condition")}
    item["media"] = [{k: part[k] for k in ("kind", "column", "with_audio")} for part in record["media"]]
    content: list[Content] = [_content(part) for part in record["media"]]
    content.append(ContentText(text=record["prompt"]))
    messages: list[ChatMessage] = [ChatMessageSystem(content=record["system"])] if record.get("system") else []
    messages.append(ChatMessageUser(content=content, metadata={ITEM_METADATA: item}))
    gold = record.get("gold")
    return Sample(id=record["id"], input=messages, target="" if gold is None else str(gold),
                  metadata={"options": list(record.get("options") or []), "order": record.get("order"),
                            "prompt": record["prompt"], "omniaudit": identity})


def omniaudit_task(task_name: str) -> Task:
    """The Inspect task of one exported config: its items, ``generate()`` under the export's settings, and the
    answered scorer."""
    info = task_info(task_name)
    identity = {k: info[k] for k in ("task", "dataset", "config", "fingerprint", "items", "ids", "omniaudit")}
    lines = (_here() / "samples" / f"{info['config']}.jsonl").read_text(encoding="utf-8").splitlines()
    samples = [item_sample(json.loads(line), identity) for line in lines if line.strip()]
    return Task(dataset=MemoryDataset(samples, name=f"{info['dataset']}/{info['config']}"), solver=generate(),
                scorer=answered(), config=GenerateConfig(**info["generate"]), metadata={"omniaudit": identity})


@scorer(metrics=[mean()])
def answered() -> Scorer:
    """1 when the model said something (non-empty text), else 0: its mean is the share answered. Whether an answer
    names an option, and what the answers say about a shortcut, is the audit's to read."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(value=1.0 if text.strip() else 0.0, answer=text)

    return score
