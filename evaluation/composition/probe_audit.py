"""The attention probe of the composition audit (C3PO §5): its models checked before any judge call, the samples it
reads, and each model's entropy gap split by its own graded answers (:mod:`.attention` measures them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from omniaudit.errors import InputError
from omniaudit.evaluation.audit_outputs import shown_input
from omniaudit.evaluation.composition.replies import ungraded_mask


def check_attention_models(models: list[str], config, needed: dict[str, str] | None = None) -> None:
    """Load every attention model (eager attention), check its layers against the depth range and that it encodes
    every modality of the probed samples (``needed``: modality -> a sample id holding it), then release it: run
    before any judge call, so a wrong path, a model with too few layers or one that cannot take the samples' media
    fails before paid calls are made."""
    import gc

    from omniaudit.evaluation.composition.attention import AttentionProbe

    for model in models:
        probe = AttentionProbe(model, config)
        probe.check_modalities(needed or {})
        del probe
        gc.collect()


def probe_samples(dataset: str | Path) -> tuple[list[dict], list[str]]:
    """The samples the attention probe reads (no video, an image or an audio; media left encoded) and the ids of the
    others."""
    from omniaudit.data_builders.hub import load_config

    table = load_config(dataset, "samples", columns=["id", "system", "prompt", "category", "tier", "image", "audio",
                                                     "video"])
    records = table.to_dict("records")
    rows = [r for r in records if r["video"] is None and (r["image"] is not None or r["audio"] is not None)]
    left_out = [r["id"] for r in records if r not in rows]
    if not rows:
        raise InputError("no sample without a video holds an image or an audio: nothing for the attention probe",
                         file=dataset)
    return rows, left_out


def probe_modalities(rows: list[dict]) -> dict[str, str]:
    """Modality -> the first probed sample holding it."""
    out: dict[str, str] = {}
    for r in rows:
        for modality in ("image", "audio"):
            if r[modality] is not None:
                out.setdefault(modality, r["id"])
    return out


def attention_gaps(dataset: str | Path, correct: dict[str, pd.Series],
                   config) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """Per model and sample: mid-layer entropy, alpha per modality and commit depth, probed on the graded item's own
    texts (``system`` + ``prompt``) with its image and audio; samples with a video are left out (as in the paper:
    the attention over a video's frames is not split into the three modalities). dH (correct - incorrect) per model
    and category, and pooled, each model's entropies split by its own correctness (``correct``: model -> bool per
    sample id); routing tables (``routing_tables``). Returns the summary, the per-sample table and the per-layer
    table (:func:`.figures.layer_rows`)."""
    from omniaudit.evaluation.composition.attention import AttentionProbe, entropy_gaps, routing_tables
    from omniaudit.evaluation.composition.figures import layer_rows

    rows, left_out = probe_samples(dataset)  # media stay encoded ({"bytes", "path"} cells)
    ids = [r["id"] for r in rows]
    ok = {}
    for model, series in correct.items():
        values = series.reindex(ids)
        if values.isna().any():
            raise InputError(f"no graded answer of attention model {model} for sample "
                             f"'{values.index[values.isna()][0]}'", file=dataset)
        ok[model] = values.to_numpy(bool)
    category = np.array([r["category"] for r in rows])
    h_mid, per_sample, layers = {}, [], []
    for model in correct:
        probe = AttentionProbe(model, config)
        results = [probe.sample(r["id"], r["prompt"], r["image"] and r["image"]["bytes"],
                                r["audio"] and r["audio"]["bytes"], r["system"]) for r in rows]
        del probe
        h_mid[model] = np.array([x["h_mid"] for x in results])
        per_sample += [{"model": model, "id": r["id"], "category": r["category"], "tier": int(r["tier"]),
                        "modalities": x["modalities"], "correct": bool(good), "h_mid": x["h_mid"],
                        "commit_depth": x["commit_depth"], **{f"alpha_{m}": v for m, v in x["alpha_mean"].items()}}
                       for r, x, good in zip(rows, results, ok[model], strict=True)]
        layers += [row for r, x, good in zip(rows, results, ok[model], strict=True)
                   for row in layer_rows(model, r, x, good)]
    frame = pd.DataFrame(per_sample)
    out = entropy_gaps(h_mid, ok, category, config.n_resamples, config.seed)
    out["routing"] = routing_tables(frame, config.n_resamples, config.seed)
    out["depth_range"] = list(config.depth_range)
    out["correctness"] = "per model: strict majority over that model's own graded runs"
    out["probe_inputs"] = {"text": "the graded item's system and prompt", "media": ["image", "audio"],
                           "n_probed": len(rows), "n_left_out": len(left_out),
                           "left_out": "samples with a video (or without image and audio)",
                           "left_out_ids": left_out}
    return out, frame, pd.DataFrame(layers)


def attention_of(model_runs: dict, by_file: dict[Path, list[pd.DataFrame]], dataset, config, out: Path):
    """(entropy gaps, probed samples, layer rows) of the attention models, each judged right on a sample by the
    majority of its graded runs (a tie is not a majority)."""
    correct = {}
    for m, model_files in model_runs.items():
        frames = list({id(g): g for f in model_files for g in by_file[Path(f).resolve()]}.values())
        rows = pd.concat(frames)
        # over its graded runs: an ungraded answer is neither right nor wrong (a sample no run of the model graded
        # counts as not right: the probe splits every sample)
        correct[m] = rows.assign(correct=rows["correct"].astype(float).where(~ungraded_mask(rows))).groupby(
            "id")["correct"].mean().fillna(0) > 0.5
    entropy, probed, layers = attention_gaps(dataset, correct, config)
    for m, model_files in model_runs.items():
        entropy["models"][m]["runs"] = [shown_input(f, out) for f in model_files]
    return entropy, probed, layers
