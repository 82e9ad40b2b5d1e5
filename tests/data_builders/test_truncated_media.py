"""Issue 26: a truncated MP4 (moov at the front, the mdat cut short) is refused at build time, naming the file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from media_clips import noise_audio, write_clip

from omniaudit.cli import main

pytestmark = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs ffmpeg for -movflags +faststart")


def _faststart(src: Path, dst: Path) -> Path:
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(src), "-c", "copy", "-movflags", "+faststart",
                    str(dst)], check=True)
    return dst


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> Path:
    """``a``/``b``: intact 5.28 s clips with the index at the front; ``t``: ``a`` with its last third of bytes cut."""
    root = tmp_path_factory.mktemp("clips")
    for name, seed in (("a", 0), ("b", 1)):
        write_clip(root / f"raw_{name}.mp4", seconds=5.28, audio=noise_audio(5.28, seed))
        _faststart(root / f"raw_{name}.mp4", root / f"{name}.mp4")
    data = (root / "a.mp4").read_bytes()
    (root / "t.mp4").write_bytes(data[: len(data) * 2 // 3])
    return root


def _copy(clips: Path, folder: Path, names: dict[str, str]) -> Path:
    folder.mkdir()
    for dst, src in names.items():
        shutil.copy(clips / f"{src}.mp4", folder / dst)
    return folder


def _refused(capsys, args: list[str], out: Path, file: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert file in err and "declares 5.28 s, decodes" in err and "truncated?" in err, err
    assert not out.exists()


def test_probe_refuses_the_truncated_copy_and_passes_the_intact_one(clips):
    from omniaudit.data_builders.interventions import media
    from omniaudit.errors import InputError

    assert media.probe(clips / "a.mp4").duration == pytest.approx(5.28)
    with pytest.raises(InputError, match=r"t\.mp4.*video stream declares 5\.28 s, decodes \d\.\d\d s: truncated\?"):
        media.probe(clips / "t.mp4")


def _built_or_refused(capsys, args: list[str], out, bad_file: str | None) -> None:
    """The truncated file is refused naming it (nothing written); the intact one builds."""
    if bad_file:
        _refused(capsys, args, out, bad_file)
    else:
        assert main(args) == 0 and out.is_dir()


@pytest.mark.parametrize("bad", [True, False])
def test_build_interventions(clips, tmp_path, capsys, bad):
    folder = _copy(clips, tmp_path / "m", {"x.mp4": "t" if bad else "a", "y.mp4": "b"})
    rows = [{"id": "x", "video": "x.mp4"}, {"id": "y", "video": "y.mp4"}]
    (folder / "m.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    args = ["build", "interventions", "--manifest", str(folder / "m.jsonl"), "--out", str(out)]
    _built_or_refused(capsys, args, out, "x.mp4" if bad else None)


@pytest.mark.parametrize("bad", [True, False])
def test_build_interventions_ood_sync(clips, tmp_path, capsys, bad):
    folder = _copy(clips, tmp_path / "ood", {"x__off+0.00.mp4": "t" if bad else "a", "y__off+0.40.mp4": "b"})
    out = tmp_path / "out"
    args = ["build", "interventions", "--ood-sync", str(folder), "--out", str(out)]
    _built_or_refused(capsys, args, out, "x__off+0.00.mp4" if bad else None)


@pytest.mark.parametrize("bad", [True, False])
def test_build_composition(clips, tmp_path, capsys, bad):
    folder = _copy(clips, tmp_path / "c", {"v.mp4": "t" if bad else "a"})
    row = {"id": "v1", "template_id": "T", "template_name": "T", "category": "CC", "tier": 1, "video": "v.mp4",
           "question": "q", "answer": "a", "evidence_modality": "audio", "generation_confidence": 5,
           "auditor_decision": "ACCEPT", "difficulty": 6}
    (folder / "s.jsonl").write_text(json.dumps(row) + "\n")
    out = tmp_path / "out"
    args = ["build", "composition", "--samples", str(folder / "s.jsonl"), "--out", str(out)]
    _built_or_refused(capsys, args, out, "v.mp4" if bad else None)


def _wav(path: Path, seconds: float = 3.0, cut: float | None = None) -> Path:
    """A mono 16 kHz WAV; ``cut``: keep only that share of its bytes (the header still declares the whole)."""
    import wave

    import numpy as np

    samples = (np.sin(np.arange(int(16000 * seconds)) * 0.05) * 8000).astype(np.int16)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(samples.tobytes())
    if cut is not None:
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * cut)])
    return path


def test_a_wav_cut_short_of_its_header_is_refused_naming_it(tmp_path):
    """FFmpeg times a WAV by its file size, so a cut WAV decodes "to its end": its header's data size tells."""
    from omniaudit.data_builders.interventions.media import check_intact
    from omniaudit.errors import InputError

    check_intact(_wav(tmp_path / "whole.wav"))
    cut = _wav(tmp_path / "cut.wav", cut=1 / 3)
    with pytest.raises(InputError, match=r"cut\.wav.*the WAV data chunk declares 96000 bytes, the file holds"):
        check_intact(cut)
