"""Audio interventions on video files: the video stream is copied packet for packet, only the audio is rewritten.

Audio is handled as float32 arrays ``(channels, samples)`` placed on the *video* timeline: sample 0 plays with the
first video frame and the array covers exactly the video's duration. Lossy codecs pad and prime their output, so every
operation fits lengths to the video, never to the decoded audio.

Channel layouts are kept: a 5.1 source gives 5.1 interventions (``output_layout``); only a layout the output codec
cannot carry is converted (to the codec's layout with the same channel count; 7+ channels are down-mixed to 5.1), and
the builder reports every such conversion.

Pure array operations (``shift``, ``mute``, ``fit_length``, ``add_noise``, ``concat_with_tone``, ``similarity``) are
separate from this file I/O (``probe``, ``timeline_audio``, ``write_with_audio``, ``concat_clips``), in
:mod:`~.audio_edits`, so they are testable without media.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from omniaudit.data_builders.interventions.audio_edits import TONE_S, concat_with_tone, fit_length, n_samples
from omniaudit.errors import InputError

AUDIO_CODECS = ("aac", "alac")  # alac: lossless, so an exact SNR or a bit-exact swap survives storage
AAC_BITRATE = 128_000  # mono and stereo; more channels get AAC_BITRATE_PER_CHANNEL each (5.1: 384 kb/s)
AAC_BITRATE_PER_CHANNEL = 64_000
# Frame-rate spread (max/min packet duration) above which a clip counts as variable frame rate.
VFR_TOLERANCE = 1.01
# Channel layouts each output codec carries, by channel count (each is written and re-read in the tests).
# PyAV cannot hand frames of more than 6 planes to these encoders reliably, so 7+ channels are down-mixed to 5.1.
CODEC_LAYOUTS = {
    "aac": {1: ("mono",), 2: ("stereo",), 3: ("3.0", "2.1"), 4: ("4.0", "quad"), 5: ("5.0",), 6: ("5.1",)},
    "alac": {1: ("mono",), 2: ("stereo",), 3: ("3.0",), 4: ("4.0",), 5: ("5.0",), 6: ("5.1",)},
}
MAX_KEPT_CHANNELS = 6
# Containers that hold a still image, not a video (an image listed in a video manifest by mistake).
IMAGE_FORMATS = ("image2", "_pipe", "apng", "gif", "webp")


@dataclass(frozen=True)
class ClipInfo:
    """What the interventions need to know about a source video (times in seconds on the container's clock)."""

    path: str
    duration: float  # video duration: first frame's start to last frame's end
    video_start: float
    fps: float
    variable_frame_rate: bool
    width: int
    height: int
    video_codec: str
    container: str
    audio_rate: int | None  # None: the file has no audio stream
    audio_channels: int | None
    audio_start: float | None
    audio_layout: str | None = None  # FFmpeg's name of the source layout ("mono", "stereo", "5.1", "5.1(side)", ...)

    @property
    def has_audio(self) -> bool:
        return self.audio_rate is not None


def _open(path: str | Path):
    import av

    path = Path(path)
    if not path.is_file():
        raise InputError("video file not found or not a file", file=path)
    try:
        return av.open(str(path))
    except (av.error.FFmpegError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot open as a media file ({type(exc).__name__}: {exc})", file=path) from exc


# A stream may decode this much short of what its container declares before it counts as truncated: codec priming and
# padding (an AAC frame is 1024 samples), rounding of the last frame's duration, edit lists.
TRUNCATION_TOLERANCE_S = 0.1
TRUNCATION_TOLERANCE_FRACTION = 0.01
_INTACT: dict[tuple[str, int, int], None] = {}


def _declared_s(container, stream) -> float | None:
    if stream.duration is not None and stream.time_base:
        return float(stream.duration * stream.time_base)
    return container.duration / 1e6 if container.duration else None


def _wav_short(path: Path) -> str | None:
    """Why a RIFF/WAVE file holds fewer bytes than its ``data`` chunk declares (FFmpeg times a WAV by its file size,
    so a cut file decodes "to its end"), or None. A streamed WAV's unknown size (0 or 0xFFFFFFFF) is not checked."""
    import struct

    with open(path, "rb") as f:
        head = f.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        while True:
            chunk = f.read(8)
            if len(chunk) < 8:
                return None
            name, size = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if name == b"data":
                if size in (0, 0xFFFFFFFF):
                    return None
                have = path.stat().st_size - f.tell()
                return (f"the WAV data chunk declares {size} bytes, the file holds {have}: truncated?"
                        if have < size else None)
            f.seek(size + (size & 1), 1)


def check_intact(path: str | Path) -> None:
    """Refuse (InputError naming the file) a media file that does not decode to the end it declares.

    A WAV is first checked against its header's data size (:func:`_wav_short`). Every packet of the streams the
    builders use (the first video and the first audio stream) is demuxed *and decoded*,
    and each stream's decoded extent (its start to the end of its last packet that decodes) is compared with the
    duration the container declares for it. Both halves are needed: a truncated MP4 with its index (moov) at the front
    demuxes without error, only shorter than declared (a probe alone took 2.16 s of a 5.28 s clip for the whole clip),
    and a cut inside a packet still demuxes that packet, short, so only decoding it shows it is not there. A
    header-only comparison (``stream.frames``) cannot see either and needs no fewer reads. A packet that fails to
    decode mid-stream is not refused here (players and the judges' decoders conceal it; a corrupt audio stream is
    refused when the builder decodes the audio): what is refused is a stream that stops decoding before its end.
    Decoding costs about what the builder's own reads cost (milliseconds for test clips, well under real time for
    typical sources), and a pass is cached per file (path, size, mtime), so the several probes of one build decode
    each file once.
    """
    import av

    p = Path(path)
    if not p.is_file():
        raise InputError("media file not found or not a file", file=path)
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key in _INTACT:
        return
    short = _wav_short(p)
    if short:
        raise InputError(short, file=path)
    with _open(path) as c:
        streams = list(c.streams.video[:1]) + list(c.streams.audio[:1])
        if not streams:
            raise InputError("no audio or video stream", file=path)
        start = {s.index: s.start_time for s in streams}
        end: dict[int, int] = {}
        failed: dict[int, str] = {}
        try:
            for pkt in c.demux(*streams):
                if pkt.size == 0 or pkt.pts is None:
                    continue
                i = pkt.stream.index
                if start[i] is None:
                    start[i] = pkt.pts
                try:
                    pkt.decode()
                except (av.error.FFmpegError, ValueError) as exc:  # concealed by players; counts only at the end
                    failed[i] = f"{type(exc).__name__}: {exc}"
                    continue
                end[i] = max(end.get(i, pkt.pts), pkt.pts + (pkt.duration or 0))
        except av.error.FFmpegError as exc:
            raise InputError(f"the file does not demux to its end ({type(exc).__name__}: {exc}): truncated?",
                             file=path) from exc
        for s in streams:
            declared = _declared_s(c, s)
            got = float((end[s.index] - start[s.index]) * s.time_base) if s.index in end else 0.0
            slack = TRUNCATION_TOLERANCE_S + TRUNCATION_TOLERANCE_FRACTION * (declared or 0.0)
            if declared is not None and declared - got > slack:
                why = f" (a packet fails to decode: {failed[s.index]})" if s.index in failed else ""
                raise InputError(f"the {s.type} stream declares {declared:.2f} s, decodes {got:.2f} s: "
                                 f"truncated?{why}", file=path)
    _INTACT[key] = None


def probe(path: str | Path) -> ClipInfo:
    """Read stream facts; the duration and frame-rate regularity come from the video packets themselves.

    The file is first checked to decode to its declared end (:func:`check_intact`), so every builder that probes its
    sources refuses a truncated or corrupt one before writing anything.
    """
    import av

    check_intact(path)
    with _open(path) as c:
        if not c.streams.video:
            kind = "an audio-only file" if c.streams.audio else "no audio or video stream"
            raise InputError(f"not a video: no video stream ({kind}, format {c.format.name})", file=path)
        vs = c.streams.video[0]
        if any(part in c.format.name for part in IMAGE_FORMATS) or vs.disposition & av.stream.Disposition.attached_pic:
            what = "cover art of an audio file" if c.streams.audio else f"a still image ({c.format.name})"
            raise InputError(f"not a video: its only picture is {what}", file=path)
        tb = vs.time_base
        starts, ends, durs = [], [], []
        try:
            for pkt in c.demux(vs):
                if pkt.pts is None or pkt.size == 0:
                    continue
                starts.append(pkt.pts)
                ends.append(pkt.pts + (pkt.duration or 0))
                if pkt.duration:
                    durs.append(pkt.duration)
        except av.error.FFmpegError as exc:
            raise InputError(f"corrupt video stream ({type(exc).__name__}: {exc})", file=path) from exc
        if not starts:
            raise InputError("the video stream has no frames", file=path)
        if len(starts) < 2:
            raise InputError("not a video: the video stream holds a single frame", file=path)
        start = float(min(starts) * tb)
        pts = np.sort(np.asarray(starts))
        steps = np.diff(pts)
        # without packet durations (some containers), the last frame lasts one typical frame spacing
        end = max(ends) if durs else pts[-1] + (int(np.median(steps)) if steps.size else 0)
        duration = float((end - min(starts)) * tb)
        if duration <= 0:
            raise InputError("the video stream has zero duration", file=path)
        steps = steps[steps > 0]
        vfr = bool(steps.size and steps.max() > VFR_TOLERANCE * steps.min())
        fps = float(len(starts) / duration)
        audio = c.streams.audio[0] if c.streams.audio else None
        audio_start = None
        if audio is not None:
            audio_start = float(audio.start_time * audio.time_base) if audio.start_time is not None else 0.0
        return ClipInfo(
            path=str(path), duration=duration, video_start=start, fps=fps, variable_frame_rate=vfr,
            width=vs.codec_context.width, height=vs.codec_context.height, video_codec=vs.codec_context.name,
            container=c.format.name, audio_rate=audio.rate if audio else None,
            audio_channels=audio.channels if audio else None, audio_start=audio_start,
            audio_layout=audio.layout.name if audio else None,
        )


def decode_audio(path: str | Path, rate: int | None = None, channels: int | None = None,
                 layout: str | None = None) -> tuple[np.ndarray, int, float]:
    """All audio of the first audio stream as float32 ``(channels, n)``, its rate and its start time (s).

    ``rate`` converts on decode. ``layout`` (an FFmpeg layout name such as "5.1") converts to that layout, so a
    multichannel source keeps its channels; without it, ``channels`` (1 or 2) picks mono or stereo, and by default
    more than two channels are down-mixed to stereo.
    """
    import av

    with _open(path) as c:
        if not c.streams.audio:
            raise InputError("no audio stream", file=path)
        stream = c.streams.audio[0]
        rate = rate or stream.rate
        if layout is None:
            channels = channels or min(stream.channels, 2)
            layout = "mono" if channels == 1 else "stereo"
        channels = len(av.AudioLayout(layout).channels)
        if channels > MAX_KEPT_CHANNELS:
            raise ValueError(f"at most {MAX_KEPT_CHANNELS} channels can be decoded, {layout!r} has {channels}")
        resampler = av.AudioResampler(format="fltp", layout=layout, rate=rate)
        chunks, start = [], None
        try:
            for frame in c.decode(stream):
                if start is None and frame.pts is not None:
                    start = float(frame.pts * frame.time_base)
                chunks.extend(f.to_ndarray() for f in resampler.resample(frame))
            chunks.extend(f.to_ndarray() for f in resampler.resample(None))
        except av.error.FFmpegError as exc:
            raise InputError(f"corrupt audio stream ({type(exc).__name__}: {exc})", file=path) from exc
    audio = np.concatenate(chunks, axis=1) if chunks else np.zeros((channels, 0), np.float32)
    return np.ascontiguousarray(audio, dtype=np.float32), rate, start or 0.0


def timeline_audio(info: ClipInfo, rate: int | None = None, channels: int | None = None,
                   layout: str | None = None) -> tuple[np.ndarray, float]:
    """The clip's audio on its video timeline (exactly ``duration`` long) and the seconds of silence appended.

    ``rate``, ``channels`` and ``layout`` convert as in :func:`decode_audio`.

    Audio that starts after the first frame is delayed by silence, audio that starts before it is trimmed, so sample 0
    plays with frame 0. A track shorter than the video is completed with digital silence; the returned pad length lets
    the builder record it instead of hiding it.
    """
    if not info.has_audio:
        raise InputError("the video has no audio stream; Shift/Mute/Swap need one", file=info.path)
    audio, rate, start = decode_audio(info.path, rate, channels, layout)
    lead = n_samples(start - info.video_start, rate)
    audio = np.pad(audio, ((0, 0), (lead, 0))) if lead > 0 else audio[:, -lead:]
    n = n_samples(info.duration, rate)
    pad_s = max(0, n - audio.shape[1]) / rate
    return fit_length(audio, n), pad_s


def output_layout(info: ClipInfo, codec: str = "aac") -> tuple[str, str | None]:
    """The layout an intervention of ``info`` is written in, and why it differs from the source's (None: kept).

    The source layout is kept when ``codec`` carries it; else the codec's layout with the same channel count is
    used (e.g. FLAC's "5.1(side)" becomes AAC's "5.1": surrounds on the back instead of the sides); a source with more
    than six channels is down-mixed to 5.1.
    """
    if not info.has_audio:
        raise InputError("the video has no audio stream", file=info.path)
    channels, source = int(info.audio_channels or 1), info.audio_layout
    if codec not in CODEC_LAYOUTS:
        raise ValueError(f"audio codec must be one of {AUDIO_CODECS}, got {codec!r}")
    allowed = CODEC_LAYOUTS[codec]
    if channels > MAX_KEPT_CHANNELS:
        return allowed[MAX_KEPT_CHANNELS][0], f"down-mixed: {source or channels} ({channels} ch) -> 5.1"
    if source in allowed[channels]:
        return source, None
    return allowed[channels][0], f"converted: {source or f'{channels} channels'} -> {allowed[channels][0]}"


# ---- writing -----------------------------------------------------------------------------------------------------

def output_suffix(info: ClipInfo) -> str:
    """MP4 unless the source is Matroska/WebM (whose video codecs MP4 may not carry)."""
    return ".mkv" if "matroska" in info.container or "webm" in info.container else ".mp4"


def add_audio_stream(out, channels: int, rate: int, codec: str, layout: str | None = None):
    """Add the audio stream (before anything is muxed: the container header is written on the first packet).

    ``layout`` names the channel layout (see :func:`output_layout`); by default mono or stereo from ``channels``.
    """
    if codec not in AUDIO_CODECS:
        raise ValueError(f"audio codec must be one of {AUDIO_CODECS}, got {codec!r}")
    if layout is None:
        if channels > 2:
            raise ValueError(f"{channels} channels need a layout name (see output_layout)")
        layout = "mono" if channels == 1 else "stereo"
    stream = out.add_stream(codec, rate=rate, layout=layout)
    if codec == "aac":  # a fixed 128 kb/s would leave 21 kb/s per channel of a 5.1 track
        stream.bit_rate = max(AAC_BITRATE, AAC_BITRATE_PER_CHANNEL * stream.codec_context.channels)
    return stream


def mux_audio(out, stream, audio: np.ndarray, start_pts: int) -> None:
    import av

    layout = stream.layout.name
    if stream.codec_context.name == "aac":
        data, fmt = np.ascontiguousarray(audio, np.float32), "fltp"
    else:  # ALAC takes integers; clip first (added noise can exceed full scale)
        data, fmt = (np.clip(audio, -1.0, 32767 / 32768) * 32768).round().astype(np.int16), "s16p"
    rate = stream.rate
    for i in range(0, data.shape[1], rate):  # one second per frame; the encoder re-chunks to its frame size
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(data[:, i : i + rate]), format=fmt, layout=layout)
        frame.sample_rate = rate
        frame.pts = start_pts + i
        for packet in stream.encode(frame):
            out.mux(packet)
    for packet in stream.encode(None):
        out.mux(packet)


# x264 without its SIMD code (plain C): the same frames give the same bytes in every process and on every CPU.
# Its AVX-512 routines made the mb-tree rate control (with B-frames) follow the heap's earlier contents: now and then
# a clip came out different in the same process (3-13% of repeated encodes of a test clip, idle or busy machine
# alike), and its SIMD mb-tree float code is not bit-exact with C, so bytes also varied with the CPU. C costs ~3.5x
# the encoding time (a 320x240 6 s clip: 0.75 s instead of 0.22 s); the builders encode only synthetic clips, blank
# videos and concatenations.
X264_PARAMS = "asm=0"


def add_video_stream(out, fps: int, width: int, height: int):
    """An H.264 stream (yuv420p, crf 23, one encoder thread, no SIMD: the same frames always give the same bytes)."""
    stream = out.add_stream("libx264", rate=fps)
    stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
    stream.options = {"preset": "veryfast", "crf": "23", "x264-params": X264_PARAMS}
    stream.codec_context.thread_count = 1
    return stream


def mux_frames(out, stream, frames: Iterable[np.ndarray]) -> None:
    """Encode RGB frames (H, W, 3) uint8, one per time step, then flush the encoder."""
    import av

    for index, image in enumerate(frames):
        frame = av.VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts = index
        for packet in stream.encode(frame):
            out.mux(packet)
    for packet in stream.encode(None):
        out.mux(packet)


def write_with_audio(info: ClipInfo, dst: str | Path, audio: np.ndarray, rate: int, codec: str = "aac",
                     layout: str | None = None) -> Path:
    """Copy the video stream of ``info.path`` packet for packet into ``dst`` with ``audio`` as its only audio track.

    ``audio`` lies on the video timeline (sample 0 with the first frame), in ``layout`` (default: mono/stereo by its
    channel count); ``dst`` is written in place, so callers write to a temporary name and rename.
    """
    import av

    dst = Path(dst)
    with _open(info.path) as inp, av.open(str(dst), "w", format="matroska" if dst.suffix == ".mkv" else "mp4") as out:
        vin = inp.streams.video[0]
        vout = out.add_stream_from_template(vin)
        aout = add_audio_stream(out, audio.shape[0], rate, codec, layout)
        for packet in inp.demux(vin):
            if packet.size == 0:  # the demuxer's end-of-stream flush packet (Matroska gives B-frames no dts: kept)
                continue
            packet.stream = vout
            out.mux(packet)
        mux_audio(out, aout, audio, start_pts=n_samples(info.video_start, rate))
    return dst


def video_packets(path: str | Path) -> list[bytes]:
    """The raw video packets in stream order (to show that a stream was copied, not re-encoded)."""
    with _open(path) as c:
        return [bytes(p) for p in c.demux(c.streams.video[0]) if p.size]


def concat_clips(first: str | Path, second: str | Path, dst: str | Path, fps: int = 25, rate: int = 48000,
                 size: tuple[int, int] | None = None) -> Path:
    """One video: clip 1, 0.6 s of black with an 880 Hz tone, clip 2 (re-encoded: H.264 + AAC stereo).

    Each clip is letterboxed into ``size`` (default: the first clip's) and its audio fitted to its video duration,
    so the tone starts exactly where clip 1's pictures end. Audio-only inputs: use :func:`concat_with_tone`.
    """
    import av

    infos = [probe(first), probe(second)]
    width, height = size or (infos[0].width - infos[0].width % 2, infos[0].height - infos[0].height % 2)
    tracks = [timeline_audio(i, rate, 2)[0] if i.has_audio else np.zeros((2, n_samples(i.duration, rate)), np.float32)
              for i in infos]
    audio = concat_with_tone(tracks[0], tracks[1], rate)
    with av.open(str(dst), "w", format="mp4") as out:
        vout = add_video_stream(out, fps, width, height)
        aout = add_audio_stream(out, 2, rate, "aac")
        black = np.zeros((height, width, 3), np.uint8)
        mux_frames(out, vout, itertools.chain(_frames_at_fps(infos[0], fps, width, height),
                                              [black] * n_samples(TONE_S, fps),
                                              _frames_at_fps(infos[1], fps, width, height)))
        mux_audio(out, aout, audio, start_pts=0)
    return Path(dst)


def _frames_at_fps(info: ClipInfo, fps: int, width: int, height: int) -> list[np.ndarray]:
    """Frames sampled at a constant ``fps`` over the clip (last frame shown at each time), letterboxed to the size."""
    with _open(info.path) as c:
        decoded = [(float(f.pts * f.time_base) - info.video_start, f) for f in c.decode(video=0) if f.pts is not None]
    decoded.sort(key=lambda tf: tf[0])
    times = np.array([t for t, _ in decoded])
    out = []
    for k in range(n_samples(info.duration, fps)):
        frame = decoded[max(0, int(np.searchsorted(times, k / fps, side="right")) - 1)][1]
        scale = min(width / frame.width, height / frame.height)
        w, h = max(2, int(frame.width * scale) // 2 * 2), max(2, int(frame.height * scale) // 2 * 2)
        canvas = np.zeros((height, width, 3), np.uint8)
        y0, x0 = (height - h) // 2, (width - w) // 2
        canvas[y0 : y0 + h, x0 : x0 + w] = frame.reformat(width=w, height=h, format="rgb24").to_ndarray()
        out.append(canvas)
    return out
