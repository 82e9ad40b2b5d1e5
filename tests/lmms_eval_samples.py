"""lmms-eval ``--log_samples`` files for tests, in the exact format lmms-eval 0.7 writes, built through an exported
task's own ``utils.py`` (process_docs, doc_to_text, doc_to_target, process_results, the metrics' aggregations) on the
dataset's rows as lmms-eval loads them from the task YAML; the results file holds each metric's aggregate."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path


def task_utils(task_dir: Path):
    """The exported ``utils.py`` of one task folder, imported from its file as lmms-eval does."""
    spec = importlib.util.spec_from_file_location("utils", task_dir / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def task_rows(task_dir: Path):
    """The config's rows as lmms-eval loads them from the task YAML: ``dataset_path`` + ``dataset_name``, or a local
    builder (``parquet``) whose relative ``data_files`` are resolved against the YAML's folder (lmms-eval's
    ``_maybe_resolve_yaml_local_data_files``)."""
    import datasets

    config = _yaml(task_dir)
    kwargs = dict(config.get("dataset_kwargs") or {})
    if config["dataset_path"] == "parquet":
        kwargs["data_files"] = {split: [str(task_dir / f) if not Path(f).is_absolute() else f for f in files]
                                for split, files in kwargs["data_files"].items()}
    return datasets.load_dataset(config["dataset_path"], config.get("dataset_name"), split=config["test_split"],
                                 **kwargs)


def task_docs(task_dir: Path):
    """The rows lmms-eval hands the task's functions: the config as loaded, through ``process_docs``."""
    return task_utils(task_dir).process_docs(task_rows(task_dir))


def _yaml(task_dir: Path) -> dict:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))
    return yaml.load(next(task_dir.glob("*.yaml")).read_text(), Loader=Loader)


def write_log_samples(task_dir: Path, out: Path, answer, limit: int | None = None, date: str = "20260101_000000",
                      model: str | None = "qwen2_5_omni") -> Path:
    """``out/<date>_samples_<task>.jsonl`` (and ``<date>_results.json`` unless ``model`` is None) of a run whose answer
    to a document is ``answer(doc)``: text (generate_until) or a list of option log-likelihoods (multiple_choice)."""
    utils, docs = task_utils(task_dir), task_docs(task_dir)
    info = json.loads((task_dir / "omniaudit_task.json").read_text())
    task, lines, values = info["task"], [], {}
    for doc_id in range(len(docs) if limit is None else limit):
        doc = docs[doc_id]
        reply = answer(doc)
        if info["output_type"] == "multiple_choice":
            results = [(ll, False) for ll in reply]
            filtered = [[str(ll), "False"] for ll in reply]  # lmms-eval's sanitize_list: strings
        else:
            results, filtered = [reply.strip()], reply  # process_results gets the stripped text
        metrics = utils.process_results(doc, results)
        for metric, value in metrics.items():
            values.setdefault(metric, []).append(value)
        sample = {"doc_id": doc_id, "target": str(utils.doc_to_target(doc)), "filtered_resps": filtered,
                  "token_counts": [None], "doc_hash": hashlib.sha256(str(doc["id"]).encode()).hexdigest(),
                  **metrics, "input": utils.doc_to_text(doc)}
        lines.append(json.dumps(sample, ensure_ascii=False))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{date}_samples_{task}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if model is not None:  # one results file per lmms-eval run, for all its tasks
        file = out / f"{date}_results.json"
        results = json.loads(file.read_text()) if file.is_file() else {
            "results": {}, "configs": {}, "config": {"model": model, "model_args": "pretrained=/models/ckpt",
                                                     "limit": limit, "gen_kwargs": ""}}
        def aggregate(metric: str):  # each metric's aggregation, as the YAML names it
            return utils.aggregate_answered if metric == "omniaudit" else getattr(utils, f"aggregate_{metric}")

        results["results"][task] = {"alias": task, **{f"{m},none": aggregate(m)(v) for m, v in values.items()}}
        results["configs"][task] = {"task": task, "generation_kwargs": {"max_new_tokens": 32, "temperature": 0.0}}
        file.write_text(json.dumps(results), encoding="utf-8")
    return path
