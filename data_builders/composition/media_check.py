"""Is each media file of a sample what its column says, and readable? (C3PO samples: image, audio, video.)

Checked when the samples are read, so a corrupt file, or a file in the wrong column (a WAV as ``image``, a PNG as
``video``), fails naming the samples file, row and column instead of crashing the build later or landing in the
dataset. What is checked is what the builder and the probes use: an image decodes with Pillow; an audio file is one
libsndfile reads (WAV, FLAC, OGG/Opus, MP3) and decodes to at least one sample; a video has a video stream whose
packets demux and whose first frame decodes (PyAV), and ``check_video`` says whether it carries its own soundtrack
(a grounded audio modality, silenced by ``mute_audio`` like a separate audio file).
"""

from __future__ import annotations

from pathlib import Path


class MediaProblem(ValueError):
    """A media file is not usable as its column's modality; the reader adds the file, row and column."""


def check_image(path: str | Path) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise MediaProblem(f"not a readable image ({type(exc).__name__}: {exc})") from exc


def check_audio(path: str | Path) -> None:
    import soundfile as sf

    try:
        frames = 0
        for block in sf.blocks(str(path), blocksize=1 << 16, dtype="float32"):
            frames += len(block)
    except (sf.SoundFileError, RuntimeError, ValueError) as exc:
        raise MediaProblem(f"not a readable audio file; expected WAV, FLAC, OGG/Opus or MP3 (a video's soundtrack "
                           f"goes in the video column) ({type(exc).__name__}: {exc})") from exc
    if frames == 0:
        raise MediaProblem("the audio file holds no samples")


def check_video(path: str | Path) -> bool:
    """Whether the video has its own audio stream; MediaProblem when it is not a decodable video."""
    import av

    from omniaudit.data_builders.interventions import media
    from omniaudit.errors import InputError

    try:
        info = media.probe(path)
        with av.open(str(path)) as container:
            next(container.decode(video=0))
    except InputError as exc:
        raise MediaProblem(f"unusable video: {exc.message}") from exc
    except (av.error.FFmpegError, StopIteration, UnicodeDecodeError, ValueError) as exc:
        raise MediaProblem(f"not a decodable video ({type(exc).__name__}: {exc})") from exc
    return info.has_audio


CHECKS = {"image": check_image, "audio": check_audio, "video": check_video}
