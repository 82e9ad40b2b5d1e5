"""The ``swap_<modality>`` ablations: a sample's audio or image replaced by another sample's of the same template.

Where ``mute_audio`` / ``drop_image`` remove a modality, a swap keeps the input's layout and replaces the modality's
*content* with the same template's evidence from another sample: a model that still gives the sample's answer did
not read that modality; one whose answer follows the donor did. The donor is drawn per sample and modality from the
other selected samples of the same ``template_id`` that hold the modality in their own file (a separate ``audio``
file; a video's own soundtrack is never swapped) with different bytes, preferring donors whose answer differs
(after the grader's normalisation), so the swapped evidence points elsewhere. The draw is seeded by the build seed
and the sample's id and modality name, so it depends neither on the order of the samples nor on which other
modalities are swapped (``--swap image`` and ``--swap audio image`` pick the same image donors). A sample without a
donor gets no swap copy (counted in ``build_info.json``).
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError

SWAPPABLE = ("audio", "image")


def swap_name(modality: str) -> str:
    return f"swap_{modality}"


def check_swap(modalities) -> tuple[str, ...]:
    """The requested swap modalities, validated (audio, image), in a fixed order."""
    wrong = [m for m in modalities if m not in SWAPPABLE]
    if wrong:
        raise InputError(f"cannot swap {', '.join(map(str, wrong))}: expected any of {', '.join(SWAPPABLE)}",
                         value=list(modalities))
    return tuple(m for m in SWAPPABLE if m in set(modalities))


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def choose_donors(chosen: pd.DataFrame, modalities: tuple[str, ...], seed: int = 0) -> dict[tuple[str, str], str]:
    """``(sample id, modality) -> donor sample id`` for every sample that has a donor (see the module docstring)."""
    from omniaudit.answer_match import normalize
    from omniaudit.data_builders.composition.samples import media_path

    donors: dict[tuple[str, str], str] = {}
    for modality in modalities:
        paths = {r["id"]: media_path(r.get(modality)) for r in chosen.to_dict("records")}
        digests = {i: _digest(p) for i, p in paths.items() if p is not None}
        for _, group in chosen.groupby("template_id", sort=True):
            ids = sorted(i for i in group["id"] if i in digests)
            answers = dict(zip(group["id"], group["answer"].map(lambda a: normalize(str(a))), strict=True))
            for sid in ids:
                others = [d for d in ids if d != sid and digests[d] != digests[sid]]
                if not others:
                    continue
                differ = [d for d in others if answers[d] != answers[sid]]
                pool = differ or others
                rng = np.random.default_rng([seed, zlib.crc32(str(sid).encode()), zlib.crc32(modality.encode())])
                donors[(sid, modality)] = pool[int(rng.integers(len(pool)))]
    return donors
