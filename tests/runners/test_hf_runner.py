"""The local runner ``hf:``: every model family and modality, option scoring, generation, the media cache, refusals.

Tiny random models built offline (text LM, Qwen2-Audio, Qwen2-VL, Qwen2.5-Omni thinker and full checkpoint,
Qwen3-Omni thinker) answer tiny synthetic media: a 2-s clip with its soundtrack, a PNG, a 1-s FLAC.
"""

from __future__ import annotations

import io
import json
import shutil
import warnings

import numpy as np
import pytest
import torch
from media_clips import noise_audio, write_clip

from omniaudit.errors import InputError
from omniaudit.runners import hf as hf_module
from omniaudit.runners.hf import HFJudge
from omniaudit.runners.hf_media import MediaCache
from omniaudit.runners.hf_scoring import nucleus, score_options
from omniaudit.runners.items import JudgeItem, MediaPart


@pytest.fixture(scope="session")
def models(tmp_path_factory, tiny_models):
    """Every family the runner supports, built from configs (about 1 MB each)."""
    from transformers import AutoConfig, AutoProcessor, Qwen2_5OmniConfig, Qwen2_5OmniForConditionalGeneration

    from omniaudit.tiny_models import tiny_omni, tiny_omni3, tiny_vision_lm

    root = tmp_path_factory.mktemp("hf-models")
    paths = {**tiny_models, "omni": tiny_omni(root / "omni"), "omni3": tiny_omni3(root / "omni3"),
             "vl": tiny_vision_lm(root / "vl")}
    # a full Qwen2.5-Omni checkpoint (thinker inside; no talker, so it stays tiny) with its speaker file
    full = Qwen2_5OmniForConditionalGeneration(Qwen2_5OmniConfig(
        thinker_config=AutoConfig.from_pretrained(paths["omni"]).to_dict(), enable_audio_output=False))
    full.save_pretrained(root / "omni_full")
    AutoProcessor.from_pretrained(paths["omni"]).save_pretrained(root / "omni_full")
    torch.save({}, root / "omni_full" / "spk_dict.pt")
    paths["omni_full"] = root / "omni_full"
    # an omni folder whose processor files are missing (tokenizer and weights only)
    shutil.copytree(paths["omni"], root / "omni_noproc")
    (root / "omni_noproc" / "processor_config.json").unlink()
    paths["omni_noproc"] = root / "omni_noproc"
    return paths


@pytest.fixture(scope="session")
def media(tmp_path_factory):
    from PIL import Image

    root = tmp_path_factory.mktemp("hf-media")
    clips = [write_clip(root / f"clip{i}.mp4", seconds=2.0, fps=10, size=(112, 112),
                        audio=noise_audio(2.0, seed=i)).read_bytes() for i in range(2)]
    png = io.BytesIO()
    Image.fromarray((np.random.default_rng(1).random((64, 80, 3)) * 255).astype(np.uint8)).save(png, format="PNG")
    return {"clip": clips[0], "clip2": clips[1], "audio": _flac(noise_audio(1.0, seed=7)), "image": png.getvalue()}


def parts(media, *kinds: str) -> list[MediaPart]:
    make = {"video+audio": lambda: MediaPart("video", media["clip"], "video", True),
            "video+audio2": lambda: MediaPart("video", media["clip2"], "video", True),
            "video": lambda: MediaPart("video", media["clip"], "video", False),
            "audio": lambda: MediaPart("audio", media["audio"], "audio"),
            "image": lambda: MediaPart("image", media["image"], "image")}
    return [make[k]() for k in kinds]


FAMILIES = {"text": (), "audio": ("audio",), "vl": ("image", "video"), "omni": ("image", "audio", "video+audio"),
            "omni3": ("audio", "video+audio", "image")}
OPTIONS = ["sad", "sadness", "happy"]  # "sad" is a prefix of "sadness": they share their first token


