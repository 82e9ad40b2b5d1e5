"""The omni collators on real-world timing: streams that do not start at 0 s, truncation, the sampled window; and
the extras that decoding and QLoRA need (torchcodec behind `datasets`, bitsandbytes)."""

from __future__ import annotations

import io
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
av = pytest.importorskip("av")

from omniaudit.errors import InputError  # noqa: E402
from omniaudit.training.collators import (  # noqa: E402
    MediaWindowWarning,
    OmniDPOCollator,
    OmniSFTCollator,
    decode_clip,
    decode_video,
    event_times,
)

RATE = 16000
CLIP_FPS = 10  # frame i is grey level 8 * i, so a sampled frame tells which source frame it is


def offset_clip(video_start: float = 1.0, audio_start: float = 0.0, seconds: float = 3.0, audio_seconds: float = 5.0,
                clicks: tuple[float, ...] = (2.5, 4.5), container: str = "mp4", vcodec: str = "libx264",
                acodec: str = "aac", rate: int = RATE) -> bytes:
    """A clip whose streams start at ``video_start`` / ``audio_start`` on the container's clock, with 16-sample clicks
    at the container times ``clicks`` (silence elsewhere); the video lasts ``seconds``, the audio ``audio_seconds``."""
    buf = io.BytesIO()
    with av.open(buf, "w", format=container) as out:
        v = out.add_stream(vcodec, rate=CLIP_FPS)
        v.width, v.height, v.pix_fmt = 64, 48, "yuv420p"
        v.codec_context.thread_count = 1
        a = out.add_stream(acodec, rate=rate, layout="mono")
        for i in range(int(round(seconds * CLIP_FPS))):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), 8 * i, np.uint8), format="rgb24")
            frame.pts = i + int(round(video_start * CLIP_FPS))
            for p in v.encode(frame):
                out.mux(p)
        for p in v.encode(None):
            out.mux(p)
        y = np.zeros((1, int(audio_seconds * rate)), np.float32)
        for c in clicks:
            k = int(round((c - audio_start) * rate))
            y[0, k : k + 16] = 0.9
        frame = av.AudioFrame.from_ndarray(y, format="fltp", layout="mono")
        frame.sample_rate, frame.pts = rate, int(round(audio_start * rate))
        for p in a.encode(frame):
            out.mux(p)
        for p in a.encode(None):
            out.mux(p)
    return buf.getvalue()


@pytest.mark.parametrize("video_start,audio_start,container,vcodec,acodec,rate", [
    (1.0, 0.0, "mp4", "libx264", "aac", RATE),  # video starts 1.0 s into the file, audio at 0
    (1.0, 1.0, "mp4", "libx264", "aac", RATE),  # both at 1.0 s (how the interventions builder writes such a clip)
    (0.0, 0.5, "matroska", "libx264", "flac", RATE),  # audio starts late: silence before it
    (1.0, 0.0, "webm", "libvpx-vp9", "libopus", 48000),  # VP9 + Opus in WebM, 48 kHz audio
])
def test_frames_and_audio_stay_in_sync_on_the_video_streams_timeline(video_start, audio_start, container, vcodec,
                                                                      acodec, rate):
    click = video_start + 1.5  # on the container's clock; 1.5 s after the first frame
    late = video_start + 3.5  # after the video's end: must not be heard
    data = offset_clip(video_start, audio_start, clicks=(click, late), container=container, vcodec=vcodec,
                       acodec=acodec, rate=rate)
    clip = decode_clip(data, fps=2.0, max_frames=16, audio_rate=RATE)
    assert clip.video_start == pytest.approx(video_start) and clip.n_sampled == 6
    # frame k is the picture shown k / fps after the first frame: source frame 5k, grey level 40k (+- codec error)
    grey = clip.frames[:, 24, 32].mean(axis=1)
    np.testing.assert_allclose(grey, 40 * np.arange(6), atol=4)
    # the click 1.5 s after the first frame is at sample 1.5 * rate, i.e. with frame 3 (+- 2 ms of codec smear)
    assert abs(int(np.argmax(np.abs(clip.audio))) - int(1.5 * RATE)) <= 0.002 * RATE
    assert clip.audio.shape == (3 * RATE,)  # exactly the clip: no overrun into the track's tail
    assert np.abs(clip.audio[: int(1.4 * RATE)]).max() < 0.05  # silence before the click (late start padded)


