"""Which model answered: an identity every predictions row records and the response cache is keyed by.

- ``hf:`` (a local folder or a cached Hub repo): a hash of the model's config, its weights index and, per weight file,
  its name, size, header and one MiB from its middle (fine-tuned weights differ there; the whole 15 GB of a 7B model
  are not read), plus the Hub revision when the folder is a Hub cache snapshot; and ``heldout_fold``, the fold a
  cross-fitted judge was held out from, when its folder has the ``heldout_selection.json`` that
  ``training/sft.py --heldout_fold K`` writes (merging fold files checks each judge answered only that fold).
- ``openai:``: what the server says of the model (``/v1/models``), without fields that change per request
  (``OpenAIJudge.identity``).
- ``scripted:``: its name.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from omniaudit.errors import InputError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")
META_FILES = ("config.json", "generation_config.json", "model.safetensors.index.json", "pytorch_model.bin.index.json",
              "adapter_config.json", "tokenizer_config.json", "chat_template.jinja", "chat_template.json",
              "preprocessor_config.json", "processor_config.json")
SAMPLE_BYTES = 1 << 20
SELECTION_FILE = "heldout_selection.json"  # a cross-fitted judge's record (omniaudit.training.heldout)


def _model_folder(path: str) -> tuple[Path | None, str | None]:
    """(local folder, Hub revision or None); (None, None) when the model is neither a folder nor cached."""
    folder = Path(path)
    if folder.is_dir():
        return folder, None
    try:
        from huggingface_hub import snapshot_download

        snapshot = Path(snapshot_download(path, local_files_only=True))
    except Exception:  # noqa: BLE001 - not cached or not a repo id
        return None, None
    return snapshot, snapshot.name


def _weights_sample(file: Path) -> bytes:
    size = file.stat().st_size
    with file.open("rb") as fh:
        head = fh.read(8)
        if file.suffix == ".safetensors" and len(head) == 8:  # the JSON header: tensor names, dtypes, shapes
            head += fh.read(min(int.from_bytes(head, "little"), 100 << 20))
        fh.seek(max(0, size // 2 - SAMPLE_BYTES // 2))
        return head + fh.read(SAMPLE_BYTES)


def heldout_fold(folder: str | Path) -> int | None:
    """The fold a cross-fitted judge was trained without (``heldout_fold`` of its ``heldout_selection.json``), or
    None when the folder has no such file; an unreadable one is an error (guessing could score in-fold answers)."""
    file = Path(folder) / SELECTION_FILE
    if not file.is_file():
        return None
    try:
        fold = json.loads(file.read_text(encoding="utf-8")).get("heldout_fold")
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"not a held-out selection record ({exc})", file=file) from exc
    if fold is not None and (not isinstance(fold, int) or isinstance(fold, bool) or fold < 0):
        raise InputError("expected heldout_fold to be a fold number", file=file, column="heldout_fold", value=fold)
    return fold


def local_model_identity(path: str) -> dict:
    """``{"kind": "hf", "model": path, "revision": ..., "sha256": ...}`` of a local or cached model, plus
    ``heldout_fold`` for a cross-fitted judge (:func:`heldout_fold`)."""
    folder, revision = _model_folder(path)
    identity = {"kind": "hf", "model": Path(path).name if Path(path).is_dir() else path, "revision": revision}
    if folder is None:
        return {**identity, "sha256": None}
    if (fold := heldout_fold(folder)) is not None:
        identity["heldout_fold"] = fold
    h = hashlib.sha256()
    for name in META_FILES:
        if (folder / name).is_file():
            h.update(f"{name}\0".encode() + (folder / name).read_bytes())
    for file in sorted(f for f in folder.rglob("*") if f.suffix in WEIGHT_SUFFIXES and f.is_file()):
        h.update(f"{file.relative_to(folder).as_posix()}\0{file.stat().st_size}\0".encode())
        h.update(_weights_sample(file))
    return {**identity, "sha256": h.hexdigest()[:32]}


def runner_identity(judge, spec: str, refresh: bool = False) -> dict:
    """The identity of a runner made by ``make_judge``: its own ``identity()`` where it has one, else by kind.

    ``refresh`` asks a server again: `transformers serve` lists a local model under ``/v1/models`` only once a
    request has loaded it, so a run that began with the model unlisted asks once more at its end."""
    if hasattr(judge, "identity"):
        return dict(judge.identity(refresh=True) if refresh else judge.identity())
    kind, _, rest = spec.partition(":")
    if kind == "hf":
        return local_model_identity(rest)
    return {"kind": kind, "model": rest}
