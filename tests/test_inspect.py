"""Inspect both ways, offline: `omniaudit export inspect` writes a task file Inspect loads (item ids as sample ids,
media as content parts in prompt order, options in metadata); the `omniaudit/SPEC` model provider (found through its
entry point) answers an exported task as `omniaudit judge` does; `omniaudit import inspect` turns the eval log into a
predictions file that every audit reads to the same numbers as the judge run's; foreign logs and inputs are refused."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("inspect_ai")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect_ai.*")  # its retry's tenacity arguments

import inspect_ai  # noqa: E402
from inspect_ai import Task  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ContentAudio, ContentImage, ContentText  # noqa: E402

from omniaudit.cli import main  # noqa: E402
from omniaudit.errors import InputError  # noqa: E402
from omniaudit.evaluation.audit_outputs import audit_metrics  # noqa: E402
from omniaudit.inspect_export import export_inspect  # noqa: E402
from omniaudit.inspect_import import import_inspect, log_rows  # noqa: E402
from omniaudit.inspect_provider import ProviderError, judge_item  # noqa: E402
from omniaudit.runners import run_judge  # noqa: E402
from omniaudit.runners.items import load_items  # noqa: E402


def _eval(tasks, model: str, log_dir: Path, **kwargs):
    logs = inspect_ai.eval(tasks, model=model, log_dir=str(log_dir), display="none", **kwargs)
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return logs


def _task_module(folder: Path, name: str):
    """The exported task file, imported from its path as `inspect eval FILE` does."""
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _samples(data: bytes) -> np.ndarray:
    return sf.read(io.BytesIO(data), dtype="float64", always_2d=True)[0]


@pytest.fixture(scope="module")
def mixed_export(mixed_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("inspect") / "tasks"
    [task] = export_inspect(mixed_dataset, out, ["mixed"])
    return out, task


def test_the_task_file_gives_each_item_as_a_sample_with_its_media_in_prompt_order(mixed_export, mixed_dataset):
    out, task = mixed_export
    assert (task.task, task.items, task.file) == ("omniaudit_ds_mixed", 8, Path("omniaudit_ds.py"))
    source = (out / task.file).read_text()
    assert "omniaudit" not in "".join(line for line in source.splitlines() if line.startswith(("import", "from")))
    built = getattr(_task_module(out, "omniaudit_ds"), task.task)()
    assert isinstance(built, Task) and built.metadata["omniaudit"]["config"] == "mixed"
    assert built.config.temperature == 0.0 and built.config.max_tokens == 32
    items = load_items(mixed_dataset, "mixed")
    samples = list(built.dataset)
    assert [s.id for s in samples] == [i.id for i in items]
    for sample, item in zip(samples, items, strict=True):
        user = sample.input[-1]
        kinds = [c.type for c in user.content]
        assert kinds == [p.kind for p in item.media] + ["text"] and user.content[-1].text == item.prompt
        assert sample.metadata["options"] == item.options and sample.metadata["order"] == item.order
        assert (sample.input[0].content if item.system else None) == item.system
        # the provider rebuilds the item omniaudit's runners answer; audio as WAV with the same samples
        rebuilt = judge_item(sample.input)
        for field in ("id", "prompt", "options", "system", "order", "gold", "reference", "specialist", "condition"):
            assert getattr(rebuilt, field) == getattr(item, field), field
        assert [(p.kind, p.column, p.with_audio) for p in rebuilt.media] == [
            (p.kind, p.column, p.with_audio) for p in item.media]
        for mine, theirs in zip(rebuilt.media, item.media, strict=True):
            if mine.kind == "audio":
                assert mine.data[:4] == b"RIFF" and np.array_equal(_samples(mine.data), _samples(theirs.data))
            else:
                assert mine.data == theirs.data
    # each media input is written once, by content
    assert len(list((out / "media").iterdir())) == 4


def test_inspect_runs_the_task_with_the_omniaudit_provider_and_the_log_imports(mixed_export, mixed_dataset, tmp_path):
    out, task = mixed_export
    [log] = _eval(f"{out / task.file}@{task.task}", "omniaudit/scripted:random", tmp_path / "logs", epochs=2)
    assert main(["import", "inspect", log.location, "--out", str(tmp_path / "p.jsonl")]) == 0
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [(r["id"], r["run"]) for r in rows] == [(i.id, run) for run in (0, 1)
                                                   for i in load_items(mixed_dataset, "mixed")]
    first = rows[0]["provenance"]
    assert all(r["provenance"] == first for r in rows)
    assert first["judge"] == "inspect:omniaudit/scripted:random" and first["sampling"]["runs"] == 2
    assert first["model"]["runner"] == {"kind": "scripted", "model": "random"}
    assert first["dataset"]["config"] == "mixed" and first["selection"]["log"].startswith("sha256:")
    judged = tmp_path / "judged.jsonl"  # the same model through `omniaudit judge`: the same answers
    run_judge(mixed_dataset, "mixed", "scripted:random", judged)
    answers = {r["id"]: (r["raw"], r["label"]) for r in map(json.loads, judged.read_text().splitlines())}
    assert {r["id"]: (r["raw"], r["label"]) for r in rows if r["run"] == 0} == answers
    assert main(["import", "inspect", log.location, "--out", str(tmp_path / "p.jsonl")]) == 0  # its own file: replaced
    (tmp_path / "mine.txt").write_text("notes")
    assert main(["import", "inspect", log.location, "--out", str(tmp_path / "mine.txt")]) == 2


def _dataset(kind: str, request, root: Path) -> Path:
    """The audit's small built dataset (the session's for interventions and protocols), built when first asked."""
    from omniaudit.data_builders.composition import build_composition_dataset
    from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset

    if kind in ("interventions", "protocols"):
        return request.getfixturevalue("intervention_dataset" if kind == "interventions" else "protocol_dataset")
    if kind == "preference":
        return build_preference_dataset(root / "pref", spec=SyntheticSpec(n_pairs=40, seed=2))
    return build_composition_dataset(root / "comp", n_synthetic=12)


# audit -> (its planted scripted model, the audit's fast flags)
AUDITS = {"preference": ("verbose", ["--n-resamples", "30", "--no-source-classifier", "--no-controls"]),
          "interventions": ("deaf", ["--n-resamples", "30"]),
          "protocols": ("label-follower", ["--n-resamples", "30"]),
          "composition": ("audio-dominant", [])}


def _audit(kind: str, dataset: Path, files: list[Path], out: Path) -> dict:
    preds = [f"m={f}" for f in files] if kind != "interventions" else [str(files[0])]
    assert main(["audit", kind, "--dataset", str(dataset), "--predictions", *preds, *AUDITS[kind][1], "--out",
                 str(out)]) == 0
    return json.loads((out / "audit.json").read_text())


@pytest.mark.parametrize("kind", [pytest.param("preference", marks=pytest.mark.slow), "interventions",
                                  pytest.param("protocols", marks=pytest.mark.slow), "composition"])
def test_an_inspect_run_audits_as_the_same_model_through_omniaudit_judge(kind, request, tmp_path):
    """Every config of the audit run in Inspect with the planted model, each log imported, audited: the verdicts'
    numbers equal those of the judge run (protocols: 740 samples, ~20 s of Inspect)."""
    dataset, model = _dataset(kind, request, tmp_path), AUDITS[kind][0]
    tasks = export_inspect(dataset, tmp_path / "tasks", audit=kind)
    logs = _eval([f"{tmp_path / 'tasks' / t.file}@{t.task}" for t in tasks], f"omniaudit/scripted:{model}",
                 tmp_path / "logs")
    imported, judged = [], []
    for task, log in zip(tasks, logs, strict=True):
        assert log.eval.task == task.task
        imported.append(tmp_path / f"i-{task.config}.jsonl")
        import_inspect(log.location, imported[-1])
        judged.append(tmp_path / f"j-{task.config}.jsonl")
        run_judge(dataset, task.config, f"scripted:{model}", judged[-1])
    ours, theirs = (_audit(kind, dataset, files, tmp_path / name) for files, name in ((judged, "a"), (imported, "b")))
    numbers = audit_metrics(kind, ours)
    assert numbers and audit_metrics(kind, theirs) == numbers
    report = (tmp_path / "b" / "report.md").read_text()
    assert f"inspect:omniaudit/scripted:{model}" in report and str(tmp_path) not in report


def test_any_inspect_task_is_answered_as_free_form_items_and_its_log_is_not_imported(tmp_path):
    task = Task(dataset=[Sample(input="Name a colour.", id="q1"),
                         Sample(input=[ChatMessageUser(content=[ContentText(text="What is said?"), ContentAudio(
                             audio="data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAgD4AAAB9AAACABAAZGF0YQAAAAA=",
                             format="wav")])], id="q2")], name="plain")
    [log] = _eval(task, "omniaudit/scripted:random", tmp_path / "logs")
    assert [s.output.completion for s in log.samples] == ["I don't know."] * 2
    with pytest.raises(InputError, match="not of a task written by `omniaudit export inspect`"):
        log_rows(log.location)
    (tmp_path / "x.eval").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not an Inspect eval log"):
        log_rows(tmp_path / "x.eval")


def test_the_provider_refuses_what_a_runner_cannot_answer(tmp_path):
    assert judge_item([ChatMessageUser(content=[ContentImage(
        image="data:image/png;base64,iVBORw0KGgo="), ContentText(text="Bright?")])]).media[0].kind == "image"
    with pytest.raises(InputError, match="one item"):
        judge_item([ChatMessageUser(content="a"), ChatMessageAssistant(content="b"), ChatMessageUser(content="c")])
    task = Task(dataset=[Sample(input="Pick one.", id="q")], name="closed")
    with pytest.raises(ProviderError, match="unknown model argument"):
        inspect_ai.eval(task, model="omniaudit/scripted:oracle", model_args={"colour": "red"},
                        log_dir=str(tmp_path / "logs"), display="none")
    # a free-form item without a gold answer: the oracle has nothing to say, the sample ends in that error
    [log] = inspect_ai.eval(task, model="omniaudit/scripted:oracle", log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "error" and "no gold answer for scripted:oracle" in log.error.message


@pytest.mark.slow
def test_a_local_model_answers_through_inspect_as_through_omniaudit_judge(tiny_models, protocol_dataset, tmp_path):
    """The tiny audio LM (hf:, option scores) on the clean-audio pairwise trials: the same replies, labels and option
    probabilities (to float rounding) through Inspect, where each clip arrives as the exported WAV, as through
    `omniaudit judge` on the dataset's FLAC (~40 s)."""
    spec = f"hf:{tiny_models['audio']}"
    ids = [i.id for i in load_items(protocol_dataset, "pairwise", ["cleanness"])]
    [task] = export_inspect(protocol_dataset, tmp_path / "tasks", ["pairwise"])
    [log] = _eval(f"{tmp_path / 'tasks' / task.file}@{task.task}", f"omniaudit/{spec}", tmp_path / "logs",
                  sample_id=ids, model_args={"batch_size": 1})
    rows, _ = log_rows(log.location)
    run_judge(protocol_dataset, "pairwise", spec, tmp_path / "j.jsonl", ["cleanness"], batch_size=1)
    judged = {r["id"]: r for r in map(json.loads, (tmp_path / "j.jsonl").read_text().splitlines())}
    assert [r["id"] for r in rows] == ids and len(judged) == len(ids)
    for row in rows:
        theirs = judged[row["id"]]
        fields = ("raw", "label", "answer_path")
        assert [row[k] for k in fields] == [theirs[k] for k in fields]
        assert row["option_probs"] == pytest.approx(theirs["option_probs"], abs=1e-6)
    assert rows[0]["provenance"]["model"]["runner"]["kind"] == "hf"
