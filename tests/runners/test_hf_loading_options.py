"""Loading big checkpoints on the ``hf:`` runner: ``--device-map``, ``--torch-dtype``, ``--load-in``,
``--attn-implementation`` (omniaudit judge / scorecard), on the tiny models the tests build offline."""

from __future__ import annotations

import json

import pytest
import torch

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.runners import hf_loading, run_judge
from omniaudit.runners.factory import input_settings, make_judge, release_models
from omniaudit.runners.hf import HFJudge
from omniaudit.runners.items import JudgeItem
from omniaudit.runners.options import check_runner_options

TEXT = ["skeleton", "descriptors", "true", "wrong", "no_frame"]  # blueprint conditions a text-only model takes
ITEMS = [JudgeItem("q0", "Which emotion does the speaker express?", ["sad", "sadness", "happy"]),
         JudgeItem("q1", "Which clip has cleaner audio? Answer with A or B only.", ["A", "B"], order="AB")]


@pytest.fixture
def no_cuda(monkeypatch):
    """This machine as one without a CUDA device, whatever it has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture(autouse=True)
def _release():
    yield
    release_models()  # the kept model of make_judge: each test loads its own


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_model_loads_in_the_dtype_asked_and_answers(tiny_models, dtype):
    judge = HFJudge(tiny_models["text"], dtype=dtype, batch_size=2)
    assert judge.model.dtype == getattr(torch, dtype)
    answers = judge.answer(ITEMS)
    assert answers[0] in ITEMS[0].options and answers[1] in ("A", "B")
    assert all(abs(sum(p.values()) - 1) < 1e-3 for p in judge.option_probs)


def test_device_map_cpu_and_attention_kernels(tiny_models, monkeypatch):
    from omniaudit.runners import hf as hf_module

    given = []
    monkeypatch.setattr(hf_module, "from_pretrained_kwargs",
                        lambda *a, **k: given.append(hf_loading.from_pretrained_kwargs(*a, **k)) or given[-1])
    judge = HFJudge(tiny_models["text"], device_map="cpu", attn_implementation="eager")
    assert given == [{"dtype": "auto", "device_map": "cpu", "attn_implementation": "eager"}]  # to from_pretrained
    assert judge.device.type == "cpu"
    assert judge.model.config._attn_implementation == "eager"
    eager = judge.answer(ITEMS)
    sdpa = HFJudge(tiny_models["text"], attn_implementation="sdpa")
    assert sdpa.model.config._attn_implementation == "sdpa"
    assert sdpa.answer(ITEMS) == eager  # another kernel, the same answers (float32, greedy)
    with pytest.raises(InputError, match="device or device_map, not both"):
        HFJudge(tiny_models["text"], device="cpu", device_map="cpu")


def test_loading_options_reach_the_provenance_only_when_set(protocol_dataset, tiny_models, tmp_path):
    spec = f"hf:{tiny_models['text']}"
    assert input_settings(spec, {}) == {"mode": "logits", "fps": 2.0, "max_frames": 32}  # as before the options
    assert input_settings(spec, {"dtype": "auto", "device_map": None, "load_in": None}) == input_settings(spec, {})
    assert input_settings(spec, {"dtype": "bfloat16", "device_map": "cpu", "attn_implementation": "sdpa"}) == {
        "mode": "logits", "fps": 2.0, "max_frames": 32, "dtype": "bfloat16", "device_map": "cpu",
        "attn_implementation": "sdpa"}
    assert input_settings("scripted:oracle", {"dtype": "bfloat16"}) == {}
    run_judge(protocol_dataset, "blueprint", spec, tmp_path / "plain.jsonl", TEXT, limit=4)
    run_judge(protocol_dataset, "blueprint", spec, tmp_path / "bf16.jsonl", TEXT, limit=4, dtype="bfloat16",
              device_map="cpu")
    plain, bf16 = _rows(tmp_path / "plain.jsonl"), _rows(tmp_path / "bf16.jsonl")
    assert plain[0]["provenance"]["runner"] == {"mode": "logits", "fps": 2.0, "max_frames": 32}
    assert bf16[0]["provenance"]["runner"] == {"mode": "logits", "fps": 2.0, "max_frames": 32, "dtype": "bfloat16",
                                               "device_map": "cpu"}
    assert all(r["parsed"] for r in bf16) and len(bf16) == 4


def test_judge_cli_takes_the_flags(protocol_dataset, tiny_models, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    rc = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge",
               f"hf:{tiny_models['text']}", "--conditions", *TEXT, "--limit", "3", "--out", str(out),
               "--torch-dtype", "bfloat16", "--device-map", "cpu", "--attn-implementation", "eager"])
    assert rc == 0, capsys.readouterr().err
    assert _rows(out)[0]["provenance"]["runner"] == {"mode": "logits", "fps": 2.0, "max_frames": 32,
                                                     "dtype": "bfloat16", "device_map": "cpu",
                                                     "attn_implementation": "eager"}


@pytest.mark.parametrize("flags, message", [
    (["--load-in", "4bit"], "load_in 4bit (bitsandbytes) needs a CUDA GPU and none is visible here"),
    (["--load-in", "8bit"], "load_in 8bit (bitsandbytes) needs a CUDA GPU"),
    (["--device-map", "cuda:0"], "device_map cuda:0: no CUDA device is visible here"),
    (["--attn-implementation", "flash_attention_2"], "flash_attention_2 needs a CUDA GPU"),
])
def test_what_needs_a_gpu_is_refused_up_front_in_one_line(no_cuda, protocol_dataset, tiny_models, tmp_path, capsys,
                                                          monkeypatch, flags, message):
    loads = []
    monkeypatch.setattr(HFJudge, "_load_model", lambda *a: loads.append(a))
    out = tmp_path / "p.jsonl"
    rc = main(["judge", "--dataset", str(protocol_dataset), "--config", "blueprint", "--judge",
               f"hf:{tiny_models['text']}", "--out", str(out), *flags])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not loads and not out.exists()
    rc = main(["scorecard", "--model", f"tiny=hf:{tiny_models['text']}", "--out", str(tmp_path / "card"), *flags])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "card").exists()


@pytest.mark.parametrize("flag, value", [("--torch-dtype", "float8"), ("--load-in", "2bit"),
                                         ("--attn-implementation", "xformers"), ("--device-map", "gpu"),
                                         ("--device-map", "cuda:x"), ("--device-map", "cuda")])
@pytest.mark.parametrize("command", ["judge", "scorecard"])
def test_bad_values_exit_2(capsys, tmp_path, command, flag, value):
    args = (["judge", "--dataset", "d", "--config", "c", "--judge", "scripted:oracle"] if command == "judge"
            else ["scorecard", "--model", "m=scripted:oracle"])
    with pytest.raises(SystemExit) as exc:
        main([*args, "--out", str(tmp_path / "o"), flag, value])
    assert exc.value.code == 2 and f"argument {flag}" in capsys.readouterr().err


def test_the_library_checks_the_values_and_the_machine(no_cuda, monkeypatch):
    for options, message in (({"dtype": "float8"}, "dtype must be one of auto, bfloat16"),
                             ({"device_map": "gpu"}, "device_map must be one of auto, balanced, sequential, cpu or "
                                                     "cuda:N"),
                             ({"load_in": "4"}, "load_in must be one of 4bit, 8bit"),
                             ({"attn_implementation": "flash"}, "attn_implementation must be one of eager"),
                             ({"load_in": "4bit"}, "needs a CUDA GPU")):
        with pytest.raises(InputError, match=message):
            check_runner_options(options)
        with pytest.raises(InputError, match=message):
            make_judge("scripted:oracle", **options)  # refused whatever the runner kind, as every runner option
    check_runner_options({"dtype": None, "device_map": "auto", "load_in": None})  # None: the default
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    check_runner_options({"device_map": "cuda:1"})
    with pytest.raises(InputError, match=r"device_map cuda:2: only 2 CUDA device\(s\) visible here"):
        check_runner_options({"device_map": "cuda:2"})
    real = hf_loading.importlib.util.find_spec
    monkeypatch.setattr(hf_loading.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("flash_attn", "bitsandbytes", "accelerate") else real(name))
    with pytest.raises(InputError, match="needs the flash-attn package, which is not installed"):
        check_runner_options({"attn_implementation": "flash_attention_2"})
    with pytest.raises(ModuleNotFoundError) as missing:
        check_runner_options({"load_in": "8bit"})
    assert missing.value.name == "bitsandbytes"
    with pytest.raises(ModuleNotFoundError) as missing:
        check_runner_options({"device_map": "auto"})
    assert missing.value.name == "accelerate"


def test_from_pretrained_kwargs():
    from transformers import BitsAndBytesConfig

    assert hf_loading.from_pretrained_kwargs(torch) == {"dtype": "auto"}
    kwargs = hf_loading.from_pretrained_kwargs(torch, "float16", "balanced", "4bit", "sdpa")
    assert kwargs["dtype"] is torch.float16 and kwargs["device_map"] == "balanced"
    assert kwargs["attn_implementation"] == "sdpa"
    quant = kwargs["quantization_config"]
    assert isinstance(quant, BitsAndBytesConfig) and quant.load_in_4bit and quant.bnb_4bit_quant_type == "nf4"
    assert quant.bnb_4bit_compute_dtype is torch.float16
    assert hf_loading.from_pretrained_kwargs(torch, load_in="4bit")["quantization_config"].bnb_4bit_compute_dtype \
        is torch.bfloat16
    assert hf_loading.from_pretrained_kwargs(torch, load_in="8bit")["quantization_config"].load_in_8bit


def test_scorecard_passes_the_flags_to_its_runners(monkeypatch, tmp_path):
    import omniaudit.evaluation.scorecard as scorecard

    seen = {}

    def fake(out, models, options, progress, launch=None):
        seen["runner"] = options.runner
        raise InputError("stop here")

    monkeypatch.setattr(scorecard, "run_scorecard", fake)
    rc = main(["scorecard", "--model", "m=scripted:oracle", "--out", str(tmp_path / "card"), "--torch-dtype",
               "float16", "--device-map", "cpu", "--attn-implementation", "sdpa"])
    assert rc == 2
    assert {k: seen["runner"][k] for k in ("dtype", "device_map", "load_in", "attn_implementation")} == {
        "dtype": "float16", "device_map": "cpu", "load_in": None, "attn_implementation": "sdpa"}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="bitsandbytes quantises on a CUDA GPU")
@pytest.mark.parametrize("load_in", ["4bit", "8bit"])
def test_k_bit_loading_on_a_gpu(tiny_models, load_in):
    pytest.importorskip("bitsandbytes")
    judge = HFJudge(tiny_models["text"], load_in=load_in, dtype="bfloat16")
    assert judge.device.type == "cuda" and getattr(judge.model, f"is_loaded_in_{load_in}")
    answers = judge.answer(ITEMS)
    assert answers[0] in ITEMS[0].options and answers[1] in ("A", "B")
