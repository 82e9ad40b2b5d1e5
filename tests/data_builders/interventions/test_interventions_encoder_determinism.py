"""The H.264 writer gives the same bytes for the same frames, every time, in one process.

x264's AVX-512 routines (the x264 bundled with PyAV 18.1, core 165) made the mb-tree rate control (with B-frames) give
different bytes now and then for the same frames in the same process: the output followed the heap's earlier contents
(MALLOC_PERTURB_ made it stable), so a build's clips changed from run to run. Repeated encodes of the 96x64 test clip:
3-13% differed with x264's SIMD on, none of 400 with ``asm=0``. Before the fix the first test failed in some runs
only (it depends on the process's heap), the second in every run.
"""

import hashlib
import io

import av

from omniaudit.data_builders.interventions import media
from omniaudit.data_builders.interventions.synthetic import SyntheticClipSpec, _frames

ENCODES = 100  # before the fix, 5-13% of these encodes differed (on a 2-core Xeon with AVX-512)


def encode(frames, spec) -> str:
    """The frames as the builder writes them (media.mux_frames on media.add_video_stream), as an MP4; its SHA-256."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        media.mux_frames(out, media.add_video_stream(out, spec.fps, spec.width, spec.height), frames)
    return hashlib.sha256(buf.getvalue()).hexdigest()


def test_the_same_frames_encode_to_the_same_bytes_every_time():
    spec = SyntheticClipSpec(n_clips=6, width=96, height=64)
    frames = _frames("ball", spec, 3.0)  # kept alive: the heap as the build has it (the failures followed its layout)
    digests = {encode(frames, spec) for _ in range(ENCODES)}
    assert len(digests) == 1


def test_the_encoder_runs_without_simd_and_on_one_thread():
    """x264's plain C code: the same bytes on any CPU (its SIMD float mb-tree code is not bit-exact with C)."""
    with av.open(io.BytesIO(), "w", format="mp4") as out:
        stream = media.add_video_stream(out, 25, 96, 64)
        assert stream.codec_context.thread_count == 1
        assert "asm=0" in stream.options["x264-params"].split(":")
