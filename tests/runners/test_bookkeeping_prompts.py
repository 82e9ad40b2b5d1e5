"""Bookkeeping: the reference placement `system` is not confounded by a chat template's default system
prompt, and `omniaudit judge --dump-prompts` logs the exact prompt of every item.

The input that showed it: Qwen2-Audio's shipped template adds "You are a helpful assistant." when no system message
is given, so the `system` placement replaced that persona while the other three placements kept it."""

import json
import shutil

import pytest

from omniaudit.cli import main
from omniaudit.runners.hf import default_system_prompt, join_system
from omniaudit.runners.items import JudgeItem, MediaPart
from omniaudit.runners.payload import Payloads
from omniaudit.tiny_models import CHAT_TEMPLATE

DEFAULT = "You are a helpful assistant."
# Qwen2-Audio's shipped rule: a default system turn when the conversation does not open with one
WITH_DEFAULT = ("{% if messages[0]['role'] != 'system' %}<|im_start|>system\n" + DEFAULT + "<|im_end|>\n{% endif %}"
                + CHAT_TEMPLATE)


@pytest.fixture(scope="module")
def audio_lms(tiny_models, tmp_path_factory):
    """The tiny audio LM as built (no default system prompt) and a copy whose template adds one."""
    root = tmp_path_factory.mktemp("default_system")
    qwen2_audio_like = root / "audio_default_system"
    shutil.copytree(tiny_models["audio"], qwen2_audio_like)
    (qwen2_audio_like / "chat_template.jinja").write_text(WITH_DEFAULT)
    return {"plain": tiny_models["audio"], "default": qwen2_audio_like}


def test_the_default_system_prompt_is_read_off_the_template(audio_lms):
    from transformers import AutoProcessor

    with_default = AutoProcessor.from_pretrained(audio_lms["default"])
    assert default_system_prompt(with_default, user_as_list=True) == DEFAULT
    assert default_system_prompt(AutoProcessor.from_pretrained(audio_lms["plain"]), user_as_list=True) is None
    assert join_system(DEFAULT, "Reference label: sad.") == f"{DEFAULT}\n\nReference label: sad."
    assert join_system(DEFAULT, None) is None and join_system(None, "x") == "x"


def _rendered(path) -> dict[str, str]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    first = rows[0]["id"].rsplit("/", 1)[0]  # reference/<attribute>/<clip>/wrong
    assert all("provenance" in r and "finish_reason" in r for r in rows)  # the runner's columns are kept
    return {r["id"].rsplit("/", 1)[1]: r["rendered_prompt"] for r in rows if r["id"].startswith(first + "/")}


@pytest.mark.slow
def test_the_system_placement_keeps_the_templates_default_system_prompt(protocol_dataset, audio_lms, tmp_path):
    out = tmp_path / "default.jsonl"
    assert main(["judge", "--dataset", str(protocol_dataset), "--config", "reference", "--conditions", "wrong",
                 "--judge", f"hf:{audio_lms['default']}", "--dump-prompts", "--out", str(out)]) == 0
    prompts = _rendered(out)
    assert set(prompts) == {"before", "after", "system", "rubric"}
    for placement, text in prompts.items():  # the persona in every placement: held constant
        assert text.startswith(f"<|im_start|>system\n{DEFAULT}"), placement
        assert text.count("<|im_start|>system") == 1
    reference = next(line for line in prompts["before"].splitlines() if line.startswith("Reference label:"))
    assert prompts["system"].startswith(f"<|im_start|>system\n{DEFAULT}\n\n{reference}<|im_end|>\n")  # appended
    for placement in ("before", "after", "rubric"):
        assert prompts[placement].startswith(f"<|im_start|>system\n{DEFAULT}<|im_end|>\n")
    # a template without a default: the system placement sends the sentence alone, the others no system turn
    plain = tmp_path / "plain.jsonl"
    assert main(["judge", "--dataset", str(protocol_dataset), "--config", "reference", "--conditions", "wrong",
                 "--judge", f"hf:{audio_lms['plain']}", "--dump-prompts", "--out", str(plain)]) == 0
    bare = _rendered(plain)
    assert bare["system"].startswith(f"<|im_start|>system\n{reference}<|im_end|>\n")
    assert not any("<|im_start|>system" in bare[p] for p in ("before", "after", "rubric"))


def test_the_card_shows_each_placements_rendered_prompt(protocol_dataset):
    card = (protocol_dataset / "README.md").read_text()
    assert "held constant across placements" in card
    for placement in ("before", "after", "system", "rubric"):
        assert f"`{placement}`:\n\n```text\n<|im_start|>system\n{DEFAULT}" in card
    assert f"`system`:\n\n```text\n<|im_start|>system\n{DEFAULT}\n\nReference label: " in card


def test_openai_and_scripted_prompts_are_json_messages_without_media_bytes(protocol_dataset, tmp_path):
    audio = MediaPart("audio", b"RIFF" + b"\0" * 400, "audio_1")
    video = MediaPart("video", b"\0" * 64, "video", with_audio=True)
    item = JudgeItem(id="x", prompt="Which emotion?", options=["sad", "happy"], system="Reference label: sad.",
                     media=[audio, video])
    messages = json.loads(Payloads("m").render(item))
    assert messages[0] == {"role": "system", "content": "Reference label: sad."}
    parts = messages[1]["content"]
    assert parts[0] == {"type": "input_audio", "column": "audio_1", "bytes": 404, "sha256": audio.key}
    assert parts[1]["type"] == "video_url" and parts[1]["with_audio"] is True
    assert parts[2] == {"type": "text", "text": "Which emotion?"}
    assert json.loads(Payloads("m", dialect="frames").render(item))[1]["content"][1]["type"] == "frames"
    out = tmp_path / "scripted.jsonl"
    assert main(["judge", "--dataset", str(protocol_dataset), "--config", "reference", "--conditions", "wrong",
                 "--judge", "scripted:copy-reference", "--dump-prompts", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    sent = json.loads(next(r for r in rows if r["id"].endswith("/system"))["rendered_prompt"])
    assert sent[0]["role"] == "system" and sent[0]["content"].startswith("Reference label: ")
    assert sent[1]["content"][0]["type"] == "input_audio" and "data" not in sent[1]["content"][0]
    plain = tmp_path / "no_dump.jsonl"
    assert main(["judge", "--dataset", str(protocol_dataset), "--config", "reference", "--conditions", "wrong",
                 "--judge", "scripted:copy-reference", "--out", str(plain)]) == 0
    assert "rendered_prompt" not in json.loads(plain.read_text().splitlines()[0])  # only when asked