def test_audio_never_runs_past_the_clip_when_a_frame_is_repeated():
    data = offset_clip(1.0, 0.0, clicks=(2.5, 4.5))  # 3 s of video from 1.0 s; audio to 5.0 s, a click at 4.5 s
    frames, audio = decode_video(data, fps=1.0, max_frames=16, audio_rate=RATE)
    # 1 fps over 3 s: frames at 0, 1, 2 s (source frames 0, 10, 20), the last repeated for the temporal pair
    np.testing.assert_allclose(frames[:, 24, 32].mean(axis=1), [0, 80, 160, 160], atol=4)
    assert audio.shape == (3 * RATE,)  # 3 s of clip, not the 4 s the four frames span (no 4.5 s click)
    assert abs(int(np.argmax(np.abs(audio))) - int(1.5 * RATE)) <= 0.002 * RATE
    frames, audio = decode_video(data, fps=2.0, max_frames=3, audio_rate=RATE)  # the window: 3 frames at 2 fps
    assert frames.shape[0] == 4 and audio.shape == (int(1.5 * RATE),)


def test_a_file_without_video_is_refused_naming_the_example(omni_processor):
    buf = io.BytesIO()
    with av.open(buf, "w", format="matroska") as out:
        a = out.add_stream("flac", rate=RATE, layout="mono")
        frame = av.AudioFrame.from_ndarray(np.zeros((1, RATE), np.float32), format="fltp", layout="mono")
        frame.sample_rate, frame.pts = RATE, 0
        for p in [*a.encode(frame), *a.encode(None)]:
            out.mux(p)
    row = sft_row("clip-7/original/sync", buf.getvalue())
    with pytest.raises(InputError, match="clip-7/original/sync.*no video stream"):
        OmniSFTCollator(omni_processor, fps=1.0, max_frames=4)([row])
    with pytest.raises(InputError, match="clip-8.*cannot decode"):
        OmniSFTCollator(omni_processor, fps=1.0, max_frames=4)([sft_row("clip-8", b"\x00" * 4096)])


# ---- through the collators, with the tiny Qwen2.5-Omni processor -------------------------------------------------

@pytest.fixture(scope="module")
def omni_processor(tmp_path_factory):
    from transformers import AutoProcessor

    from omniaudit.tiny_models import tiny_omni

    return AutoProcessor.from_pretrained(tiny_omni(tmp_path_factory.mktemp("omni") / "omni"))


@pytest.fixture(scope="module")
def clip_bytes():
    return offset_clip(1.0, 0.0, clicks=(2.5,))


def message(role: str, text: str, video: bool = False) -> list[dict]:
    return [{"role": role, "content": ([{"type": "video", "text": None}] if video else [])
             + [{"type": "text", "text": text}]}]


def sft_row(row_id: str, data: bytes, answer: str = "The audio is synchronized with the video.",
            question: str = "Is the sound synchronized with what you see?", **extra) -> dict:
    return {"id": row_id, "messages": message("user", question, True) + message("assistant", answer),
            "video": {"bytes": data, "path": "clip.mp4"}, **extra}


def dpo_row(row_id: str, data: bytes, **extra) -> dict:
    return {"id": row_id, "prompt": message("user", "Is the sound synchronized with what you see?", True),
            "chosen": message("assistant", "The audio is synchronized with the video."),
            "rejected": message("assistant", "It is delayed."), "video": {"bytes": data, "path": "clip.mp4"},
            **extra}


