"""`omniaudit export lmms-eval`: a task YAML lmms-eval's loader takes, whose utils.py (imported from the exported
file) gives each real row's prompt and media in prompt order, as omniaudit's own runners send them."""

import importlib.util
import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml
from lmms_eval_samples import task_docs, task_utils

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.lmms_eval_export import ExportOptions, export_lmms_eval
from omniaudit.runners.items import load_items

LMMS_VENV = Path(os.environ.get("OMNIAUDIT_LMMS_VENV", "/work/lmms_venv"))


def _function_loader(task_dir: Path):
    """A YAML loader resolving ``!function utils.NAME`` to the exported file's function, as lmms-eval's does."""

    class Loader(yaml.SafeLoader):
        pass

    def function(loader, node):
        module, _, name = loader.construct_scalar(node).rpartition(".")
        spec = importlib.util.spec_from_file_location(module, task_dir / f"{module}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return getattr(mod, name)

    Loader.add_constructor("!function", function)
    return Loader


@pytest.fixture(scope="module")
def exported(mixed_dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("lmms") / "tasks"
    tasks = export_lmms_eval(mixed_dataset, out, ["mixed"])
    return out / tasks[0].task, tasks[0]


def test_yaml_is_an_lmms_eval_task_of_the_config(exported, mixed_dataset):
    folder, task = exported
    assert task.task == "omniaudit_ds_mixed" and task.items == 8 and task.video_audio
    text = (folder / f"{task.task}.yaml").read_text()
    assert "use_audio_in_video" in text  # the header says how to send videos with their soundtrack
    config = yaml.load(text, Loader=_function_loader(folder))
    assert config["task"] == task.task and config["test_split"] == "train" and "dataset_name" not in config
    # the config's shards, by paths relative to the YAML's folder: no path of this machine is written
    assert config["dataset_path"] == "parquet" and str(mixed_dataset.parent) not in text
    [shard] = config["dataset_kwargs"]["data_files"]["train"]
    assert not Path(shard).is_absolute() and (folder / shard).resolve() == next(
        (mixed_dataset / "mixed").glob("*.parquet")).resolve()
    assert config["output_type"] == "generate_until" and "doc_to_choice" not in config
    assert config["generation_kwargs"] == {"max_new_tokens": 32, "temperature": 0.0, "do_sample": False,
                                           "num_beams": 1}
    for name in ("process_docs", "doc_to_visual", "doc_to_text", "doc_to_messages", "doc_to_target",
                 "process_results"):
        assert callable(config[name]) and config[name].__name__ == name
    answered, slot_a = config["metric_list"]  # the mixed config's closed rows with an order: the slot-A rate
    assert answered["metric"] == "omniaudit" and answered["higher_is_better"]
    assert answered["aggregation"]([{"response": "x"}, {"response": " "}]) == 0.5
    assert slot_a["metric"] == "slot_a" and not slot_a["higher_is_better"]
    assert slot_a["aggregation"]([1.0, None, 0.0, 0.5, 1.0]) == 0.625
    info = json.loads((folder / "omniaudit_task.json").read_text())
    assert info["media"] == {"audio_1": "audio", "audio_2": "audio", "image": "image", "video": "video"}
    assert info["metrics"] == ["slot_a"]


def test_dataset_path_given_or_a_hub_id_is_written_as_it_is(mixed_dataset, tmp_path):
    [task] = export_lmms_eval(mixed_dataset, tmp_path / "t", ["mixed"], options=ExportOptions(dataset_path="me/mixed"))
    config = yaml.load((tmp_path / "t" / task.yaml).read_text(), Loader=_function_loader(tmp_path / "t" / task.task))
    assert (config["dataset_path"], config["dataset_name"]) == ("me/mixed", "mixed")
    assert "dataset_kwargs" not in config


def _decoded(data: bytes) -> np.ndarray:
    array, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return array.mean(axis=1)


def test_utils_give_each_row_the_prompt_and_media_omniaudit_sends(exported, mixed_dataset):
    folder, _ = exported
    utils, docs = task_utils(folder), task_docs(folder)
    items = load_items(mixed_dataset, "mixed")
    assert [d["id"] for d in docs] == [i.id for i in items]
    for doc, item in zip(docs, items, strict=True):
        visuals, messages = utils.doc_to_visual(doc), utils.doc_to_messages(doc)
        assert len(visuals) == len(item.media)
        user = messages[-1]["content"]
        assert [c["type"] for c in user] == [p.kind for p in item.media] + ["text"] and user[-1]["text"] == item.prompt
        for part, visual, content in zip(item.media, visuals, user, strict=False):
            if part.kind == "audio":  # simple models: the samples; chat models: the stored file
                np.testing.assert_array_equal(visual["array"], _decoded(part.data))
                assert visual["sampling_rate"] == 16000 and Path(content["url"]).read_bytes() == part.data
            elif part.kind == "image":
                assert visual.size == (48, 32) and content["url"].size == (48, 32)
            else:
                assert Path(visual).suffix == ".mp4" and Path(visual).read_bytes() == part.data == \
                    Path(content["url"]).read_bytes()
        if item.system:
            assert messages[0] == {"role": "system", "content": [{"type": "text", "text": item.system}]}
            assert utils.doc_to_text(doc) == f"{item.system}\n\n{item.prompt}"
        else:
            assert len(messages) == 1 and utils.doc_to_text(doc) == item.prompt
        record = utils.process_results(doc, ["B"])["omniaudit"]
        assert (record["id"], record["order"], record["options"], record["response"]) == (
            item.id, item.order, item.options, "B")
        assert record["config"] == "mixed" and record["items"] == 8
    # media follow the row's own prompt order ('media'), not the schema's column order
    ab = next(i for i, d in enumerate(docs) if d["id"] == "pair/1/AB")
    swapped = {**docs[ab], "media": ["audio_2", "audio_1"]}
    first, second = (v["array"] for v in utils.doc_to_visual(swapped))
    np.testing.assert_array_equal(first, _decoded(items[ab].media[1].data))
    np.testing.assert_array_equal(second, _decoded(items[ab].media[0].data))
    assert [c["url"] for c in utils.doc_to_messages(swapped)[0]["content"][:2]] == [
        c["url"] for c in utils.doc_to_messages(docs[ab])[0]["content"][1::-1]]


def test_rows_of_another_build_stop_the_task(exported, mixed_dataset):
    from omniaudit.data_builders.hub import load_hub_dataset

    folder, _ = exported
    shuffled = load_hub_dataset(mixed_dataset, "mixed").select([1, 0, 2, 3, 4, 5, 6, 7])
    with pytest.raises(ValueError, match="not those of the dataset build"):
        task_utils(folder).process_docs(shuffled)


def test_multiple_choice_only_for_closed_configs(protocol_dataset, mixed_dataset, tmp_path):
    with pytest.raises(InputError, match="free-form"):
        export_lmms_eval(mixed_dataset, tmp_path / "mc", ["mixed"],
                         options=ExportOptions(output_type="multiple_choice"))
    [task] = export_lmms_eval(protocol_dataset, tmp_path / "ok", ["pairwise"], "protocols",
                              ExportOptions(name="judge", output_type="multiple_choice"))
    config = yaml.load((tmp_path / "ok" / task.yaml).read_text(), Loader=_function_loader(tmp_path / "ok" / task.task))
    assert task.task == "judge_pairwise" and config["output_type"] == "multiple_choice"
    assert "generation_kwargs" not in config and config["doc_to_choice"]({"options": ["A", "B"]}) == ["A", "B"]
    assert config["doc_to_target"]({"options": ["A", "B"], "gold": "B"}) == 1


def test_cli_exports_an_audits_configs_and_refuses_others(protocol_dataset, tmp_path, capsys):
    out = tmp_path / "tasks"
    assert main(["export", "lmms-eval", "--dataset", str(protocol_dataset), "--audit", "protocols",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [
        "omniaudit_ds_blueprint", "omniaudit_ds_cue_conflict", "omniaudit_ds_pairwise", "omniaudit_ds_reference"]
    assert "--include_path" in printed and (out / ".omniaudit.json").is_file()
    assert main(["export", "lmms-eval", "--dataset", str(protocol_dataset), "--audit", "protocols", "--config",
                 "diagnostic", "--out", str(tmp_path / "x")]) == 2
    assert "reads configs blueprint" in capsys.readouterr().err
    assert main(["export", "lmms-eval", "--dataset", str(protocol_dataset), "--out", str(tmp_path / "y")]) == 2


@pytest.mark.slow
@pytest.mark.skipif(not (LMMS_VENV / "bin" / "python").is_file(), reason="no lmms-eval venv (OMNIAUDIT_LMMS_VENV)")
def test_lmms_eval_task_manager_loads_the_task_and_runs_its_functions(exported, tmp_path):
    """lmms-eval's own TaskManager (simple and chat task classes) on the exported folder, in its own venv."""
    folder, task = exported
    script = (
        "import json, sys\n"
        "from lmms_eval.tasks import TaskManager, get_task_dict\n"
        "tm = TaskManager(include_path=sys.argv[1], include_defaults=False)\n"
        "out = {'tasks': tm.all_tasks}\n"
        "for kind in ('simple', 'chat'):\n"
        "    t = get_task_dict([sys.argv[2]], tm, task_type=kind)[sys.argv[2]]\n"
        "    docs = t.test_docs()\n"
        "    out[kind] = [type(t).__name__, len(docs), t.OUTPUT_TYPE]\n"
        "    out[kind + '_visuals'] = [[type(v).__name__ for v in t.doc_to_visual(d)] for d in docs]\n"
        "    out[kind + '_text'] = [t.doc_to_text(d) for d in docs]\n"
        "    out[kind + '_results'] = [t.process_results(d, [' A '])['omniaudit']['id'] for d in docs]\n"
        "out['messages'] = [[c['type'] for m in t.doc_to_messages(d) for c in m['content']] for d in docs]\n"
        "print(json.dumps(out))\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"),
           "OMNIAUDIT_MEDIA_CACHE": str(tmp_path / "media")}
    done = subprocess.run([str(LMMS_VENV / "bin" / "python"), "-c", script, str(folder.parent), task.task],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert task.task in out["tasks"]
    assert out["simple"] == ["ConfigurableTask", 8, "generate_until"]
    assert out["chat"] == ["ConfigurableMessagesTask", 8, "generate_until"]
    assert out["simple_visuals"][:4] == [["dict"], ["Image"], ["dict", "dict"], ["dict", "dict"]]
    assert out["simple_visuals"][4:] == [["str"], ["str"], ["str"], []]
    assert out["simple_text"][0].startswith("You are an expert audio judge.\n\n")
    assert out["simple_results"] == out["chat_results"] == ["audio/1", "image/1", "pair/1/AB", "pair/1/BA",
                                                            "video/sync", "video/sound", "video/silent", "text/1"]
    assert out["messages"][0] == ["text", "audio", "text"] and out["messages"][4] == ["video", "text"]
