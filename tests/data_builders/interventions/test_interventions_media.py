"""Media operations: every output is decoded again and measured (shift lag, silence, swap, SNR, packets, length)."""

import numpy as np
import pytest
from media_clips import RATE, layout_audio, noise_audio, write_av, write_clip, write_image, write_truncated

from omniaudit.data_builders.interventions import audio_edits, media
from omniaudit.errors import InputError


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    d = tmp_path_factory.mktemp("media")
    return {"a": write_clip(d / "a.mp4", audio=noise_audio(3.0, 0)),
            "b": write_clip(d / "b.mp4", audio=noise_audio(3.0, 1))}


def lag_seconds(y: np.ndarray, x: np.ndarray, rate: int) -> float:
    """Lag of y against x by full cross-correlation (positive: y is later)."""
    spec = np.fft.rfft(y, 2 * x.size) * np.conj(np.fft.rfft(x, 2 * x.size))
    corr = np.fft.irfft(spec)
    k = int(np.argmax(corr))
    return (k if k < x.size else k - 2 * x.size) / rate


def reread(path):
    info = media.probe(path)
    return info, media.timeline_audio(info)[0]


@pytest.mark.parametrize("offset", [1.0, -1.0, 0.37, -2.5])
def test_shift_is_measured_back_and_keeps_video_and_duration(clips, tmp_path, offset):
    info = media.probe(clips["a"])
    audio, _ = media.timeline_audio(info)
    out = media.write_with_audio(info, tmp_path / "s.mp4", audio_edits.shift(audio, RATE, offset), RATE)
    info2, shifted = reread(out)
    assert abs(lag_seconds(shifted[0], audio[0], RATE) - offset) <= 1 / RATE  # within one sample
    assert shifted.shape == audio.shape and info2.duration == info.duration
    assert media.video_packets(out) == media.video_packets(clips["a"])


def test_shift_pads_with_digital_silence_and_rejects_offsets_longer_than_the_clip():
    x = np.ones((1, 100), np.float32)
    assert audio_edits.shift(x, 10, 2.0)[0, :20].sum() == 0 and audio_edits.shift(x, 10, -2.0)[0, -20:].sum() == 0
    with pytest.raises(InputError, match="not shorter than the clip"):
        audio_edits.shift(x, 10, 10.0)


def test_mute_is_exact_silence_of_the_same_length(clips, tmp_path):
    info = media.probe(clips["a"])
    audio, _ = media.timeline_audio(info)
    out = media.write_with_audio(info, tmp_path / "m.mp4", audio_edits.mute(audio), RATE)
    info2, muted = reread(out)
    assert float(np.sqrt(np.mean(muted**2))) == 0.0 and muted.shape == audio.shape
    assert info2.audio_rate == RATE and media.video_packets(out) == media.video_packets(clips["a"])


def test_swap_carries_the_partner_audio_bit_exact_with_alac(clips, tmp_path):
    info, partner = media.probe(clips["a"]), media.probe(clips["b"])
    donor, _ = media.timeline_audio(partner, RATE, 1)
    out = media.write_with_audio(info, tmp_path / "w.mp4", donor, RATE, codec="alac")
    _, got = reread(out)
    assert np.abs(got - donor).max() <= 1 / 32768  # 16-bit storage
    own, _ = media.timeline_audio(info)
    aac = media.write_with_audio(info, tmp_path / "w2.mp4", donor, RATE)
    _, lossy = reread(aac)
    assert np.corrcoef(lossy[0], donor[0])[0, 1] > 0.99 and abs(np.corrcoef(lossy[0], own[0])[0, 1]) < 0.1


