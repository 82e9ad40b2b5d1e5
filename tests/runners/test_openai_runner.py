"""The `openai:` runner against a local fault-injecting chat server: the exact message JSON of every dialect and
modality, option probabilities from logprobs, free-form items generated (never scored), sampling settings and runs
in rows and cache keys, stopping on non-answers, a server rejecting video_url; and `--shard I/N` + merge."""

import base64
import io
import json
import math

import numpy as np
import pytest
import soundfile as sf
from chat_server import ChatServer
from judge_items import EMOTIONS, b64

from omniaudit.cli import main
from omniaudit.errors import InputError, ServiceError
from omniaudit.runners import load_items, run_judge
from omniaudit.runners.completions import option_probs
from omniaudit.runners.items import JudgeItem, MediaPart, Sampling, to_wav
from omniaudit.runners.openai_compat import OpenAIJudge
from omniaudit.runners.payload import Payloads
from omniaudit.runners.shards import group_key, merge_predictions, shard_positions


def _item(id, *parts, options=(), prompt="Q?", system=None):
    return JudgeItem(id=id, prompt=prompt, options=list(options), system=system, media=list(parts))


# ---- payloads: the exact message JSON per dialect and modality ------------------------------------------------------

def test_payload_json_for_every_dialect_and_modality(media):
    audio, image, video = media["audio"], media["image"], media["video"]
    wav = {"type": "input_audio", "input_audio": {"data": b64(to_wav(audio)), "format": "wav"}}
    png = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(image)}}
    mp4 = {"type": "video_url", "video_url": {"url": "data:video/mp4;base64," + b64(video)}}
    text = {"type": "text", "text": "Q?"}
    cases = {  # item -> (content in every dialect but frames, extra request fields per dialect)
        "audio": (_item("a", MediaPart("audio", audio, "audio_1")), [wav, text]),
        "image": (_item("i", MediaPart("image", image, "image")), [png, text]),
        "video": (_item("v", MediaPart("video", video, "video")), [mp4, text]),
        "video+audio": (_item("va", MediaPart("video", video, "video", with_audio=True)), [mp4, text]),
        "mixed": (_item("m", MediaPart("image", image, "image"), MediaPart("audio", audio, "audio_1"),
                        system="Judge."), [png, wav, text]),
    }
    sampling = Sampling(temperature=0.7, top_p=0.9, seed=11)
    for dialect in ("vllm", "openai"):
        payloads = Payloads("m", dialect, max_tokens=16)
        for name, (item, content) in cases.items():
            if dialect == "openai" and name == "video+audio":
                continue  # refused before any request (test below)
            body = payloads.body(item, sampling)
            messages = ([{"role": "system", "content": "Judge."}] if item.system else []) + [
                {"role": "user", "content": content}]
            expected = {"model": "m", "messages": messages, "max_tokens": 16, "temperature": 0.7, "top_p": 0.9,
                        "seed": 11}
            if dialect == "vllm" and name == "video+audio":  # Qwen-Omni on vLLM hears the video's own soundtrack
                expected["mm_processor_kwargs"] = {"use_audio_in_video": True}
            assert body == expected, (dialect, name)
    # frames: a marker, JPEG frames at fps on the clip's own timeline, then the soundtrack of the same window
    from PIL import Image

    from omniaudit.video_window import decode_clip

    payloads = Payloads("m", "frames", fps=4.0, max_frames=3)
    clip = decode_clip(video, 4.0, 3, 16000)
    silent = payloads.messages(cases["video"][0])[0]["content"]
    assert silent[0] == {"type": "text", "text": "[video: 3 frames, one every 0.25 s from 0 s]"}
    assert [p["type"] for p in silent[1:]] == ["image_url"] * 3 + ["text"]
    first = base64.b64decode(silent[1]["image_url"]["url"].removeprefix("data:image/jpeg;base64,"))
    assert Image.open(io.BytesIO(first)).size == (96, 64)
    heard = payloads.body(cases["video+audio"][0], Sampling())
    content = heard["messages"][0]["content"]
    assert content[0]["text"] == "[video: 3 frames, one every 0.25 s from 0 s, then its soundtrack over the same time]"
    assert content[1:4] == silent[1:4]
    soundtrack, rate = sf.read(io.BytesIO(base64.b64decode(content[4]["input_audio"]["data"])), dtype="float32")
    assert content[4]["input_audio"]["format"] == "wav" and rate == 16000
    assert soundtrack.shape == clip.audio.shape == (12000,)  # 3 frames at 4 fps = 0.75 s
    assert np.abs(soundtrack - clip.audio).max() < 1e-3
    assert "mm_processor_kwargs" not in heard and "video_url" not in json.dumps(heard)
    # closed items ask for logprobs (unless 0); free-form items never do
    closed = _item("c", MediaPart("audio", audio, "audio_1"), options=["angry", "sad"])
    assert Payloads("m").body(closed, Sampling()) | {"messages": None} == {
        "model": "m", "messages": None, "max_tokens": 32, "temperature": 0.0, "logprobs": True, "top_logprobs": 10}
    assert "logprobs" not in Payloads("m", top_logprobs=0).body(closed, Sampling())