def closed(media, kinds, n: int = 2) -> list[JudgeItem]:
    prompts = ["Which emotion does the speaker express?",
               "Which clip has cleaner audio, with less background noise? Answer with A or B only."]
    return [JudgeItem(f"q{i}", prompts[i % 2], OPTIONS if i % 2 == 0 else ["A", "B"], media=parts(media, *kinds),
                      system="You are an expert audio judge." if i == 1 else None, order="AB")
            for i in range(n)]


class Forwards:
    """Counts the model's forward calls and the width of their input_ids."""

    def __init__(self, model) -> None:
        self.widths: list[int] = []
        self.handle = model.register_forward_pre_hook(self.hook, with_kwargs=True)

    def hook(self, module, args, kwargs):
        ids = kwargs.get("input_ids", args[0] if args else None)
        self.widths.append(int(ids.shape[1]))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_option_scores_equal_the_full_sequence_log_probability(models, media, family):
    """The prompt pass + KV-cache continuations give each option's exact log-probability, end of turn included,
    in a left-padded batch (prompts of different lengths), for every family (M-RoPE models too)."""
    judge = HFJudge(models[family], batch_size=4)
    batch = closed(media, FAMILIES[family])
    inputs, extra = judge._encode(batch)
    assert inputs["attention_mask"][0].sum() < inputs["attention_mask"][1].sum()  # row 0 is left-padded
    sequences = [[judge.option_tokens(o) for o in item.options] for item in batch]
    assert all(seq[-len(judge.end_ids):] == judge.end_ids for seqs in sequences for seq in seqs)
    assert judge.tokenizer.convert_ids_to_tokens(judge.end_ids) == ["<|im_end|>"]
    assert ("inputs_embeds" in inputs) == (family == "audio")  # Qwen2-Audio: cached encoder outputs (hf_encoders)
    got = score_options(judge.model, inputs, extra, sequences, judge.pad_id, judge.prefill_kwargs)
    judge.audio_embeddings = None  # the reference runs the model's own audio branch
    for item, seqs, scores in zip(batch, sequences, got, strict=True):
        one, extra1 = judge._encode([item])  # the item alone: no padding
        for seq, score in zip(seqs, scores, strict=True):
            ids = torch.cat([one["input_ids"], torch.tensor([seq])], 1)
            full = {**one, "input_ids": ids, "attention_mask": torch.ones_like(ids)}
            if "mm_token_type_ids" in one:  # Qwen2-VL: option tokens are text
                full["mm_token_type_ids"] = torch.cat([one["mm_token_type_ids"], torch.zeros(1, len(seq))], 1).long()
            with torch.no_grad():
                logp = torch.log_softmax(judge.model(**full, **extra1).logits[0].float(), -1)
            n = len(seq)
            want = float(logp[-n - 1 : -1].gather(-1, torch.tensor(seq)[:, None]).sum())
            assert score == pytest.approx(want, abs=1e-4)


def test_options_sharing_a_first_token_cost_one_prompt_pass(models, media):
    """Two forward passes per batch: the prompts (with media), then all options packed against the KV cache."""
    judge = HFJudge(models["omni"], batch_size=4)
    first = {judge.tokenizer(o, add_special_tokens=False).input_ids[0] for o in ("sad", "sadness")}
    assert len(first) == 1
    items = closed(media, ("audio", "video+audio"))
    forwards = Forwards(judge.model)
    head = []  # positions projected onto the vocabulary per call: only the last one in the prompt pass
    judge.model.get_output_embeddings().register_forward_hook(lambda _m, _a, out: head.append(out.shape[1]))
    answers = judge.answer(items)
    widths = forwards.widths
    assert head[0] == 1
    packed = max(sum(len(judge.option_tokens(o)) - 1 for o in item.options) for item in items)
    assert widths == [widths[0], packed] and widths[0] > 50  # the prompts with their media once, then every option
    for item, answer, probs in zip(items, answers, judge.option_probs, strict=True):
        assert list(probs) == item.options and sum(probs.values()) == pytest.approx(1.0)
        assert answer == max(probs, key=probs.get)


