"""`--dialect auto` for `openai:` runners: the server is asked what it is once (its `/models` entry's `owned_by`, then
`/version`), vLLM gets `vllm`, any other server `openai`, or `frames` when the items include a video with its own
soundtrack; the pick is warned with why and recorded in the runner's identity."""

import argparse
import warnings

import pytest
from chat_server import ChatServer

from omniaudit.cli import common
from omniaudit.errors import InputError
from omniaudit.runners.factory import make_judge
from omniaudit.runners.items import JudgeItem, MediaPart
from omniaudit.runners.openai_compat import OpenAIJudge
from omniaudit.runners.openai_server import DialectWarning
from omniaudit.runners.options import check_runner_options
from omniaudit.runners.payload import DIALECTS, Payloads


def _item(id, *parts):
    return JudgeItem(id=id, prompt="Q?", options=[], media=list(parts))


def _judge(server, **kw):
    return OpenAIJudge("m", server.url, None, max_retries=0, backoff_s=0.0, dialect="auto", **kw)


def _answer(judge, items):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judge.answer(items)
    return [str(w.message) for w in caught if issubclass(w.category, DialectWarning)]


VLLM = [{"id": "m", "object": "model", "owned_by": "vllm", "root": "/weights/m"}]
TRANSFORMERS = [{"id": "m", "object": "model", "owned_by": "Qwen", "status": {"value": "loaded"}}]


def _kinds(body):
    return [p["type"] for p in body["messages"][-1]["content"]]


def test_vllm_server_gets_vllm(media):
    with ChatServer(models=VLLM, version="0.12.0") as server:
        judge = _judge(server)
        assert judge.dialect == "auto"
        said = _answer(judge, [_item("va", MediaPart("video", media["video"], "video", with_audio=True))])
        assert judge.dialect == "vllm"
        assert len(said) == 1 and "chose vllm" in said[0] and "owned_by 'vllm'" in said[0]
        assert server.bodies[0]["mm_processor_kwargs"] == {"use_audio_in_video": True}
        assert judge.identity()["dialect"] == {"requested": "auto", "server": "vllm",
                                               "evidence": "/models lists it owned_by 'vllm'"}
        assert not any(p.endswith("/version") for p in server.get_paths)  # owned_by decided it
        _answer(judge, [_item("a", MediaPart("audio", media["audio"], "audio_1"))])
        assert server.gets == 1  # /models asked once, nothing asked again


def test_vllm_without_owner_is_known_by_its_version(media):
    with ChatServer(models=[{"id": "m", "object": "model"}], version="0.11.2") as server:
        judge = _judge(server)
        said = _answer(judge, [_item("a", MediaPart("audio", media["audio"], "audio_1"))])
        assert judge.dialect == "vllm" and "'0.11.2'" in said[0]
        assert "/version" in server.get_paths


def test_transformers_serve_gets_openai_for_audio_and_images(media):
    with ChatServer(models=TRANSFORMERS) as server:
        judge = _judge(server)
        said = _answer(judge, [_item("a", MediaPart("audio", media["audio"], "audio_1")),
                               _item("i", MediaPart("image", media["image"], "image"))])
        assert judge.dialect == "openai" and "chose openai" in said[0] and "not vLLM" in said[0]
        assert all("mm_processor_kwargs" not in b for b in server.bodies)
        assert judge.identity()["dialect"]["server"] == "not vllm"


def test_transformers_serve_gets_frames_for_a_videos_soundtrack(media):
    with ChatServer(models=TRANSFORMERS) as server:
        judge = _judge(server)
        said = _answer(judge, [_item("a", MediaPart("audio", media["audio"], "audio_1")),
                               _item("va", MediaPart("video", media["video"], "video", with_audio=True))])
        assert judge.dialect == "frames" and "chose frames" in said[0] and "soundtrack" in said[0]
        video_body = next(b for b in server.bodies if "image_url" in _kinds(b))
        assert "video_url" not in _kinds(video_body) and "input_audio" in _kinds(video_body)


def test_server_without_version_or_owner_gets_openai(media):
    for models in (None, [{"id": "m", "object": "model", "owned_by": ""}]):  # no /models at all; an owner-less one
        with ChatServer(models=models) as server:
            judge = _judge(server)
            said = _answer(judge, [_item("v", MediaPart("video", media["video"], "video"))])
            assert judge.dialect == "openai" and "no vLLM /version" in said[0]
            assert "/version" in server.get_paths and _kinds(server.bodies[0])[0] == "video_url"


def test_a_later_soundtrack_upgrades_openai_only_before_any_video(media):
    audio = _item("a", MediaPart("audio", media["audio"], "audio_1"))
    va = _item("va", MediaPart("video", media["video"], "video", with_audio=True))
    with ChatServer(models=TRANSFORMERS) as server:
        judge = _judge(server)
        _answer(judge, [audio])
        assert judge.dialect == "openai"
        said = _answer(judge, [va])  # no video went as video_url yet: frames sends the same audio parts
        assert judge.dialect == "frames" and "chose frames" in said[0]
    with ChatServer(models=TRANSFORMERS) as server:
        judge = _judge(server)
        _answer(judge, [_item("v", MediaPart("video", media["video"], "video"))])
        with pytest.raises(InputError, match="auto chose openai"):
            judge.answer([va])  # a video went as video_url: never two dialects in one run


def test_auto_is_an_option_but_never_a_request_dialect():
    assert "auto" in DIALECTS and DIALECTS[0] == "vllm"  # the default unchanged
    check_runner_options({"dialect": "auto"})
    parser = argparse.ArgumentParser()
    common.add_runner_options(parser, "dialect")
    dialect = next(a for a in parser._actions if a.dest == "dialect")
    assert "auto" in dialect.choices and dialect.default == "vllm"
    with pytest.raises(InputError):
        Payloads("m", "auto")
    with ChatServer(models=VLLM) as server:
        judge = make_judge(f"openai:m@{server.url}", dialect="auto", use_cache=False)
        assert judge.dialect == "auto" and server.gets == 0  # nothing asked before the first item