def test_media_are_built_once_per_source(media):
    payloads = Payloads("m", "frames", fps=4.0, max_frames=2)
    clip = [_item(f"q{i}", MediaPart("video", media["video"], "video", with_audio=True)) for i in range(3)]
    first, second = MediaPart("audio", media["audio"], "audio_1"), MediaPart("audio", media["audio2"], "audio_2")
    pair = [_item("AB", first, second), _item("BA", second, first)]
    bodies = [payloads.body(item, Sampling()) for item in clip + pair]
    assert payloads.built == 3  # the clip once (frames decoded once), each of the pair's clips once
    assert bodies[0] == bodies[2] and bodies[3]["messages"][0]["content"][:2] == bodies[4]["messages"][0]["content"][
        1::-1]
    tiny = Payloads("m", cache_bytes=10)  # nothing fits: built every time, memory stays bounded
    for item in pair:
        tiny.body(item, Sampling())
    assert tiny.built == 4 and not tiny._parts


def test_openai_dialect_refuses_a_video_soundtrack_before_any_request(mixed_dataset, tmp_path):
    with ChatServer() as server:
        with pytest.raises(InputError, match=r"item 'video/sync' has a video\+audio input \(video\).*--dialect "
                                             r"openai.*--dialect frames"):
            run_judge(mixed_dataset, "mixed", f"openai:m@{server.url}", tmp_path / "p.jsonl", dialect="openai",
                      cache_dir=tmp_path / "c")
        assert server.requests == 0 and not (tmp_path / "p.jsonl").exists()


# ---- runs through a server ----------------------------------------------------------------------------------------

