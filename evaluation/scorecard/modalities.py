"""What a model takes and what an audit's items carry, known before any model call: the scorecard skips an audit
whose items carry a modality the model does not take."""

from __future__ import annotations

from pathlib import Path


def model_accepts(spec: str, runner: dict) -> frozenset[str]:
    """The input modalities model ``spec`` takes, known before any model call: ``openai:`` what its ``--dialect``
    can send, any other runner what it declares (:attr:`~omniaudit.runners.base.Runner.accepts`: ``scripted:`` every
    kind, ``hf:`` what the loaded model and its processor encode); text always. The ``hf:`` model stays loaded for
    its runs (``make_judge`` keeps it)."""
    from omniaudit.runners.base import as_runner
    from omniaudit.runners.factory import make_judge
    from omniaudit.runners.payload import ACCEPTS

    kind = spec.partition(":")[0]
    if kind == "openai":  # known from the dialect, without asking the server
        return frozenset({"text", *ACCEPTS[runner.get("dialect", "vllm")]})
    judge = make_judge(spec) if kind == "scripted" else make_judge(spec, **runner)
    return frozenset({"text", *as_runner(judge).accepts})


def dataset_modalities(dataset: str | Path, config: str) -> tuple[str, ...]:
    """The modalities the items of a built config carry (``text`` always; a video column whose rows send their own
    soundtrack is ``video+audio``), from its schema and its ``video_audio`` column."""
    import datasets

    from omniaudit.data_builders.hub import load_hub_dataset

    ds = load_hub_dataset(dataset, config)
    kinds = {datasets.Audio: "audio", datasets.Image: "image", datasets.Video: "video"}
    found = {"text"}
    for feature in ds.features.values():
        kind = kinds.get(type(feature))
        if kind is None:
            continue
        if kind == "video" and "video_audio" in ds.column_names and any(ds["video_audio"]):
            kind = "video+audio"
        found.add(kind)
    return tuple(sorted(found))