def test_noise_snr_is_exact_before_storage_and_survives_lossless_storage(clips, tmp_path):
    info = media.probe(clips["a"])
    audio, _ = media.timeline_audio(info)
    for snr in (0.0, 10.0, -5.0):
        noisy = audio_edits.add_noise(audio, snr, np.random.default_rng(0))
        assert audio_edits.snr_db(audio, noisy) == pytest.approx(snr, abs=1e-6)
    noisy = audio_edits.add_noise(audio, 0.0, np.random.default_rng(0))
    _, stored = reread(media.write_with_audio(info, tmp_path / "n.mp4", noisy, RATE, codec="alac"))
    assert audio_edits.snr_db(audio, stored) == pytest.approx(0.0, abs=0.01)
    with pytest.raises(InputError, match="silent"):
        audio_edits.add_noise(np.zeros((1, 10), np.float32), 0.0, np.random.default_rng(0))


def test_concat_with_tone_places_a_880_hz_tone_between_the_clips():
    a, b = noise_audio(1.0, 0), noise_audio(0.5, 1)
    y = audio_edits.concat_with_tone(a, b, RATE)
    n_tone = int(0.6 * RATE)
    assert y.shape == (1, a.shape[1] + n_tone + b.shape[1])
    gap = y[0, a.shape[1] : a.shape[1] + n_tone]
    assert np.argmax(np.abs(np.fft.rfft(gap))) * RATE / n_tone == pytest.approx(880, abs=2)
    np.testing.assert_array_equal(y[:, -b.shape[1] :], b)


def test_concat_clips_makes_one_video_clip_tone_clip(clips, tmp_path):
    out = media.concat_clips(clips["a"], clips["b"], tmp_path / "c.mp4")
    info = media.probe(out)
    assert info.duration == pytest.approx(3.0 + 0.6 + 3.0, abs=0.05) and info.audio_channels == 2
    audio, _ = media.timeline_audio(info, 48000, 1)
    gap = audio[0, int(3.05 * 48000) : int(3.55 * 48000)]
    spectrum = np.abs(np.fft.rfft(gap))
    assert np.argmax(spectrum) * 48000 / gap.size == pytest.approx(880, abs=3)