def test_free_form_items_are_generated_never_scored(models, media, monkeypatch):
    judge = HFJudge(models["omni"], batch_size=4, max_new_tokens=6, min_new_tokens=6)
    scored = []
    real = hf_module.score_options
    monkeypatch.setattr(hf_module, "score_options",
                        lambda model, inputs, extra, sequences, *a: scored.append(sequences) or
                        real(model, inputs, extra, sequences, *a))
    free = JudgeItem("free", "How many are there? Answer in one word.", [], media=parts(media, "image", "audio"))
    items = [closed(media, ("image", "audio"), 1)[0], free]
    raws = judge.answer(items)
    assert scored == [[[judge.option_tokens(o) for o in OPTIONS]]]  # only the closed item was scored
    assert judge.option_probs[1] is None and raws[0] in OPTIONS
    inputs, _ = judge._encode([free])  # the free-form answer is the model's own greedy continuation
    with torch.no_grad():
        out = judge.model.generate(**inputs, max_new_tokens=6, min_new_tokens=6, do_sample=False)
    assert raws[1] == judge.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True).strip()
    generated = HFJudge(models["omni"], mode="generate", max_new_tokens=4).answer(items[:1])
    assert isinstance(generated[0], str)


def test_three_questions_on_one_clip_decode_and_featurise_it_once(models, media, monkeypatch):
    from omniaudit import video_window

    decodes = []
    real = video_window.decode_clip
    monkeypatch.setattr(video_window, "decode_clip", lambda data, *a: decodes.append(data) or real(data, *a))
    questions = ["Is the sound synchronized with the picture?", "Is anything silent?", "Does the sound match?"]
    one = [JudgeItem(f"{k}", q, [], media=parts(media, "video+audio")) for k, q in enumerate(questions)]
    other = JudgeItem("other", questions[0], [], media=parts(media, "video+audio2"))
    items = [one[0], other, one[1], one[2]]
    judge = HFJudge(models["omni"], batch_size=2, max_new_tokens=2)
    calls: dict[str, int] = {}

    class Counting:  # the real sub-processor, its calls counted
        def __init__(self, inner, name):
            self.inner, self.name = inner, name

        def __getattr__(self, attr):
            return getattr(self.inner, attr)

        def __call__(self, *args, **kwargs):
            calls[self.name] = calls.get(self.name, 0) + 1
            return self.inner(*args, **kwargs)

    for f in judge.featurizers:
        f.inner = Counting(f.inner, f.name)
    judge.answer(items)
    assert decodes.count(media["clip"]) == 1 and decodes.count(media["clip2"]) == 1
    assert calls == {"feature_extractor": 2, "video_processor": 2}  # one per source: two clips' frames + soundtracks
    assert all(f.uncached_calls == 0 for f in judge.featurizers)
    decodes.clear()
    HFJudge(models["omni"], batch_size=2, max_new_tokens=2, media_cache_bytes=0).answer(items)
    assert decodes.count(media["clip"]) == 3  # no cache: once per question


def test_an_audio_lm_encodes_each_clip_once_and_generates_as_the_model_does(models, media):
    """Qwen2-Audio: its encoder (30-s padded mel) runs once per clip; answers match the model's own audio path."""
    judge = HFJudge(models["audio"], batch_size=2, max_new_tokens=5, min_new_tokens=5)
    runs = []
    judge.model.model.audio_tower.register_forward_hook(lambda _m, args, _out: runs.append(args[0].shape[0]))
    other = JudgeItem("other", "Describe the sound.", [], media=[MediaPart("audio", _flac(noise_audio(1.0, 9)),
                                                                           "audio")])
    items = [JudgeItem(f"q{k}", q, [], media=parts(media, "audio"))
             for k, q in enumerate(["Describe the sound.", "Is anyone speaking?", "Is it noisy?"])]
    raws = judge.answer([items[0], other, items[1], items[2]])
    assert runs == [1, 1]  # two clips, one encoder pass each, whatever the four questions and two batches
    judge.audio_embeddings = None
    inputs, _ = judge._encode(items[:1])
    assert "input_features" in inputs
    with torch.no_grad():
        out = judge.model.generate(**inputs, max_new_tokens=5, min_new_tokens=5, do_sample=False)
    assert raws[0] == judge.tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True).strip()