def test_the_collator_feeds_the_offset_clip_on_its_own_timeline(omni_processor, clip_bytes):
    batch = OmniSFTCollator(omni_processor, fps=2.0, max_frames=16)([sft_row("a", clip_bytes)])
    assert batch["video_grid_thw"][0, 0].item() == 3  # 6 frames over the 3 s clip, in temporal pairs
    # 3 s of audio (100 feature frames per second), not the 5 s track nor a window running past the clip
    assert int(batch["feature_attention_mask"].sum()) == 300


def test_truncation_that_leaves_no_answer_token_is_an_error_naming_the_row(omni_processor, clip_bytes):
    media_ids = torch.tensor(sorted(OmniSFTCollator(omni_processor).media_ids))
    full = OmniSFTCollator(omni_processor, fps=1.0, max_frames=4)([sft_row("r1", clip_bytes)])
    ids, labels = full["input_ids"][0], full["labels"][0]
    answer_start = int(torch.nonzero(labels != -100).min())
    last_media = int(torch.nonzero(torch.isin(ids, media_ids)).max()) + 1
    assert last_media < answer_start
    kept = OmniSFTCollator(omni_processor, fps=1.0, max_frames=4, max_length=answer_start + 2)([sft_row("r1",
                                                                                                       clip_bytes)])
    assert kept["input_ids"].shape[1] == answer_start + 2 and int((kept["labels"] != -100).sum()) == 2
    with pytest.raises(InputError, match="example 'clip-3/shift_\\+1/sync'.*leaves no answer token"):
        OmniSFTCollator(omni_processor, fps=1.0, max_frames=4, max_length=answer_start)(  # the 1st row still fits
            [sft_row("r0", clip_bytes, question="Synced?"), sft_row("clip-3/shift_+1/sync", clip_bytes)])
    with pytest.raises(InputError, match="example 'p2'.*leaves no chosen answer token"):
        OmniDPOCollator(omni_processor, fps=1.0, max_frames=4, max_length=answer_start)([dpo_row("p2", clip_bytes)])


def test_dpo_truncation_keeping_part_of_each_answer_still_trains(omni_processor, clip_bytes):
    full = OmniDPOCollator(omni_processor, fps=1.0, max_frames=4)([dpo_row("p1", clip_bytes)])
    start = int(torch.nonzero(full["completion_mask"][0]).min())
    cut = OmniDPOCollator(omni_processor, fps=1.0, max_frames=4, max_length=start + 1)([dpo_row("p1", clip_bytes)])
    assert cut["completion_mask"].sum(1).tolist() == [1, 1]  # one token of the chosen and of the rejected answer


def test_a_window_that_ends_before_the_annotated_event_warns_naming_the_row(omni_processor, clip_bytes):
    collator = OmniSFTCollator(omni_processor, fps=1.0, max_frames=2)  # 2 s of a 3 s clip
    with warnings.catch_warnings():
        warnings.simplefilter("error", MediaWindowWarning)  # inside the window: no warning
        collator([sft_row("in", clip_bytes, visual_time=1.5, audio_time=1.5, intervention="original", offset_s=0.0),
                  sft_row("muted", clip_bytes, visual_time=1.5, audio_time=2.5, intervention="mute", offset_s=0.0)])
    with pytest.warns(MediaWindowWarning, match=r"example 'c/shift_\+1/sync': the annotated sound at 2\.50 s"):
        collator([sft_row("c/shift_+1/sync", clip_bytes, visual_time=1.5, audio_time=1.5, intervention="shift",
                          offset_s=1.0)])
    with pytest.warns(MediaWindowWarning, match="example 'late'.*sight at 2.40 s and the annotated sound at 2.40 s"):
        OmniDPOCollator(omni_processor, fps=1.0, max_frames=2)([dpo_row("late", clip_bytes, visual_time=2.4,
                                                                         audio_time=2.4)])
    with warnings.catch_warnings():  # once per example, not at every epoch
        warnings.simplefilter("error", MediaWindowWarning)
        collator([sft_row("c/shift_+1/sync", clip_bytes, visual_time=1.5, audio_time=1.5, intervention="shift",
                          offset_s=1.0)])


