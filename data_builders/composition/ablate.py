"""The media of the bypass-test ablations: each one changes its own modality and leaves every other stream as it is.

- :func:`black_video` (``blank_video``): every frame black, at the source's own frame times (H.264, re-encoded), and
  the video's soundtrack copied packet for packet: the same codec, channels, layout, sample rate, start and duration,
  the same bytes.
- :func:`muted_video` (``mute_audio`` of a video's own soundtrack): the video stream copied packet for packet and
  the soundtrack replaced by digital silence with the source's channels, layout, sample rate, start and duration, in
  the source's codec when it can be encoded here (else AAC in the same layout, see
  :func:`~omniaudit.data_builders.interventions.media.output_layout`).
- :func:`silent_audio_file` (``mute_audio`` of the sample's audio file): digital silence with the file's frame count,
  channels (and so the default layout of the count), sample rate, format and subtype (WAV if the format cannot be
  written).

A 5.1 48 kHz soundtrack stays 5.1 48 kHz in both video ablations: before, both decoded it to stereo (the decoder's
default down-mix) and re-encoded it as stereo AAC, so an ablated copy differed from its sample in a modality it was
not meant to touch.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from omniaudit.errors import InputError

# Containers written: the source's kind where it is Matroska/WebM (media.output_suffix), else MP4; a stream MP4 cannot
# carry (PCM from a QuickTime file, say) is retried in Matroska, which carries any codec.
FORMATS = {".mp4": "mp4", ".mkv": "matroska"}


def silent_audio_file(path: str | Path) -> bytes:
    """Digital silence of the audio file's length, channels, sample rate, format and subtype."""
    import soundfile as sf

    info = sf.info(str(path))
    silence = np.zeros((info.frames, info.channels), np.float32)
    buf = io.BytesIO()
    try:
        sf.write(buf, silence, info.samplerate, format=info.format, subtype=info.subtype)
    except (sf.LibsndfileError, RuntimeError, TypeError, ValueError):  # a format libsndfile reads but cannot write
        buf = io.BytesIO()
        sf.write(buf, silence, info.samplerate, format="WAVEX" if info.channels > 2 else "WAV", subtype="PCM_16")
    return buf.getvalue()


def audio_extent(path: str | Path) -> tuple[float, float]:
    """(start, duration) in seconds of the first audio stream on the container clock: its start time to the end of
    its last packet (what a player plays; codec priming before the start is not counted)."""
    from omniaudit.data_builders.interventions.media import _open

    with _open(path) as c:
        stream = c.streams.audio[0]
        first, end = None, None
        for p in c.demux(stream):
            if p.pts is None or p.size == 0:
                continue
            first = p.pts if first is None else min(first, p.pts)
            end = p.pts + (p.duration or 0) if end is None else max(end, p.pts + (p.duration or 0))
        start = stream.start_time if stream.start_time is not None else first
        if start is None or end is None:
            return 0.0, 0.0
        return float(start * stream.time_base), float((end - start) * stream.time_base)


def _write(out: Path, write) -> Path:
    """``write(container)`` into ``out`` (MP4 or Matroska by its suffix); an MP4 that refuses a stream is written as
    Matroska instead. Returns the file written."""
    import av

    for dst in dict.fromkeys((out, out.with_suffix(".mkv"))):
        try:
            with av.open(str(dst), "w", format=FORMATS[dst.suffix]) as container:
                write(container)
            return dst
        except (av.error.FFmpegError, ValueError) as exc:
            dst.unlink(missing_ok=True)
            error = exc
    raise InputError(f"cannot write the ablated clip ({type(error).__name__}: {error})", file=out)


def black_video(path: str | Path, out: Path) -> bytes:
    """The clip with every frame black at the source's frame times and its soundtrack copied packet for packet."""
    from fractions import Fraction

    import av

    from omniaudit.data_builders.interventions import media

    info = media.probe(path)
    with media._open(path) as src:
        vin = src.streams.video[0]
        time_base = vin.time_base or Fraction(1, max(1, round(info.fps)))
        times = sorted({p.pts for p in src.demux(vin) if p.size and p.pts is not None})
    width, height = info.width - info.width % 2, info.height - info.height % 2
    black = np.zeros((height, width, 3), np.uint8)

    def write(dst) -> None:
        with media._open(path) as src:
            vout = media.add_video_stream(dst, max(1, round(info.fps)), width, height)
            vout.codec_context.time_base = time_base
            ain = src.streams.audio[0] if src.streams.audio else None
            aout = dst.add_stream_from_template(ain) if ain is not None else None
            for pts in times:
                frame = av.VideoFrame.from_ndarray(black, format="rgb24")
                frame.pts, frame.time_base = pts, time_base
                for packet in vout.encode(frame):
                    dst.mux(packet)
            for packet in vout.encode(None):
                dst.mux(packet)
            if ain is not None:
                for packet in src.demux(ain):
                    if packet.size == 0:  # the demuxer's end-of-stream flush packet
                        continue
                    packet.stream = aout
                    dst.mux(packet)

    return _write(out.with_suffix(media.output_suffix(info)), write).read_bytes()


def muted_video(path: str | Path, out: Path) -> bytes:
    """The clip with its video stream copied packet for packet and its soundtrack replaced by digital silence of the
    same channels, layout, sample rate, start and duration (the source's codec where it can be encoded, else AAC)."""
    import av

    from omniaudit.data_builders.interventions import audio_edits, media

    info = media.probe(path)
    with media._open(path) as src:
        ain = src.streams.audio[0]
        codec, layout, rate = ain.codec_context.codec.canonical_name, ain.layout.name, ain.rate
    start_s, duration_s = audio_extent(path)
    n = audio_edits.n_samples(duration_s, rate)

    def write(dst, codec: str, layout: str) -> None:
        with media._open(path) as src:
            vin = src.streams.video[0]
            vout = dst.add_stream_from_template(vin)
            if codec in media.AUDIO_CODECS:
                aout = media.add_audio_stream(dst, len(av.AudioLayout(layout).channels), rate, codec, layout)
            else:
                aout = dst.add_stream(codec, rate=rate, layout=layout)
            for packet in src.demux(vin):
                if packet.size == 0:  # the flush packet (Matroska gives reordered frames no dts: keep those)
                    continue
                packet.stream = vout
                dst.mux(packet)
        first = audio_edits.n_samples(start_s, rate)
        for i in range(0, n, rate):  # one second per frame; the encoder re-chunks (and converts) to its own frames
            frame = av.AudioFrame.from_ndarray(np.zeros((len(av.AudioLayout(layout).channels), min(rate, n - i)),
                                                        np.float32), format="fltp", layout=layout)
            frame.sample_rate, frame.pts = rate, first + i
            for packet in aout.encode(frame):
                dst.mux(packet)
        for packet in aout.encode(None):
            dst.mux(packet)

    target = out.with_suffix(media.output_suffix(info))
    try:
        av.Codec(codec, "w")  # an encoder for the source's codec (decoded as mp3float, written by libmp3lame)
    except (ValueError, av.error.FFmpegError):
        codec = None
    if codec is not None:
        try:
            return _write(target, lambda dst: write(dst, codec, layout)).read_bytes()
        except InputError:  # the encoder refuses this layout or rate (libopus at 44.1 kHz): AAC in the same layout
            pass
    return _write(target, lambda dst: write(dst, "aac", media.output_layout(info, "aac")[0])).read_bytes()