def _flac(wave: np.ndarray) -> bytes:
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, wave[0], 16000, format="FLAC")
    return buf.getvalue()


def test_a_video_longer_than_the_sampled_window_warns_once(models, media):
    from omniaudit.runners.hf_media import MediaWindowWarning

    items = [JudgeItem(f"w{k}", "Describe the video.", [], media=parts(media, "video+audio")) for k in range(2)]
    with pytest.warns(MediaWindowWarning, match="item 'w0': its video \\(video\\) runs past the 1.0 s") as record:
        HFJudge(models["omni"], fps=2, max_frames=2, max_new_tokens=2, media_cache_bytes=0).answer(items)
    assert len([w for w in record if issubclass(w.category, MediaWindowWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", MediaWindowWarning)
        HFJudge(models["omni"], fps=2, max_frames=4, max_new_tokens=2).answer(items)  # the whole 2-s clip


def test_media_cache_is_a_byte_bounded_lru():
    cache = MediaCache(max_bytes=2000)
    for k in range(5):
        cache.get("decode:audio", (k,), lambda: np.zeros(200, np.float32))  # 800 bytes each
    assert len(cache) == 2 and cache.bytes == 1600 and cache.misses == {"decode:audio": 5}
    cache.get("decode:audio", (4,), lambda: pytest.fail("cached"))
    cache.get("decode:audio", (9,), lambda: np.zeros(1000, np.float32))  # larger than the budget: not kept
    assert len(cache) == 2 and cache.hits == {"decode:audio": 1}
    with pytest.raises(InputError):
        MediaCache(-1)


def test_answers_do_not_depend_on_batching(models, media):
    items = closed(media, ("video+audio",), 3) + [
        JudgeItem("free", "Describe the sound and the picture.", [], media=parts(media, "video+audio2"))]
    runs = []
    for batch_size in (1, 4):
        judge = HFJudge(models["omni3"], batch_size=batch_size, max_new_tokens=4, min_new_tokens=4)
        runs.append((judge.answer(items), judge.option_probs))
    (raw1, probs1), (raw4, probs4) = runs
    assert raw1 == raw4
    for p1, p4 in zip(probs1, probs4, strict=True):
        assert (p1 is None) == (p4 is None)
        if p1:
            assert p1 == pytest.approx(p4, abs=1e-4)


def test_sampling_is_seeded_per_item_not_per_batch(models, media):
    items = [JudgeItem(f"s{k}", "Describe the sound.", [], media=parts(media, "audio")) for k in range(3)]

    def run(batch_size, seed, temperature=1.0, mode="generate"):
        return HFJudge(models["audio"], batch_size=batch_size, max_new_tokens=5, min_new_tokens=5, seed=seed,
                       temperature=temperature, mode=mode).answer(items)

    sampled = run(1, seed=0)
    assert run(3, seed=0) == sampled  # the same item draws the same sample in any batch
    assert run(3, seed=1) != sampled
    assert run(3, seed=0, temperature=0.0) == run(1, seed=5, temperature=0.0)  # greedy ignores the seed
    choice = [JudgeItem(f"c{k}", "Which emotion?", OPTIONS, media=parts(media, "audio")) for k in range(40)]
    judge = HFJudge(models["audio"], batch_size=8, temperature=5.0, seed=3)
    drawn = judge.answer(choice)
    assert judge.answer(choice) == drawn and len(set(drawn)) > 1  # a hot draw varies across items, reproducibly
    greedy = HFJudge(models["audio"])
    greedy.answer(choice[:1])
    assert judge.option_probs[0] == pytest.approx(greedy.option_probs[0])  # probabilities stay the model's own
    assert nucleus(np.array([0.5, 0.3, 0.2]), 0.6).tolist() == pytest.approx([0.625, 0.375, 0.0])


@pytest.mark.parametrize("family, kinds, message", [
    ("vl", ("video+audio",), "takes no video\\+audio"),
    ("text", ("image",), "takes no image \\(it takes only text\\)"),
    ("audio", ("video",), "takes no video \\(it takes only audio\\)"),
    ("omni_noproc", ("audio",), "has a audio input, but the model folder has no processor"),
])
def test_a_modality_the_model_lacks_is_refused_before_any_forward_pass(models, media, family, kinds, message):
    judge = HFJudge(models[family])
    forwards = Forwards(judge.model)
    items = [JudgeItem("fine", "Which emotion?", OPTIONS), JudgeItem("bad-item", "Which emotion?", OPTIONS,
                                                                     media=parts(media, *kinds))]
    with pytest.raises(InputError, match=f"item 'bad-item'.*{message}") as err:
        judge.answer(items)
    assert forwards.widths == []
    if family == "omni_noproc":
        assert str(models[family]) in str(err.value)
        assert judge.answer(items[:1])[0] in OPTIONS  # text-only items still run through its tokenizer


def test_items_a_model_cannot_answer_as_asked_are_refused(models, media):
    judge = HFJudge(models["omni"])
    mixed = JudgeItem("mixed", "?", [], media=[*parts(media, "video+audio"), *parts(media, "video")])
    with pytest.raises(InputError, match="item 'mixed' mixes videos with and without their soundtrack"):
        judge.answer([mixed])
    with pytest.raises(InputError, match="item 'twice' lists an option twice"):
        judge.answer([JudgeItem("twice", "?", ["A", "A"])])
    with pytest.raises(InputError, match="fps > 0 and max_frames >= 2"):
        HFJudge(models["omni"], fps=0)
    corrupt = JudgeItem("corrupt", "?", [], media=[MediaPart("video", media["clip"][:300], "video", True)])
    with pytest.raises(InputError, match="item 'corrupt': its video cannot be decoded") as err:
        judge.answer([corrupt])
    assert err.value.column == "video"


def test_a_full_omni_checkpoint_is_judged_by_its_thinker(models, media):
    judge = HFJudge(models["omni_full"])
    assert type(judge.model).__name__ == "Qwen2_5OmniThinkerForConditionalGeneration"
    assert {"audio", "image", "video", "video+audio"} <= judge.accepts
    assert judge.answer(closed(media, ("video+audio",), 1))[0] in OPTIONS


def test_builders_items_through_run_judge(models, tmp_path):
    """The tiny omni model answers the interventions diagnostic (free-form, video with its soundtrack) and the
    composition samples (free-form, image + audio) through ``run_judge``; progress reaches the end."""
    from omniaudit.data_builders.composition import build_composition_dataset
    from omniaudit.data_builders.interventions import SyntheticClipSpec, build_interventions_dataset
    from omniaudit.runners import load_items, run_judge

    interventions = build_interventions_dataset(tmp_path / "iv", spec=SyntheticClipSpec(n_clips=2, width=96,
                                                                                         height=64))
    composition = build_composition_dataset(tmp_path / "comp", n_synthetic=3)
    for dataset, config in ((interventions, "diagnostic"), (composition, "samples")):
        items = load_items(dataset, config)
        assert any(p.kind == "video" and p.with_audio for it in items for p in it.media) or config == "samples"
        seen = []
        out = tmp_path / f"{config}.jsonl"
        counts = run_judge(dataset, config, f"hf:{models['omni']}", out, progress=seen.append, max_tokens=4,
                           min_usable=0)  # plumbing: the random model writes byte noise, which is no answer
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert counts["items"] == len(rows) == len(items) and seen[-1] == f"{len(items)}/{len(items)}"
        assert [r["id"] for r in rows] == [it.id for it in items]
        assert all(isinstance(r["raw"], str) and r["label"] is None for r in rows)  # free-form: nothing to parse