def _rows(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


def _favour_first(body, answer):
    """Logprobs for the answer's position: 0.6 on the answer, 0.3 on another option, 0.1 on a non-option."""
    other = {"A": "B", "B": "A", "angry": "sad", "sad": "angry", "yes": "no", "no": "yes"}.get(answer, "maybe")
    return {answer: 0.6, " " + other: 0.3, "Well": 0.1}


@pytest.mark.parametrize("dialect", ["vllm", "frames"])
def test_every_modality_through_a_server(mixed_dataset, tmp_path, dialect):
    with ChatServer(probs=_favour_first) as server:
        out = tmp_path / "pred.jsonl"
        counts = run_judge(mixed_dataset, "mixed", f"openai:tiny@{server.url}", out, dialect=dialect,
                           cache_dir=tmp_path / "c", fps=4.0, max_frames=2)
        rows = {r["id"]: r for r in _rows(out)}
        bodies = {b["messages"][-1]["content"][-1]["text"]: b for b in server.bodies}
    assert counts["items"] == len(rows) == server.requests == 8
    assert counts["closed"] == counts["parsed"] == counts["with_probs"] == 4 and counts["free_form"] == 4
    for id in ("audio/1", "image/1", "pair/1/AB", "pair/1/BA"):
        r = rows[id]
        assert r["parsed"] and r["option_probs"][r["label"]] == pytest.approx(0.6 / 0.9)
        assert sum(r["option_probs"].values()) == pytest.approx(1.0)
    assert rows["pair/1/AB"]["order"] == "AB" and rows["audio/1"]["order"] is None
    sent = json.dumps(server.bodies)
    assert ("video_url" in sent) == (dialect == "vllm")
    sync = bodies["Is the audio synchronized with the video?"]
    assert ("mm_processor_kwargs" in sync) == (dialect == "vllm")
    assert "mm_processor_kwargs" not in bodies["What happens in the video?"]
    # free-form items are generated: no logprobs asked, no label, even when the prompt lists words to pick from
    for id in ("video/sync", "video/sound", "video/silent", "text/1"):
        r = rows[id]
        assert (r["label"], r["parsed"], r["option_probs"]) == (None, None, None) and r["raw"]
    assert rows["text/1"]["raw"] == "red"  # the server named a word of the prompt's list: still not a label
    free_prompts = {"Is the audio synchronized with the video?", "Is there a sound?", "What happens in the video?",
                    "Name a colour. Answer with exactly one of: red, blue."}
    assert {("logprobs" in b) for text, b in bodies.items() if text in free_prompts} == {False}
    assert {("logprobs" in b) for text, b in bodies.items() if text not in free_prompts} == {True}
    assert {r["temperature"] for r in rows.values()} == {0.0} and {r["run"] for r in rows.values()} == {0}


def test_sampling_settings_runs_and_cache(mixed_dataset, tmp_path):
    with ChatServer() as server:
        spec, cache = f"openai:tiny@{server.url}", tmp_path / "cache"
        out = tmp_path / "t07.jsonl"
        run_judge(mixed_dataset, "mixed", spec, out, temperature=0.7, top_p=0.95, seed=5, runs=3, cache_dir=cache)
        rows = _rows(out)
        assert len(rows) == 3 * 8 == server.requests
        assert [r["run"] for r in rows] == [0] * 8 + [1] * 8 + [2] * 8  # run-major, item order within a run
        assert {(r["run"], r["seed"], r["temperature"], r["top_p"]) for r in rows} == {
            (0, 5, 0.7, 0.95), (1, 6, 0.7, 0.95), (2, 7, 0.7, 0.95)}
        assert sorted({b["seed"] for b in server.bodies}) == [5, 6, 7]
        assert {(b["temperature"], b["top_p"]) for b in server.bodies} == {(0.7, 0.95)}
        run_judge(mixed_dataset, "mixed", spec, tmp_path / "again.jsonl", temperature=0.7, top_p=0.95, seed=5,
                  runs=3, cache_dir=cache)
        assert server.requests == 24  # every sample cached under its own run
        assert (tmp_path / "again.jsonl").read_text() == out.read_text()
        run_judge(mixed_dataset, "mixed", spec, tmp_path / "two.jsonl", temperature=0.7, runs=2, cache_dir=cache)
        assert server.requests == 24 + 16  # no seed: runs are still asked separately, never collapsed
        assert not any("seed" in b for b in server.bodies[24:])
        assert all("top_p" not in b for b in server.bodies[24:])
        run_judge(mixed_dataset, "mixed", spec, tmp_path / "nc.jsonl", temperature=0.7, seed=5, runs=1,
                  cache_dir=cache, use_cache=False)
        assert server.requests == 40 + 8
    with pytest.raises(InputError, match="top_p"):
        run_judge(mixed_dataset, "mixed", spec, tmp_path / "bad.jsonl", top_p=1.5)
    with pytest.raises(InputError, match="runs"):
        run_judge(mixed_dataset, "mixed", "scripted:random", tmp_path / "bad.jsonl", runs=0)


def test_a_server_rejecting_video_url_is_told_to_use_frames(mixed_dataset, tmp_path, capsys):
    with ChatServer(reject_video=True) as server:
        args = ["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", f"openai:m@{server.url}",
                "--out", str(tmp_path / "p.jsonl"), "--cache", str(tmp_path / "c"), "--concurrency", "1"]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "the server rejected item 'video/" in err and "--dialect frames" in err and "HTTP 400" in err
        assert not (tmp_path / "p.jsonl").exists()  # nothing partial
        assert main([*args, "--dialect", "frames", "--fps", "4", "--max-frames", "2"]) == 0
        assert len(_rows(tmp_path / "p.jsonl")) == 8


def test_mostly_non_answers_stop_the_run_and_a_few_warn(mixed_dataset, tmp_path, capsys):
    def null_unless_image(body):
        return None if "picture" in json.dumps(body["messages"][-1]["content"][-1]) else "null"

    out = tmp_path / "p.jsonl"
    with ChatServer(fault=null_unless_image) as server:
        args = ["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", f"openai:m@{server.url}",
                "--out", str(out), "--cache", str(tmp_path / "c")]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "most replies are not chat completions (7 of 8 replies" in err and "content" in err
        assert not out.exists()
    with ChatServer(fault=lambda b: "garbage" if "Is there a sound" in json.dumps(b) else None) as server:
        args[args.index("--judge") + 1] = f"openai:m@{server.url}"
        assert main(args) == 0
        captured = capsys.readouterr()
        assert "warning: 1 of 8 replies were not answers" in captured.err
        rows = {r["id"]: r for r in _rows(out)}
        assert "proxy error" in rows["video/sound"]["raw"]
        assert main(args) == 0 and server.requests == 8 + 1  # only the non-answer is asked again


def test_server_that_fails_then_recovers(protocol_dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    items = load_items(protocol_dataset, "cue_conflict")
    garbage, refused = items[0].audios[0], items[1].audios[0]

    def fault(body):
        first = body["messages"][-1]["content"][0]["input_audio"]["data"]
        return {b64(to_wav(garbage)): "garbage", b64(to_wav(refused)): 400}.get(first)

    cache = tmp_path / "cache"
    with ChatServer(fail_first=3, fault=fault, retry_after="0") as server:
        spec = f"openai:tiny-judge@{server.url}"
        out = tmp_path / "pred.jsonl"
        counts = run_judge(protocol_dataset, "cue_conflict", spec, out, cache_dir=cache, concurrency=3,
                           max_retries=4, api_key_env="OPENAI_API_KEY")
        rows = _rows(out)
        assert counts["items"] == len(items) == len(rows)
        assert server.requests == len(items) + 3  # every request once, plus the three failed attempts
        bad = [r for r in rows if "proxy error" in r["raw"] or r["raw"].startswith("[HTTP 400")]
        assert bad and not any(r["parsed"] for r in bad)  # kept, counted unparseable
        assert counts["rejected"] + counts["not_completions"] == len(bad)
        assert set(server.auth) == {"Bearer sk-test-secret"}  # the key named is sent, even to a loopback URL
        before = server.requests
        run_judge(protocol_dataset, "cue_conflict", spec, tmp_path / "again.jsonl", cache_dir=cache)
        assert server.requests == before + len(bad)  # resumed from the cache: only non-answers asked again
        assert set(server.auth[before:]) == {None}  # none named: no key to a loopback URL (and none in the cache key)
        assert (tmp_path / "again.jsonl").read_text() == out.read_text()
    with ChatServer() as other:  # the cache is keyed by the server too
        run_judge(protocol_dataset, "cue_conflict", f"openai:tiny-judge@{other.url}", tmp_path / "o.jsonl",
                  cache_dir=cache)
        assert other.requests == len(items)
    stored = "".join(p.read_text() for p in cache.rglob("*.json")) + out.read_text()
    assert "sk-test-secret" not in stored  # the key is never written


def test_errors_name_the_item_and_write_nothing(mixed_dataset, tmp_path, capsys):
    with ChatServer(always_fail=True) as down:
        with pytest.raises(ServiceError, match="item '.*' failed after 2 attempts.*rerunning the same command"):
            run_judge(mixed_dataset, "mixed", f"openai:m@{down.url}", tmp_path / "p.jsonl", cache_dir=tmp_path / "c",
                      max_retries=1)
        assert not (tmp_path / "p.jsonl").exists()
    with ChatServer(always_fail=True, status=404) as rejecting, \
            pytest.raises(InputError, match="the server rejected 8 of 8 replies .* e.g. item '.*': \\[HTTP 404"):
        run_judge(mixed_dataset, "mixed", f"openai:m@{rejecting.url}", tmp_path / "p.jsonl", dialect="frames",
                  cache_dir=tmp_path / "c2")
    assert main(["judge", "--dataset", str(mixed_dataset), "--config", "table", "--judge", "scripted:random",
                 "--out", str(tmp_path / "p.jsonl")]) == 2
    assert "lacks the item columns ['prompt']" in capsys.readouterr().err


# ---- option probabilities from logprobs ----------------------------------------------------------------------------

def _lp(*positions):
    return [{"token": tok, "logprob": math.log(dict(alts).get(tok, 0.5)),
             "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alts]} for tok, alts in positions]


def test_option_probs_from_logprobs():
    ab = ["A", "B"]
    # read at the answer, not at "Answer": "Answer" spells no option as a whole word
    content = _lp(("Answer", [("Answer", 0.9), ("The", 0.1)]), (":", [(":", 1.0)]),
                  (" B", [(" B", 0.7), (" A", 0.2), (" **", 0.1)]))
    assert option_probs(content, ab, "B") == pytest.approx({"A": 0.2 / 0.9, "B": 0.7 / 0.9})
    assert option_probs(content, ab, None) == pytest.approx({"A": 0.2 / 0.9, "B": 0.7 / 0.9})
    # case and markup are ignored; a token that begins one option counts for it
    labels = ["angry", "happy", "sad"]
    content = _lp(("**", [("**", 1.0)]), ("Ang", [("Ang", 0.5), ("sad", 0.25), ("Happy", 0.25)]), ("ry", [("ry", 1)]))
    assert option_probs(content, labels, "angry") == pytest.approx({"angry": 0.5, "happy": 0.25, "sad": 0.25})
    # options sharing a first token cannot be separated by first-token alternatives: the text decides
    shared = ["happy", "happiness"]
    content = _lp(("happ", [("happ", 0.9), ("sad", 0.1)]), ("y", [("y", 1.0)]))
    assert option_probs(content, shared, "happy") is None
    # no logprobs, no option among the alternatives, or no option in the text
    assert option_probs(None, ab, "A") is None
    assert option_probs(_lp(("A", [("A", 1.0)])), ab, "B") is None
    assert option_probs(_lp(("Maybe", [("Maybe", 1.0)])), ab, None) is None


# ---- shards ---------------------------------------------------------------------------------------------------------

def test_shards_merge_into_the_unsharded_file(protocol_dataset, tmp_path, capsys):
    items = load_items(protocol_dataset, "pairwise")
    groups = [group_key(i) for i in items]
    assert groups[0] == items[0].id.rsplit("/", 1)[0] and len(set(groups)) == len(items) // 2
    shards = [shard_positions(items, i, 3) for i in range(3)]
    assert sorted(p for s in shards for p in s) == list(range(len(items)))
    for s in shards:  # both orders of a trial in one shard, shards balanced to one trial
        assert len({groups[p] for p in s}) * 2 == len(s)
    assert max(map(len, shards)) - min(map(len, shards)) <= 2
    whole = tmp_path / "whole.jsonl"
    run_judge(protocol_dataset, "pairwise", "scripted:random", whole, seed=3, runs=2)
    parts = []
    for i in range(3):
        parts.append(tmp_path / f"part{i}.jsonl")
        assert main(["judge", "--dataset", str(protocol_dataset), "--config", "pairwise", "--judge", "scripted:random",
                     "--seed", "3", "--runs", "2", "--shard", f"{i}/3", "--out", str(parts[i])]) == 0
    assert "(shard 2/3)" in capsys.readouterr().out
    merged = tmp_path / "merged.jsonl"
    assert main(["merge-predictions", str(parts[2]), str(parts[0]), str(parts[1]), "--out", str(merged)]) == 0
    assert merged.read_bytes() == whole.read_bytes()
    for i in range(2):  # one run, sharded and merged, is audited as is
        assert main(["judge", "--dataset", str(protocol_dataset), "--config", "pairwise", "--judge",
                     "scripted:always-a", "--shard", f"{i}/2", "--out", str(tmp_path / f"a{i}.jsonl")]) == 0
    assert main(["merge-predictions", str(tmp_path / "a0.jsonl"), str(tmp_path / "a1.jsonl"), "--out",
                 str(tmp_path / "always-a.jsonl")]) == 0
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions",
                 str(tmp_path / "always-a.jsonl"), "--out", str(tmp_path / "rep"), "--n-resamples", "50"]) == 0
    lock = json.loads((tmp_path / "rep" / "audit.json").read_text())["lock"]["always-a"]
    assert all(e["value"] == 1.0 for fmt in lock.values() for e in fmt.values())
    with pytest.raises(InputError, match="shard\\(s\\) 1/3 missing"):
        merge_predictions(tmp_path / "m2.jsonl", [parts[0], parts[2]])
    with pytest.raises(InputError, match="given twice"):
        merge_predictions(tmp_path / "m2.jsonl", [parts[0], parts[1], parts[2], parts[0]])
    with pytest.raises(InputError, match="not a shard"):
        merge_predictions(tmp_path / "m2.jsonl", [whole])
    with pytest.raises(InputError, match="only .* item group"):
        run_judge(protocol_dataset, "pairwise", "scripted:random", tmp_path / "x.jsonl", shard=(0, len(items)))
    assert not (tmp_path / "m2.jsonl").exists()


def test_openai_judge_answers_are_text_for_older_callers(media, tmp_path):
    """extract.py and grading.py use answer() as a list of str: Answer is a str."""
    with ChatServer() as server:
        judge = OpenAIJudge("m", server.url, None)
        answers = judge.answer([_item("a", MediaPart("audio", media["audio"], "audio_1"), prompt=EMOTIONS,
                                      options=["angry", "sad"])])
    assert answers == ["angry"] and isinstance(answers[0], str) and answers[0].option_probs is None


# ---- every builder's embedded default, through a server, into its audit -------------------------------------------

@pytest.mark.slow
def test_every_builder_default_through_a_server_feeds_its_audit(tmp_path, capsys):
    from omniaudit.data_builders.composition import build_composition_dataset
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    pref = build_preference_dataset(tmp_path / "pref", spec=SyntheticSpec(n_pairs=40, seed=1))
    iv = build_interventions_dataset(tmp_path / "iv", spec=SyntheticClipSpec(n_clips=2, width=96, height=64))
    comp = build_composition_dataset(tmp_path / "comp", n_synthetic=8)

    def judge(dataset, config, out, *extra):
        return main(["judge", "--dataset", str(dataset), "--config", config, "--judge", f"openai:m@{server.url}",
                     "--out", str(out), "--cache", str(tmp_path / "cache"), *extra])

    with ChatServer(probs=_favour_first) as server:
        assert judge(pref, "judge", tmp_path / "pref.jsonl") == 0  # zero-shot pairwise judge, both orders
        assert judge(iv, "diagnostic", tmp_path / "diag.jsonl") == 0  # free-form, video with its soundtrack
        for config in ("samples", "ablations"):  # free-form; C3PO's mean over 3 sampled runs
            assert judge(comp, config, tmp_path / f"{config}.jsonl", "--runs", "3", "--temperature", "0.7",
                         "--seed", "1") == 0
        diag_bodies = [b for b in server.bodies if "mm_processor_kwargs" in b]
    assert diag_bodies and all(b["mm_processor_kwargs"] == {"use_audio_in_video": True} for b in diag_bodies)
    pref_rows = _rows(tmp_path / "pref.jsonl")
    assert {r["order"] for r in pref_rows} == {"ab", "ba"} and all(r["option_probs"] for r in pref_rows)
    samples = _rows(tmp_path / "samples.jsonl")
    assert {r["run"] for r in samples} == {0, 1, 2} and {r["seed"] for r in samples} == {1, 2, 3}
    assert all(r["label"] is None and r["option_probs"] is None for r in samples)  # generated, never scored
    capsys.readouterr()
    assert main(["audit", "preference", "--data", str(pref), "--judges", f"m={tmp_path / 'pref.jsonl'}",
                 "--n-resamples", "50", "--no-controls", "--no-source-classifier", "--out", str(tmp_path / "a1")]) == 0
    assert main(["audit", "interventions", "--dataset", str(iv), "--predictions", str(tmp_path / "diag.jsonl"),
                 "--n-resamples", "50", "--out", str(tmp_path / "a2")]) == 0
    assert main(["audit", "composition", "--dataset", str(comp), "--predictions", f"m={tmp_path / 'samples.jsonl'}",
                 f"m={tmp_path / 'ablations.jsonl'}", "--out", str(tmp_path / "a3")]) == 0
    result = {f: json.loads((tmp_path / f / "audit.json").read_text()) for f in ("a1", "a2", "a3")}
    assert result["a1"]["judges"]["m"]["p_a1_from"] == {"probs": 64}  # P(a1) from the option probabilities
    assert result["a2"]["n_rows"] == 14 and result["a2"]["sampling"] == {"temperature": 0.0}
    assert [v["seed"] for v in result["a3"]["sampling"].values()] == [1, 2, 3]  # three runs, recorded


def test_local_runs_are_sampled_with_their_own_seed(protocol_dataset, tiny_models, tmp_path):
    """hf: at a temperature, run r samples with seed + r: repeated runs differ, the same run repeats exactly."""
    spec, args = f"hf:{tiny_models['text']}", (protocol_dataset, "blueprint")
    run_judge(*args, spec, tmp_path / "a.jsonl", ["skeleton"], temperature=1.0, seed=4, runs=2)
    run_judge(*args, spec, tmp_path / "b.jsonl", ["skeleton"], temperature=1.0, seed=5, runs=1)
    rows, again = _rows(tmp_path / "a.jsonl"), _rows(tmp_path / "b.jsonl")
    first, second = ([r["label"] for r in rows if r["run"] == k] for k in (0, 1))
    assert first != second and second == [r["label"] for r in again]  # run 1 of seed 4 is run 0 of seed 5
    assert all(r["option_probs"] and r["parsed"] for r in rows)  # option probabilities from the logits