def test_event_times_follow_the_intervention():
    assert event_times({"visual_time": 1.0, "audio_time": 1.2, "intervention": "shift", "offset_s": -0.5}) == {
        "sight": 1.0, "sound": pytest.approx(0.7)}
    assert event_times({"visual_time": 1.0, "audio_time": 1.2, "intervention": "mute"}) == {"sight": 1.0}
    assert event_times({"visual_time": None, "audio_time": float("nan")}) == {}
    assert event_times({"id": "no annotation"}) == {}


# ---- extras: torchcodec behind `datasets`, bitsandbytes for QLoRA -----------------------------------------------

def _ffmpeg_libraries() -> str | None:
    """None when torchcodec loads its FFmpeg libraries, else why not (torchcodec itself must be installed)."""
    import torchcodec  # noqa: F401  ([train] and [decode] install it: a missing package is a failure, not a skip)

    try:
        from torchcodec.decoders import AudioDecoder  # noqa: F401
    except (RuntimeError, OSError) as exc:  # torchcodec raises RuntimeError when the libav* libraries are missing
        return f"torchcodec cannot load the system FFmpeg libraries (apt-get install ffmpeg): {exc}"[:400]
    return None


def test_an_audio_and_a_video_cell_of_a_built_dataset_decode_through_datasets(protocol_dataset,
                                                                             intervention_dataset):
    reason = _ffmpeg_libraries()
    if reason:
        pytest.skip(reason)
    import datasets
    import soundfile as sf

    ds = datasets.load_dataset(str(protocol_dataset), "blueprint", split="train")
    samples = ds[0]["audio_1"].get_all_samples()  # torchcodec, as any user indexing the row gets it
    raw = ds.cast_column("audio_1", datasets.Audio(decode=False))[0]["audio_1"]["bytes"]
    reference, rate = sf.read(io.BytesIO(raw), dtype="float32")  # the embedded WAV read independently
    assert samples.sample_rate == rate and tuple(samples.data.shape) == (1, len(reference)) and len(reference) > rate
    np.testing.assert_allclose(samples.data.numpy()[0], reference, atol=1e-6)
    clips = datasets.load_dataset(str(intervention_dataset), "sft", split="train")
    video = clips[0]["video"]
    data = clips.cast_column("video", datasets.Video(decode=False))[0]["video"]["bytes"]
    with av.open(io.BytesIO(data)) as c:
        n_frames = sum(1 for _ in c.decode(video=0))
    assert video.metadata.num_frames == n_frames > 0
    assert tuple(video.get_frame_at(n_frames // 2).data.shape)[0] == 3  # (C, H, W) uint8 pixels


def test_qlora_loads_a_tiny_model_in_4bit_and_trains_its_adapter_on_cpu(tmp_path):
    import bitsandbytes as bnb  # [train] installs it: QLoRA is documented
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM
    from trl import ModelConfig

    from omniaudit.tiny_models import tiny_causal_lm
    from omniaudit.training.common import model_kwargs

    path = tiny_causal_lm(tmp_path / "lm")
    model = AutoModelForCausalLM.from_pretrained(path, **model_kwargs(ModelConfig(model_name_or_path=str(path),
                                                                                  load_in_4bit=True)))
    assert any(isinstance(m, bnb.nn.Linear4bit) for m in model.modules())
    model = get_peft_model(prepare_model_for_kbit_training(model),
                           LoraConfig(r=4, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    ids = torch.tensor([[1, 5, 9, 12, 2]])
    model(input_ids=ids, labels=ids).loss.backward()
    grads = [p.grad for n, p in model.named_parameters() if "lora_" in n and p.grad is not None]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)


def test_a_built_dataset_from_a_clip_starting_at_1s_reaches_the_model_in_sync(tmp_path, omni_processor):
    """Builder + collator: the source video starts 1.0 s into its file; the annotated sound (1.5 s after the first
    frame) must stay at 1.5 s in the Original and move to 2.5 s in the +1 s Shift, as the answers say."""
    import json

    import pyarrow.parquet as pq

    from omniaudit.data_builders.interventions import InterventionBuildOptions, build_interventions_dataset

    rows = []
    for i, click in enumerate((2.5, 2.0)):  # container times: 1.5 s and 1.0 s after the first frame
        (tmp_path / f"c{i}.mp4").write_bytes(offset_clip(1.0, 0.0, clicks=(click,)))
        rows.append({"id": f"c{i}", "video": f"c{i}.mp4", "category": f"k{i}", "visual_time": click - 1.0,
                     "audio_time": click - 1.0})
    manifest = tmp_path / "clips.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = build_interventions_dataset(tmp_path / "ds", manifest, InterventionBuildOptions(shifts=(1.0,)))
    sft = {r["id"]: r for r in pq.read_table(sorted((out / "sft").glob("*.parquet"))).to_pylist()}
    shifted = next(r for key, r in sft.items() if key.startswith("c0/shift") and key.endswith("/sync"))
    for row, heard_at in ((sft["c0/original/sync"], 1.5), (shifted, 2.5)):
        clip = decode_clip(row["video"]["bytes"], fps=2.0, max_frames=16, audio_rate=RATE)
        assert clip.video_start == pytest.approx(1.0)
        assert abs(int(np.argmax(np.abs(clip.audio))) - int(heard_at * RATE)) <= 0.003 * RATE, row["id"]
        np.testing.assert_allclose(clip.frames[:, 24, 32].mean(axis=1), 40 * np.arange(6), atol=4)
        assert row["audio_time"] == pytest.approx(1.5) and event_times(row)["sound"] == pytest.approx(heard_at)
    expected = re.escape(f"example '{shifted['id']}': the annotated sound at 2.50 s")
    with pytest.warns(MediaWindowWarning, match=expected):
        OmniSFTCollator(omni_processor, fps=1.0, max_frames=2)([shifted])


def test_variable_frame_rate_frames_are_the_pictures_shown_at_each_instant(tmp_path):
    from media_clips import write_clip

    path = write_clip(tmp_path / "vfr.mp4", seconds=3.0, fps=25, vfr=True)  # frames 30 or 50 ms apart
    with av.open(str(path)) as c:  # reference: every frame with its time; the one shown at t is the last at or before
        decoded = [(float(f.pts * f.time_base), f.to_ndarray(format="rgb24")) for f in c.decode(video=0)]
    times = np.array([t for t, _ in decoded]) - decoded[0][0]
    clip = decode_clip(path.read_bytes(), fps=4.0, max_frames=64, audio_rate=RATE)
    assert clip.n_sampled == int(np.ceil(clip.video_end * 4.0 - 1e-9)) and clip.n_sampled > 4
    for k in range(clip.n_sampled):
        shown = int(np.searchsorted(times, k / 4.0 + 1e-6, side="right")) - 1
        np.testing.assert_array_equal(clip.frames[k], decoded[shown][1])


def test_window_warnings_name_each_example_once_and_stop_after_a_cap(omni_processor, clip_bytes):
    from omniaudit.training.collators import MAX_WINDOW_WARNINGS

    collator = OmniSFTCollator(omni_processor, fps=1.0, max_frames=2)
    clip = decode_clip(clip_bytes, 1.0, 2, RATE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(MAX_WINDOW_WARNINGS + 5):
            collator._check_window({"id": f"r{i}", "audio_time": 2.5}, clip)
    messages = [str(w.message) for w in caught if w.category is MediaWindowWarning]
    assert len(messages) == MAX_WINDOW_WARNINGS and messages[0].startswith("example 'r0'")
    assert "further ones are not reported" in messages[-1]


@pytest.mark.parametrize("kwargs", [{"fps": 0.0}, {"fps": float("nan")}, {"max_frames": 0}, {"max_length": 0}])
def test_a_collator_refuses_an_empty_window(omni_processor, kwargs):
    with pytest.raises(InputError, match="expected fps > 0, max_frames >= 1"):
        OmniSFTCollator(omni_processor, **kwargs)