def test_audio_starting_late_is_placed_on_the_video_timeline(tmp_path):
    src = noise_audio(2.5, 4)
    info = media.probe(write_clip(tmp_path / "late.mp4", audio=src, audio_start=0.5))
    audio, pad = media.timeline_audio(info)
    assert audio.shape[1] == 3 * RATE and pad == 0.0
    assert lag_seconds(audio[0], np.pad(src[0], (0, RATE // 2)), RATE) == pytest.approx(0.5, abs=1 / RATE)


def test_short_audio_is_padded_and_reported(tmp_path):
    info = media.probe(write_clip(tmp_path / "short.mp4", audio=noise_audio(1.0, 5)))
    audio, pad = media.timeline_audio(info)
    assert audio.shape[1] == 3 * RATE and pad == pytest.approx(2.0, abs=0.1)
    assert np.abs(audio[0, int(1.2 * RATE) :]).max() == 0.0


def test_variable_frame_rate_is_detected_and_copied_unchanged(tmp_path):
    src = write_clip(tmp_path / "vfr.mp4", vfr=True)
    info = media.probe(src)
    assert info.variable_frame_rate
    audio, _ = media.timeline_audio(info)
    out = media.write_with_audio(info, tmp_path / "vfr_mute.mp4", audio_edits.mute(audio), RATE)
    assert media.video_packets(out) == media.video_packets(src) and media.probe(out).duration == info.duration


def test_bad_media_fail_with_the_file_named(tmp_path):
    corrupt = tmp_path / "corrupt.mp4"
    corrupt.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(200))
    with pytest.raises(InputError, match="corrupt.mp4"):
        media.probe(corrupt)
    silent = media.probe(write_clip(tmp_path / "noaudio.mp4", with_audio=False))
    with pytest.raises(InputError, match="no audio stream") as err:
        media.timeline_audio(silent)
    assert "noaudio.mp4" in str(err.value)
    with pytest.raises(InputError, match="not found"):
        media.probe(tmp_path / "missing.mp4")


# ---- channel layouts, similarity, non-video inputs, late video -----------------------------------------------------

@pytest.mark.parametrize(("codec", "layout"), [(c, lay) for c, table in media.CODEC_LAYOUTS.items()
                                               for names in table.values() for lay in names])
def test_every_layout_the_table_promises_is_written_and_read_back(clips, tmp_path, codec, layout):
    info = media.probe(clips["a"])
    n = len(av_layout(layout).channels)
    audio = np.concatenate([noise_audio(3.0, c) for c in range(n)])
    out = media.write_with_audio(info, tmp_path / "x.mp4", audio, RATE, codec, layout)
    got = media.probe(out)
    assert (got.audio_layout, got.audio_channels) == (layout, n)


def av_layout(name):
    import av

    return av.AudioLayout(name)


@pytest.mark.parametrize(("layout", "channels", "codec", "expected"), [
    ("mono", 1, "aac", ("mono", None)),
    ("5.1", 6, "aac", ("5.1", None)),
    ("5.1", 6, "alac", ("5.1", None)),
    ("5.1(side)", 6, "aac", ("5.1", "converted: 5.1(side) -> 5.1")),  # FLAC / Vorbis 5.1
    ("quad", 4, "alac", ("4.0", "converted: quad -> 4.0")),
    ("6 channels", 6, "aac", ("5.1", "converted: 6 channels -> 5.1")),  # no layout in the file
    ("7.1", 8, "aac", ("5.1", "down-mixed: 7.1 (8 ch) -> 5.1")),
])
def test_output_layout_keeps_the_source_layout_or_says_why_not(layout, channels, codec, expected):
    info = media.ClipInfo("x.mp4", 3.0, 0.0, 25.0, False, 96, 64, "h264", "mp4", 48000, channels, 0.0, layout)
    assert media.output_layout(info, codec) == expected


@pytest.mark.parametrize(("layout", "rate", "suffix", "codecs"), [
    ("5.1", 48000, ".mp4", ("aac", "libx264")),
    ("mono", 44100, ".mp4", ("aac", "libx264")),
    ("stereo", 48000, ".webm", ("libopus", "libvpx-vp9")),
])
def test_multichannel_and_mono_audio_keep_layout_rate_and_channel_order(tmp_path, layout, rate, suffix, codecs):
    src = layout_audio(2.0, layout, rate)
    path = write_av(tmp_path / f"src{suffix}", seconds=2.0, audio=src, layout=layout, rate=rate,
                    audio_codec=codecs[0], video_codec=codecs[1])
    info = media.probe(path)
    out_layout, note = media.output_layout(info)
    assert (out_layout, note) == (layout, None)
    audio, _ = media.timeline_audio(info, info.audio_rate, layout=out_layout)
    assert audio.shape == (src.shape[0], 2 * rate)
    out = media.write_with_audio(info, tmp_path / f"shift{media.output_suffix(info)}",
                                 audio_edits.shift(audio, rate, 0.5), rate, "aac", out_layout)
    got = media.probe(out)
    assert (got.audio_layout, got.audio_channels, got.audio_rate) == (layout, src.shape[0], rate)
    shifted, _ = media.timeline_audio(got, rate, layout=out_layout)
    for k in range(src.shape[0]):  # channel k still carries source channel k, moved by the shift (not a down-mix)
        assert lag_seconds(shifted[k], audio[k], rate) == pytest.approx(0.5, abs=1.5 / rate)  # one sample
        others = [abs(np.corrcoef(shifted[k, rate:], audio[j, rate // 2 : -rate // 2])[0, 1])
                  for j in range(src.shape[0]) if j != k]
        assert np.corrcoef(shifted[k, rate:], audio[k, rate // 2 : -rate // 2])[0, 1] > 0.9
        assert max(others, default=0.0) < 0.2


def test_similarity_is_the_maximum_normalised_cross_correlation():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(500), rng.standard_normal(300)
    xc, yc = x - x.mean(), y - y.mean()
    reference = np.max(np.abs(np.correlate(xc, yc, "full"))) / np.sqrt(np.sum(xc**2) * np.sum(yc**2))
    assert audio_edits.similarity(x, y) == pytest.approx(reference, rel=1e-9)
    assert audio_edits.similarity(x, x) == pytest.approx(1.0) and audio_edits.similarity(x, -x) == pytest.approx(1.0)
    delayed = np.concatenate([np.zeros(100), x[:400]])  # the same sound 100 samples later: 80% of it overlaps
    overlap = np.sqrt(np.sum(xc[:400] ** 2) / np.sum(xc**2))
    assert audio_edits.similarity(x, delayed) == pytest.approx(overlap, abs=0.02)
    assert audio_edits.similarity(x, np.zeros(500)) == 0.0
    assert audio_edits.similarity(rng.standard_normal(40000), rng.standard_normal(40000)) < 0.03  # ~sqrt(2 ln 2n / n)


def write_text(path):
    path.write_text("not a video\n" * 50)
    return path


@pytest.mark.parametrize(("make", "match"), [
    (lambda d: write_av(d / "sound.m4a", with_video=False, layout="stereo"), "no video stream .*audio-only"),
    (lambda d: write_image(d / "still.png"), "not a video: its only picture is a still image"),
    (lambda d: write_truncated(write_clip(d / "full.mp4"), d / "cut.mp4"), "cannot open as a media file"),
    (lambda d: write_text(d / "notes.mp4"), "cannot open as a media file"),
])
def test_files_that_are_not_videos_are_refused_with_the_file_named(tmp_path, make, match):
    path = make(tmp_path)
    with pytest.raises(InputError, match=match) as err:
        media.probe(path)
    assert path.name in str(err.value)


def test_a_video_stream_starting_at_one_second_gets_the_audio_heard_with_its_frames(tmp_path):
    """Audio from 0 s, pictures from 1.0 s: sample 0 of the timeline is the audio at 1.0 s, and a Shift of it is
    measured against that, not against the file's first second."""
    src = layout_audio(4.0, "stereo", RATE)
    info = media.probe(write_av(tmp_path / "v1.mp4", seconds=3.0, audio=src, layout="stereo", video_start=1.0))
    assert info.video_start == pytest.approx(1.0) and info.duration == pytest.approx(3.0)
    audio, pad = media.timeline_audio(info, layout="stereo")
    assert audio.shape == (2, 3 * RATE) and pad == 0.0
    assert lag_seconds(audio[0], src[0, : 3 * RATE], RATE) == pytest.approx(-1.0, abs=1 / RATE)
    out = media.write_with_audio(info, tmp_path / "s.mp4", audio_edits.shift(audio, RATE, 0.5), RATE, layout="stereo")
    got = media.probe(out)
    assert got.video_start == pytest.approx(1.0) and got.audio_start == pytest.approx(1.0, abs=0.07)
    shifted, _ = media.timeline_audio(got, layout="stereo")
    assert lag_seconds(shifted[1], audio[1], RATE) == pytest.approx(0.5, abs=1 / RATE)


@pytest.mark.parametrize("dst", ["out.mkv", "out.mp4"])
def test_a_matroska_video_with_b_frames_is_copied_whole(tmp_path, dst):
    """Matroska gives reordered B-frames no dts: every one of them is copied, not only the packets that have one."""
    import av

    src = write_av(tmp_path / "src.mkv", seconds=2.0, audio_codec="libopus", rate=48000)
    with av.open(str(src)) as c:
        assert any(p.dts is None for p in c.demux(c.streams.video[0]) if p.size)  # the case at hand
    out = media.write_with_audio(media.probe(src), tmp_path / dst, np.zeros((1, 96000), np.float32), 48000)
    assert media.video_packets(out) == media.video_packets(src)
