"""Speed and memory of the intervention builder vs a full re-encode per output, in the same run.

Twenty 10-s 720p H.264 + AAC clips are synthesised. Shift (+2 s), Mute and Swap of every clip are written twice:
by the builder's writer (video packets copied, only the audio encoded) and by a full re-encode of each output
(every frame decoded and encoded again with libx264 ``veryfast``/crf 23 + AAC, as ``ffmpeg -i in.mp4 out.mp4``
would do, but with a faster preset than ffmpeg's default ``medium``, so the baseline is favoured). Both run through
the same libav (PyAV). Then the whole ``build interventions`` (both shifts, Mute, Swap, Parquet for three configs)
runs on 5 and on 20 clips in fresh processes, to show that peak memory does not grow with the number of clips.

Last line: ``speedup=<x> clips_per_s=<y>`` (``clips_per_s``: source clips per second through the whole builder).

    python benchmarks/interventions.py [--clips 20] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from omniaudit.data_builders.interventions import SyntheticClipSpec, audio_edits, media, synthesize_clips


def reencode(info: media.ClipInfo, dst: Path, audio: np.ndarray, rate: int) -> None:
    """The baseline: decode every frame and encode it again, with the new audio track."""
    import av

    with av.open(info.path) as inp, av.open(str(dst), "w", format="mp4") as out:
        vin = inp.streams.video[0]
        vout = out.add_stream("libx264", rate=vin.average_rate)
        vout.width, vout.height, vout.pix_fmt = vin.codec_context.width, vin.codec_context.height, "yuv420p"
        vout.options = {"preset": "veryfast", "crf": "23"}
        aout = media.add_audio_stream(out, audio.shape[0], rate, "aac")
        for frame in inp.decode(vin):
            frame.pict_type = 0  # let the encoder choose frame types, as the ffmpeg CLI does
            for packet in vout.encode(frame):
                out.mux(packet)
        for packet in vout.encode(None):
            out.mux(packet)
        media.mux_audio(out, aout, audio, start_pts=0)


def outputs(infos: list[media.ClipInfo]):
    """(clip, name, audio) for Shift +2 s, Mute and Swap (partner: the next clip) of every clip."""
    tracks = [media.timeline_audio(i)[0] for i in infos]
    for k, info in enumerate(infos):
        rate = info.audio_rate
        partner = tracks[(k + 1) % len(infos)]
        yield info, "shift", audio_edits.shift(tracks[k], rate, 2.0)
        yield info, "mute", audio_edits.mute(tracks[k])
        yield info, "swap", audio_edits.fit_length(partner, tracks[k].shape[1], loop=True)


def time_writer(infos, folder: Path, write) -> float:
    folder.mkdir()
    work = list(outputs(infos))  # decode once, outside the timing: both writers get the same arrays
    start = time.perf_counter()
    for info, name, audio in work:
        write(info, folder / f"{Path(info.path).stem}_{name}.mp4", audio, info.audio_rate)
    return time.perf_counter() - start


BUILD = """
import json, resource, sys, time
from omniaudit.data_builders.interventions import build_interventions_dataset
t = time.perf_counter()
build_interventions_dataset(sys.argv[2], sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build_in_subprocess(manifest: Path, out: Path) -> dict:
    res = subprocess.run([sys.executable, "-c", BUILD, str(manifest), str(out)], check=True, capture_output=True,
                         text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clips", type=int, default=20)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="omniaudit-bench-"))
    stamp = root / ".omniaudit-benchmark"  # its subfolders below are deleted on a rerun: only ever our own
    if root.is_dir() and any(root.iterdir()) and not stamp.exists():
        parser.error(f"--workdir {root} holds files this benchmark did not write; give a new or empty folder")
    root.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    spec = SyntheticClipSpec(n_clips=args.clips, duration=10.0, width=1280, height=720, sample_rate=48000)
    manifest = root / "clips" / "manifest.jsonl"
    if not manifest.exists() or len(manifest.read_text().splitlines()) != args.clips:  # reuse a --workdir
        t = time.perf_counter()
        synthesize_clips(root / "clips", spec)
        print(f"synthesised {args.clips} clips of 10 s at 1280x720 in {time.perf_counter() - t:.1f} s")
    for old in ("copy", "reencode", "ds5", "ds"):
        shutil.rmtree(root / old, ignore_errors=True)
    infos = [media.probe(p) for p in sorted((root / "clips").glob("*.mp4"))]

    copy_s = time_writer(infos, root / "copy", media.write_with_audio)
    full_s = time_writer(infos, root / "reencode", reencode)
    n_out = 3 * len(infos)
    print(f"stream copy: {n_out} outputs in {copy_s:.2f} s ({copy_s / n_out * 1000:.0f} ms each)")
    print(f"full re-encode: {n_out} outputs in {full_s:.2f} s ({full_s / n_out * 1000:.0f} ms each)")

    small = root / "clips" / "manifest_5.jsonl"
    small.write_text("".join(manifest.read_text().splitlines(keepends=True)[:5]))
    runs = {5: build_in_subprocess(small, root / "ds5"), args.clips: build_in_subprocess(manifest, root / "ds")}
    for n, r in runs.items():
        print(f"build interventions, {n} clips: {r['seconds']:.1f} s, peak RSS {r['peak_rss_mb']:.0f} MB")
    growth = runs[args.clips]["peak_rss_mb"] / runs[5]["peak_rss_mb"]
    print(f"peak memory {args.clips} clips / 5 clips: {growth:.2f}x")
    clips_per_s = args.clips / runs[args.clips]["seconds"]
    print(f"speedup={full_s / copy_s:.1f} clips_per_s={clips_per_s:.2f}")


if __name__ == "__main__":
    main()
