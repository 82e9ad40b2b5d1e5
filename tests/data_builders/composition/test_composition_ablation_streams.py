"""Review: each C3PO bypass ablation changes only its own modality.

``blank_video`` and ``mute_audio`` turned a 5.1 soundtrack into stereo (the decoder's default down-mix, re-encoded as
stereo AAC). Now ``blank_video`` copies the soundtrack packet for packet and ``mute_audio`` writes digital silence with
the source's codec, channels, layout, sample rate, start and duration, copying the video stream. Every fact is read
back with PyAV from the built dataset's bytes.
"""

import io
import json

import av
import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from media_clips import write_av

from omniaudit.data_builders.composition import build_composition_dataset

ROW = {"template_id": "T", "template_name": "T", "category": "CC", "tier": 1, "question": "q", "answer": "a",
       "evidence_modality": "audio", "generation_confidence": 5, "auditor_decision": "ACCEPT", "difficulty": 6}


def audio_facts(path):
    """What a model's loader sees of the first audio stream: codec, channels, layout, rate, start and duration (s)."""
    with av.open(str(path)) as c:
        a = c.streams.audio[0]
        return {"codec": a.codec_context.name, "channels": a.channels, "layout": a.layout.name, "rate": a.rate,
                "start": float(a.start_time * a.time_base), "duration": float(a.duration * a.time_base)}


def packets(path, kind):
    """(bytes, pts) of every packet of the first stream of ``kind``, in stream order."""
    with av.open(str(path)) as c:
        stream = getattr(c.streams, kind)[0]
        return [(bytes(p), p.pts) for p in c.demux(stream) if p.size]


def frame_times(path):
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        return sorted(float(p.pts * p.time_base) for p in c.demux(stream) if p.size)


def decoded_audio(path):
    """Every decoded sample, in the stream's own layout (no down-mix): (channels, n); AAC decodes to planar floats."""
    with av.open(str(path)) as c:
        frames = list(c.decode(audio=0))
    assert all(f.format.name == "fltp" for f in frames)
    return np.concatenate([f.to_ndarray() for f in frames], axis=1)


def ablations(tmp_path, **media):
    (tmp_path / "s.jsonl").write_text(json.dumps({**ROW, "id": "s1", **media}) + "\n")
    out = build_composition_dataset(tmp_path / "ds", tmp_path / "s.jsonl")
    return pd.read_parquet(next((out / "ablations").glob("*.parquet"))).set_index("ablation")


@pytest.fixture(scope="module", params=[("5.1", 48000), ("mono", 44100)], ids=["5.1-48k", "mono-44.1k"])
def video_sample(request, tmp_path_factory):
    """(source clip, its audio facts, blank_video clip, mute_audio clip) of a 1 s video with its own soundtrack."""
    layout, rate = request.param
    tmp = tmp_path_factory.mktemp("ablate")
    src = write_av(tmp / "v.mp4", seconds=1.0, layout=layout, rate=rate)
    before = audio_facts(src)
    assert (before["channels"], before["layout"], before["rate"]) == (len(av.AudioLayout(layout).channels), layout,
                                                                      rate)
    table = ablations(tmp, video="v.mp4")
    (tmp / "blank.mp4").write_bytes(table.loc["blank_video", "video"]["bytes"])
    (tmp / "muted.mp4").write_bytes(table.loc["mute_audio", "video"]["bytes"])
    return src, before, tmp / "blank.mp4", tmp / "muted.mp4"


def test_blank_video_copies_the_soundtrack(video_sample):
    src, before, blank, _ = video_sample
    assert audio_facts(blank) == before  # was stereo for a 5.1 source
    assert packets(blank, "audio") == packets(src, "audio")  # copied packet for packet, not re-encoded
    with av.open(str(blank)) as c:
        assert next(c.decode(video=0)).to_ndarray(format="rgb24").max() <= 20  # black
    assert frame_times(blank) == frame_times(src)  # at the source's frame times, so the copied audio stays in sync


def test_mute_audio_keeps_the_soundtracks_layout_rate_and_duration(video_sample):
    src, before, _, muted = video_sample
    assert audio_facts(muted) == before  # same codec, channels, layout, rate, start and duration (was stereo)
    silence = decoded_audio(muted)
    assert silence.shape[0] == before["channels"] and np.abs(silence).max() == 0
    assert np.abs(decoded_audio(src)).max() > 0.1
    assert packets(muted, "video") == packets(src, "video")  # the pictures copied packet for packet


def write_wav(path, layout, rate, seconds=0.5):
    """A PCM WAV in ``layout`` (WAVE_FORMAT_EXTENSIBLE with its channel mask), distinct noise per channel."""
    n = len(av.AudioLayout(layout).channels)
    data = (np.random.default_rng(0).uniform(-0.3, 0.3, (n, int(seconds * rate))) * 32767).astype(np.int16)
    with av.open(str(path), "w", format="wav") as out:
        s = out.add_stream("pcm_s16le", rate=rate, layout=layout)
        frame = av.AudioFrame.from_ndarray(data, format="s16p", layout=layout)
        frame.sample_rate, frame.pts = rate, 0
        for p in [*s.encode(frame), *s.encode(None)]:
            out.mux(p)
    return path


@pytest.mark.parametrize(("layout", "rate", "fmt"), [("5.1", 48000, "wav"), ("mono", 44100, "flac")])
def test_mute_audio_keeps_the_audio_files_layout_rate_length_and_format(tmp_path, layout, rate, fmt):
    src = tmp_path / f"a.{fmt}"
    if fmt == "wav":
        write_wav(src, layout, rate)
    else:
        sf.write(src, np.random.default_rng(1).uniform(-0.3, 0.3, int(0.5 * rate)), rate, format="FLAC")
    table = ablations(tmp_path, audio=src.name)
    muted = tmp_path / f"muted.{fmt}"
    muted.write_bytes(table.loc["mute_audio", "audio"]["bytes"])
    info, orig = sf.info(str(muted)), sf.info(str(src))
    assert (info.format, info.subtype, info.channels, info.samplerate, info.frames) == (
        orig.format, orig.subtype, orig.channels, orig.samplerate, orig.frames)
    with av.open(str(muted)) as c:
        assert c.streams.audio[0].layout.name == layout  # was "6 channels": the 5.1 channel mask was dropped
    data, _ = sf.read(io.BytesIO(muted.read_bytes()))
    assert data.size and np.abs(data).max() == 0
