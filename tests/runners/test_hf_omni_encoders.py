"""Issue 40: a Qwen2.5-Omni thinker encodes each source's frames and soundtrack once (the media cache), and answers
as it does with its own encoders on every prompt."""

from __future__ import annotations

import pytest
import torch
from media_clips import noise_audio, write_clip

from omniaudit.runners.hf import HFJudge
from omniaudit.runners.hf_scoring import score_options
from omniaudit.runners.items import JudgeItem, MediaPart

QUESTIONS = ["Is the sound synchronized with the picture?", "Describe the audio.", "Describe what you see and hear."]


@pytest.fixture(scope="module")
def omni(tmp_path_factory):
    from omniaudit.tiny_models import tiny_omni

    root = tmp_path_factory.mktemp("omni-encoders")
    clips = [write_clip(root / f"clip{i}.mp4", seconds=2.0, fps=10, size=(112, 112),
                        audio=noise_audio(2.0, seed=i)).read_bytes() for i in range(2)]
    items = [JudgeItem(f"c{c}/q{q}", question, [], media=[MediaPart("video", clip, "video", True)])
             for q, question in enumerate(QUESTIONS) for c, clip in enumerate(clips)]  # question-major
    return tiny_omni(root / "omni"), items


def _own_encoders(judge: HFJudge) -> HFJudge:
    judge.omni_encoders = None  # nothing registered: every call runs the model's own method
    return judge


def test_each_source_is_encoded_once_and_the_answers_are_the_models_own(omni):
    path, items = omni
    judge = HFJudge(path, batch_size=4, mode="generate", max_new_tokens=4, min_new_tokens=4)
    calls = {"visual": 0, "audio": 0}
    judge.model.model.visual.register_forward_hook(lambda *_: calls.__setitem__("visual", calls["visual"] + 1))
    judge.model.model.audio_tower.register_forward_hook(lambda *_: calls.__setitem__("audio", calls["audio"] + 1))
    answers = judge.answer(items)
    assert calls == {"visual": 2, "audio": 2}  # two clips, three questions each, two batches
    assert judge.cache.misses["encoder:video"] == 2 and judge.cache.hits["encoder:video"] == 4
    reference = _own_encoders(HFJudge(path, batch_size=4, mode="generate", max_new_tokens=4, min_new_tokens=4))
    assert answers == reference.answer(items)
    uncached = HFJudge(path, batch_size=4, mode="generate", max_new_tokens=4, min_new_tokens=4, media_cache_bytes=0)
    assert uncached.omni_encoders is None and uncached.answer(items) == answers  # no cache: the model's own path


def test_option_scores_and_logits_equal_the_models_own_encoders(omni):
    path, items = omni
    closed = [JudgeItem(it.id, it.prompt, ["yes", "no"], media=it.media) for it in items]
    judge, reference = HFJudge(path, batch_size=6), _own_encoders(HFJudge(path, batch_size=6))
    inputs, extra = judge._encode(closed)
    ref_inputs, ref_extra = reference._encode(closed)
    with torch.no_grad():
        torch.testing.assert_close(judge.model(**inputs, **extra).logits,
                                   reference.model(**ref_inputs, **ref_extra).logits, atol=1e-5, rtol=1e-5)
    sequences = [[judge.option_tokens(o) for o in item.options] for item in closed]
    got = score_options(judge.model, *judge._encode(closed), sequences, judge.pad_id, judge.prefill_kwargs)
    want = score_options(reference.model, *reference._encode(closed), sequences, reference.pad_id,
                         reference.prefill_kwargs)
    for a, b in zip(got, want, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_tensors_it_was_not_told_about_run_the_models_own_encoders(omni):
    path, items = omni
    judge = HFJudge(path, batch_size=2)
    inputs, extra = judge._encode(items[:2])
    copied = {k: v.clone() if k in ("pixel_values_videos", "input_features") else v for k, v in inputs.items()}
    before = dict(judge.cache.misses)
    with torch.no_grad():
        judge.model(**copied, **extra)  # other tensor objects: not the registered batch
    assert judge.cache.misses == before
