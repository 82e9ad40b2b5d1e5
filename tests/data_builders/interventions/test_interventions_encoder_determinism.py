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
import numpy as np

from omniaudit.data_builders.interventions import media
from omniaudit.data_builders.interventions.synthetic import SyntheticClipSpec, _frames

ENCODES = 100  # before the fix, 5-13% of these encodes differed (on a 2-core Xeon with AVX-512)


def encode(planes, spec) -> str:
    """The frames (yuv420p, the encoder's own format: nothing between them and x264) as an MP4; its SHA-256."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as out:
        stream = media.add_video_stream(out, spec.fps, spec.width, spec.height)
        for index, array in enumerate(planes):
            frame = av.VideoFrame.from_ndarray(array, format="yuv420p")
            frame.pts = index
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return hashlib.sha256(buf.getvalue()).hexdigest()


def test_the_same_frames_encode_to_the_same_bytes_every_time():
    spec = SyntheticClipSpec(n_clips=6, width=96, height=64)
    frames = _frames("ball", spec, 3.0)  # kept alive: the heap as the build has it (the failures followed its layout)
    planes = [av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuv420p", threads=1).to_ndarray()
              for image in frames]
    digests, held = set(), []
    for k in range(ENCODES):
        # the heap differs from one encode to the next, as in a build (other allocations meanwhile, other values)
        held = [*held[-7:], np.full(1000 + 37 * k, np.nan if k % 2 else 1e30, np.float32)]
        digests.add(encode(planes, spec))
    assert len(digests) == 1


def test_the_encoder_runs_without_simd_and_on_one_thread():
    """x264's plain C code: the same bytes on any CPU (its SIMD float mb-tree code is not bit-exact with C)."""
    with av.open(io.BytesIO(), "w", format="mp4") as out:
        stream = media.add_video_stream(out, 25, 96, 64)
        assert stream.codec_context.thread_count == 1
        assert "asm=0" in stream.options["x264-params"].split(":")
