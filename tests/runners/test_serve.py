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
from omniaudit.runners import run_judge

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
    """The tiny random models name no option: --min-usable 0 keeps their (plumbing-only) runs."""
    return main(["judge", "--dataset", str(dataset), "--config", config, "--judge", spec, "--out", str(out),
                 "--no-cache", "--min-usable", "0", *extra])


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
    # two models' files under one judge name are refused (their provenance names two models) ...
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", f"tiny={text}",
                 f"tiny={audio}", "--out", str(tmp_path / "pooled"), "--n-resamples", "50"]) == 2
    assert "do not come from one judge run: its judge is" in capsys.readouterr().err
    # ... and audited as two judges
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", f"text={text}",
                 f"audio={audio}", "--out", str(tmp_path / "rep"), "--n-resamples", "50"]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    rates = result["parse_rate"]
    assert result["judges"] == ["text", "audio"] and set(rates["audio"]["pairwise"]["identical"]) == {"concat",
                                                                                                        "native"}
    assert all("skeleton" in by_condition for by_condition in rates["text"]["blueprint"].values())
    assert result["provenance"]["audio"][0]["model"]["served"]["id"] == str(models["audio"])


def test_omni_model_takes_images_audio_and_videos_as_frames(served, mixed_dataset, tmp_path):
    server, models = served
    omni, text = f"openai:{models['omni']}@{server.url}", f"openai:{models['text']}@{server.url}"
    counts = run_judge(mixed_dataset, "mixed", omni, tmp_path / "closed.jsonl", ["image", "audio", "pair"],
                       use_cache=False, max_tokens=4, min_usable=0)
    assert counts["items"] == counts["closed"] == counts["requests"] == 4 and counts["not_completions"] == 0
    # videos with and without their soundtrack, as JPEG frames (+ the soundtrack as input_audio)
    counts = run_judge(mixed_dataset, "mixed", omni, tmp_path / "frames.jsonl", ["video", "silent_video"],
                       use_cache=False, dialect="frames", fps=4.0, max_frames=2, max_tokens=4, min_usable=0)
    assert counts["items"] == counts["free_form"] == counts["requests"] == 3
    # a free-form item is generated, never matched to the options its prompt lists
    counts = run_judge(mixed_dataset, "mixed", text, tmp_path / "text.jsonl", ["text"], use_cache=False,
                       max_tokens=4, min_usable=0)
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


def test_the_tiny_omni_model_answers_every_builder_default_and_each_audit_reads_it(served, protocol_dataset,
                                                                                   tmp_path, capsys):
    """The bar: the tiny Qwen2.5-Omni thinker, locally (`hf:`) and behind `transformers serve` (`openai:`,
    videos as frames + soundtrack), answers the embedded default of every builder, and every audit reads the files
    as written."""
    from omniaudit.data_builders.composition import build_composition_dataset
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    server, models = served
    pref = build_preference_dataset(tmp_path / "pref", spec=SyntheticSpec(n_pairs=24, seed=2))
    iv = build_interventions_dataset(tmp_path / "iv", spec=SyntheticClipSpec(n_clips=2, width=96, height=64))
    comp = build_composition_dataset(tmp_path / "comp", n_synthetic=6)
    video = ("--fps", "1", "--max-frames", "4", "--max-tokens", "6")
    for name, spec, extra in (("hf", f"hf:{models['omni']}", ("--mode", "logits")),
                              ("serve", f"openai:{models['omni']}@{server.url}", ("--dialect", "frames"))):
        d = tmp_path / name
        jobs = [(pref, "judge", ()), (iv, "diagnostic", video), (protocol_dataset, "pairwise", ("--conditions",
                "identical", "--max-tokens", "4")), (comp, "samples", video), (comp, "ablations", video)]
        for dataset, config, options in jobs:
            assert _judge(dataset, config, spec, d / f"{config}.jsonl", *extra, *options) == 0, (name, config)
        rows = {c: _rows(d / f"{c}.jsonl") for _, c, _ in jobs}
        assert all(r["label"] is None for c in ("diagnostic", "samples", "ablations") for r in rows[c])  # free-form
        assert {r["label"] for r in rows["judge"]} <= {"A", "B", None}
        if name == "hf":  # the local runner reads the option probabilities; the server ignores logprobs
            assert all(abs(sum(r["option_probs"].values()) - 1) < 1e-6 for r in rows["judge"])
        fast = ("--n-resamples", "50")
        audits = [["preference", "--data", str(pref), "--judges", f"omni={d / 'judge.jsonl'}", "--no-controls",
                   "--no-source-classifier", *fast],
                  ["interventions", "--dataset", str(iv), "--predictions", str(d / "diagnostic.jsonl"), *fast],
                  ["protocols", "--dataset", str(protocol_dataset), "--predictions", f"omni={d / 'pairwise.jsonl'}",
                   *fast],
                  ["composition", "--dataset", str(comp), "--predictions", f"omni={d / 'samples.jsonl'}",
                   f"omni={d / 'ablations.jsonl'}"]]
        for argv in audits:
            out = d / f"audit-{argv[0]}"
            assert main(["audit", *argv, "--out", str(out)]) == 0, (name, argv[0])
            assert (out / "audit.json").is_file() and (out / "report.md").is_file()
        capsys.readouterr()


def test_the_scorecard_of_a_served_model_is_the_card_of_the_local_one(served, tmp_path, capsys):
    """The tiny omni thinker through the scorecard locally (`hf:`, greedy generation) and behind
    `transformers serve` (`openai:`, the same weights) answers text, image and audio items alike and gives the same
    card. (--min-usable 0: a random model's answers are mostly unreadable, yet they must be the same answers.)"""
    from omniaudit.data_builders.composition import build_composition_dataset
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    server, models = served
    data = {"preference": build_preference_dataset(tmp_path / "pref", spec=SyntheticSpec(n_pairs=24, seed=2)),
            "composition": build_composition_dataset(tmp_path / "comp", n_synthetic=6)}
    common = ["--audits", "preference,composition", "--data", *(f"{a}={p}" for a, p in data.items()),
              "--max-tokens", "8", "--min-usable", "0", "--n-resamples", "200"]
    cards = {}
    for name, spec, extra in (("hf", f"hf:{models['omni']}", ("--mode", "generate")),
                              ("serve", f"openai:{models['omni']}@{server.url}", ("--dialect", "frames",
                                                                                   "--no-cache"))):
        out = tmp_path / name
        assert main(["scorecard", "--model", f"omni={spec}", *common, *extra, "--out", str(out)]) == 0, name
        cards[name] = json.loads((out / "scorecard.json").read_text())
    answers = {name: [r["raw"].strip() for c in ("judge", "samples", "ablations")
                      for r in _rows(tmp_path / name / "models" / "omni" / f"{c}.jsonl")] for name in cards}
    same = sum(a == b for a, b in zip(answers["hf"], answers["serve"], strict=True))
    assert same >= 0.95 * len(answers["hf"]), f"{same} of {len(answers['hf'])} answers agree"
    local, remote = (cards[n]["models"]["omni"] for n in ("hf", "serve"))
    statuses = [{a: e["status"] for a, e in card["audits"].items()} for card in (local, remote)]
    assert statuses[0] == statuses[1]
    for shortcut, verdict in local["shortcuts"].items():
        other = remote["shortcuts"][shortcut]
        assert (verdict["status"], verdict["flagged"]) == (other["status"], other["flagged"]), shortcut
        if verdict["value"] is not None and same == len(answers["hf"]):
            assert verdict["value"] == pytest.approx(other["value"]), shortcut
    capsys.readouterr()
