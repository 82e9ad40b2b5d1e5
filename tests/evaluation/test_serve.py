"""The `openai:` runner against a real OpenAI-compatible server nobody here wrote: `transformers serve` on 127.0.0.1,
serving the tiny models of `omniaudit tiny-models` (text: causal LM; audio: Qwen2-Audio-style LM and the Qwen2.5-Omni
thinker; images, audio and videos sent as frames + soundtrack: the omni thinker), and each audit reading the
predictions as written.

On the pinned stack (torchcodec 0.9.1) the Qwen-Omni processor inside the server fails on `video_url` requests (its
audio-from-video path needs torchcodec >= 0.17), and the server ignores `logprobs`. Both are pinned down here, so a
stack that lifts them fails these tests on purpose; the `video_url` payloads (with and without the video's own audio)
are checked in test_openai_runner.py against the fault-injecting server.
"""

import json

import pytest
from transformers_server import TransformersServer, missing_modules

from omniaudit.cli import main
from omniaudit.errors import InputError, ServiceError
from omniaudit.evaluation.judges import run_judge

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    bool(missing_modules()), reason=f"`transformers serve` needs {missing_modules()}: install the [serve] extra")]


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """(server, {"text" | "audio" | "omni": model folder}); requests name a folder, the server loads it on demand."""
    from omniaudit.tiny_models import tiny_audio_lm, tiny_causal_lm, tiny_omni

    root = tmp_path_factory.mktemp("served")
    models = {"text": tiny_causal_lm(root / "text"), "audio": tiny_audio_lm(root / "audio"),
              "omni": tiny_omni(root / "omni")}
    server = TransformersServer(root / "serve.log")
    yield server, models
    server.close()


def _rows(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def _judge(dataset, config, spec, out, *extra):
    return main(["judge", "--dataset", str(dataset), "--config", config, "--judge", spec, "--out", str(out),
                 "--no-cache", *extra])


def test_text_and_audio_items_feed_the_protocols_audit(served, protocol_dataset, tmp_path, capsys):
    server, models = served
    text, audio = tmp_path / "text.jsonl", tmp_path / "audio.jsonl"
    assert _judge(protocol_dataset, "blueprint", f"openai:{models['text']}@{server.url}", text,
                  "--conditions", "skeleton", "--max-tokens", "4") == 0
    assert _judge(protocol_dataset, "pairwise", f"openai:{models['audio']}@{server.url}", audio,
                  "--conditions", "identical", "--max-tokens", "4", "--concurrency", "2") == 0
    out = capsys.readouterr().out
    assert "32 items judged" in out and "16 items judged" in out and "0 with option probabilities" in out
    rows = _rows(text) + _rows(audio)
    assert len(rows) == 48 and all(isinstance(r["raw"], str) and r["parsed"] is not None for r in rows)
    assert all(r["option_probs"] is None for r in rows)  # the server ignores logprobs: the text is parsed
    assert {r["order"] for r in _rows(audio)} == {"AB", "BA"}
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", f"tiny={text}",
                 f"tiny={audio}", "--out", str(tmp_path / "rep"), "--n-resamples", "50"]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    rates = result["parse_rate"]["tiny"]
    assert result["judges"] == ["tiny"] and set(rates["pairwise"]["identical"]) == {"concat", "native"}
    assert all("skeleton" in by_condition for by_condition in rates["blueprint"].values())


def test_omni_model_takes_images_audio_and_videos_as_frames(served, mixed_dataset, tmp_path):
    server, models = served
    omni, text = f"openai:{models['omni']}@{server.url}", f"openai:{models['text']}@{server.url}"
    counts = run_judge(mixed_dataset, "mixed", omni, tmp_path / "closed.jsonl", ["image", "audio", "pair"],
                       use_cache=False, max_tokens=4)
    assert counts["items"] == counts["closed"] == counts["requests"] == 4 and counts["not_completions"] == 0
    # videos with and without their soundtrack, as JPEG frames (+ the soundtrack as input_audio)
    counts = run_judge(mixed_dataset, "mixed", omni, tmp_path / "frames.jsonl", ["video", "silent_video"],
                       use_cache=False, dialect="frames", fps=4.0, max_frames=2, max_tokens=4)
    assert counts["items"] == counts["free_form"] == counts["requests"] == 3
    # a free-form item is generated, never matched to the options its prompt lists
    counts = run_judge(mixed_dataset, "mixed", text, tmp_path / "text.jsonl", ["text"], use_cache=False,
                       max_tokens=4)
    (row,) = _rows(tmp_path / "text.jsonl")
    assert counts["free_form"] == 1 and (row["label"], row["parsed"], row["option_probs"]) == (None, None, None)


def test_omni_video_url_fails_inside_the_server_on_this_pin(served, mixed_dataset, tmp_path):
    """video_url to the tiny omni model: HTTP 500 from the Qwen-Omni processor (its audio-from-video path needs
    torchcodec >= 0.17; 0.9.1 is pinned), and 422 for vLLM's mm_processor_kwargs (a video's own soundtrack); either
    way the run stops naming the item, writes nothing, and a rejection points to --dialect frames."""
    server, models = served
    spec = f"openai:{models['omni']}@{server.url}"
    with pytest.raises(ServiceError, match=r"item 'video/silent' failed after 1 attempts \(HTTP 500"):
        run_judge(mixed_dataset, "mixed", spec, tmp_path / "p.jsonl", ["silent_video"], use_cache=False,
                  max_retries=0, dialect="openai", max_tokens=4)
    with pytest.raises(InputError, match=r"rejected item 'video/s.*HTTP 422.*mm_processor_kwargs.*--dialect frames"):
        run_judge(mixed_dataset, "mixed", spec, tmp_path / "p.jsonl", ["video"], use_cache=False, max_tokens=4,
                  concurrency=1)
    assert not (tmp_path / "p.jsonl").exists()
