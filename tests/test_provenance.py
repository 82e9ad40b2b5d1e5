"""Every answer traceable to its dataset build, model and run: what `omniaudit judge` records and what every consumer
(audits, merges) refuses."""

import json
import shutil

import pytest
from chat_server import ChatServer

from omniaudit.cli import main
from omniaudit.data_builders.fingerprint import config_fingerprint
from omniaudit.errors import InputError
from omniaudit.runners import run_judge
from omniaudit.runners.run import CHUNK
from omniaudit.runners.scripted import ScriptedJudge


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_every_row_records_where_it_came_from(protocol_dataset, tmp_path):
    out = tmp_path / "p.jsonl"
    run_judge(protocol_dataset, "reference", "scripted:oracle", out, temperature=0.7, seed=3, runs=2)
    rows = _rows(out)
    record = rows[0]["provenance"]
    assert all(r["provenance"] == record for r in rows)  # one run, one record
    assert record["dataset"] == {"name": "ds", "config": "reference",
                                 "fingerprint": config_fingerprint(protocol_dataset, "reference")}
    assert record["judge"] == "scripted:oracle" and record["model"] == {"kind": "scripted", "model": "oracle"}
    assert record["sampling"] == {"temperature": 0.7, "top_p": None, "seed": 3, "runs": 2, "max_tokens": 32}
    assert record["selection"]["items"] * 2 == len(rows) and record["omniaudit"]
    assert "finish_reason" in rows[0]
    assert str(tmp_path) not in out.read_text()  # no absolute local paths


def test_fingerprint_follows_the_files_not_the_folder_name(protocol_dataset, tmp_path):
    copy = tmp_path / "elsewhere" / "other_name"
    shutil.copytree(protocol_dataset, copy)
    assert config_fingerprint(copy, "reference") == config_fingerprint(protocol_dataset, "reference")
    assert config_fingerprint(copy, "reference") != config_fingerprint(copy, "pairwise")
    assert config_fingerprint(copy, "no_such_config") is None


def test_audit_protocols_refuses_answers_made_on_another_build(protocol_dataset, tmp_path, capsys):
    """`build protocols --seed 1` has the same ids and other derangements: seed-0 answers must not be scored on it."""
    from omniaudit.data_builders.protocols import ProtocolBuildOptions, SpeechSetSpec, build_protocols_dataset

    seed1 = build_protocols_dataset(tmp_path / "seed1", None, ProtocolBuildOptions(max_trials=12, seed=1),
                                    SpeechSetSpec(sentences_per_cell=1))
    preds = tmp_path / "copy.reference.jsonl"
    assert main(["judge", "--dataset", str(protocol_dataset), "--config", "reference", "--judge",
                 "scripted:copy-reference", "--out", str(preds)]) == 0
    capsys.readouterr()
    assert main(["audit", "protocols", "--dataset", str(seed1), "--predictions", str(preds), "--n-resamples", "50",
                 "--out", str(tmp_path / "wrong")]) == 2
    err = capsys.readouterr().err
    assert "another build of the dataset" in err and "reference" in err
    assert not (tmp_path / "wrong").exists()
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions", str(preds),
                 "--n-resamples", "50", "--out", str(tmp_path / "right")]) == 0
    audit = json.loads((tmp_path / "right" / "audit.json").read_text())
    assert audit["provenance"]["copy.reference"][0]["judge"] == "scripted:copy-reference"
    assert "## Where the answers came from" in (tmp_path / "right" / "report.md").read_text()


def test_merge_predictions_refuses_shards_of_different_judges(protocol_dataset, tmp_path, capsys):
    a, b = tmp_path / "a0.jsonl", tmp_path / "o1.jsonl"
    for judge, shard, out in (("scripted:always-a", "0/2", a), ("scripted:oracle", "1/2", b)):
        assert main(["judge", "--dataset", str(protocol_dataset), "--config", "pairwise", "--judge", judge,
                     "--shard", shard, "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["merge-predictions", str(a), str(b), "--out", str(tmp_path / "m.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "another judge run" in err and "scripted:oracle" in err and "scripted:always-a" in err
    assert not (tmp_path / "m.jsonl").exists()
    # different sampling is refused the same way, naming the field
    c = tmp_path / "a1.jsonl"
    assert main(["judge", "--dataset", str(protocol_dataset), "--config", "pairwise", "--judge", "scripted:always-a",
                 "--shard", "1/2", "--temperature", "0.7", "--out", str(c)]) == 0
    capsys.readouterr()
    assert main(["merge-predictions", str(a), str(c), "--out", str(tmp_path / "m.jsonl")]) == 2
    assert "sampling.temperature" in capsys.readouterr().err


def test_audits_refuse_a_shard_or_a_truncated_run_unless_partial(intervention_dataset, tmp_path, capsys):
    shard = tmp_path / "s0.jsonl"
    assert main(["judge", "--dataset", str(intervention_dataset), "--config", "diagnostic", "--judge",
                 "scripted:oracle", "--shard", "0/2", "--out", str(shard)]) == 0
    capsys.readouterr()
    args = ["audit", "interventions", "--dataset", str(intervention_dataset), "--n-resamples", "50"]
    assert main([*args, "--predictions", str(shard), "--out", str(tmp_path / "r")]) == 2
    assert "shard 0/2 of a judge run" in capsys.readouterr().err
    assert main([*args, "--predictions", str(shard), "--partial", "--out", str(tmp_path / "r")]) == 0
    assert "partial run (shard 0/2)" in (tmp_path / "r" / "report.md").read_text()
    whole = tmp_path / "whole.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", whole)
    truncated = _write(tmp_path / "truncated.jsonl", _rows(whole)[:-3])
    assert main([*args, "--predictions", str(truncated), "--out", str(tmp_path / "t")]) == 2
    assert "the run is incomplete" in capsys.readouterr().err


def test_one_file_holds_one_run(intervention_dataset, tmp_path):
    from omniaudit.data_builders.interventions.diagnostic_answers import read_predictions
    from omniaudit.evaluation.interventions.audit import load_diagnostic

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", a)
    run_judge(intervention_dataset, "diagnostic", "scripted:random", b, temperature=1.0)
    rows_a, rows_b = _rows(a), _rows(b)
    mixed = _write(tmp_path / "mixed.jsonl", rows_a[:5] + rows_b[5:])
    with pytest.raises(InputError, match="row 6.*another run than row 1: its judge is 'scripted:random'"):
        read_predictions(mixed, load_diagnostic(intervention_dataset), dataset=intervention_dataset)


def test_files_of_other_harnesses_are_read_with_a_note(intervention_dataset, tmp_path):
    run = tmp_path / "run.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", run)
    plain = _write(tmp_path / "plain.jsonl", [{"id": r["id"], "raw": r["raw"]} for r in _rows(run)])
    assert main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(plain),
                 "--n-resamples", "50", "--out", str(tmp_path / "r")]) == 0
    assert "provenance unknown" in (tmp_path / "r" / "report.md").read_text()
    assert json.loads((tmp_path / "r" / "audit.json").read_text())["provenance"][0]["known"] is False


def test_a_killed_run_resumes_where_it_stopped(protocol_dataset, tmp_path, monkeypatch):
    """Answers are journalled per chunk: a run that dies after one chunk asks only the rest again, and writes the
    same file as an uninterrupted run."""
    clean = tmp_path / "clean.jsonl"
    run_judge(protocol_dataset, "blueprint", "scripted:random", clean, temperature=1.0, seed=5, runs=2)
    asked = []
    original = ScriptedJudge.answer

    def dies_after_one_chunk(self, items, progress=None):
        asked.append(len(items))
        if len(asked) == 2:
            raise KeyboardInterrupt  # as a kill between two chunks
        return original(self, items, progress)

    monkeypatch.setattr(ScriptedJudge, "answer", dies_after_one_chunk)
    out = tmp_path / "resumed.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_judge(protocol_dataset, "blueprint", "scripted:random", out, temperature=1.0, seed=5, runs=2)
    assert not out.exists() and len(list(tmp_path.glob(".resumed.jsonl.journal-*"))) == 1
    monkeypatch.setattr(ScriptedJudge, "answer", original)
    counts = run_judge(protocol_dataset, "blueprint", "scripted:random", out, temperature=1.0, seed=5, runs=2)
    assert counts["resumed"] == CHUNK
    assert out.read_bytes() == clean.read_bytes()
    assert not list(tmp_path.glob(".resumed.jsonl.*"))  # the journal is gone once the file is written


def test_a_run_of_refusals_writes_nothing(intervention_dataset, tmp_path, capsys):
    with ChatServer(answer=lambda body: "I'm sorry, but I can't help with that request.") as server:
        out = tmp_path / "refusals.jsonl"
        code = main(["judge", "--dataset", str(intervention_dataset), "--config", "diagnostic", "--judge",
                     f"openai:m@{server.url}", "--dialect", "frames", "--no-cache", "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert "0 usable answers" in err and "No predictions file was written" in err
    assert not out.exists() and not list(tmp_path.glob(".refusals*"))


def test_a_run_cut_by_the_token_limit_says_so(protocol_dataset, tmp_path, capsys):
    with ChatServer(answer=lambda body: "Let me think about the", finish_reason="length") as server:
        out = tmp_path / "cut.jsonl"
        code = main(["judge", "--dataset", str(protocol_dataset), "--config", "pairwise", "--judge",
                     f"openai:m@{server.url}", "--no-cache", "--out", str(out)])
    assert code == 2
    assert "cut by the token limit (finish_reason: length): raise --max-tokens" in capsys.readouterr().err
    assert not out.exists()


def test_a_local_model_is_identified_by_its_weights(tiny_models, tmp_path):
    """Two folders with the same config and another weight (a fine-tune) are two models; a copy is the same one."""
    from safetensors.numpy import load_file, save_file

    from omniaudit.runners.identity import local_model_identity

    base = tiny_models["text"]
    copy, tuned = tmp_path / "copy", tmp_path / "tuned"
    shutil.copytree(base, copy)
    shutil.copytree(base, tuned)
    weights = next(tuned.glob("*.safetensors"))
    tensors = load_file(weights)
    name = max(tensors, key=lambda k: tensors[k].size)  # the largest tensor spans the middle of the file
    tensors[name] = tensors[name] + 1e-3
    save_file(tensors, weights, metadata={"format": "pt"})
    ids = [local_model_identity(str(p)) for p in (base, copy, tuned)]
    assert ids[0]["sha256"] == ids[1]["sha256"] != ids[2]["sha256"]
    assert ids[0]["kind"] == "hf" and ids[0]["revision"] is None
    assert local_model_identity("no-such/model-here")["sha256"] is None  # not cached: unknown, never a guess


def test_the_card_carries_the_fingerprint_and_edited_files_are_refused(protocol_dataset, tmp_path):
    """The card's sealed fingerprint is the one predictions record; a config whose files were changed after the
    build is refused on read, naming it."""
    from omniaudit.data_builders.hub import load_config, sealed_fingerprints

    assert sealed_fingerprints(protocol_dataset)["reference"] == config_fingerprint(protocol_dataset, "reference")
    copy = tmp_path / "ds"
    shutil.copytree(protocol_dataset, copy)
    shard = next((copy / "reference").glob("*.parquet"))
    shutil.copyfile(next((copy / "pairwise").glob("*.parquet")), shard)  # another config's rows in its place
    with pytest.raises(InputError, match="config 'reference': its files changed after omniaudit wrote them"):
        load_config(copy, "reference", columns=["id"])
    assert len(load_config(copy, "blueprint", columns=["id"]))  # the other configs still read


@pytest.mark.slow
def test_a_local_model_is_loaded_once_across_configs(protocol_dataset, tiny_models, tmp_path, monkeypatch):
    """run-protocols judges four configs (and an audit grades several runs) with one model: loaded once."""
    from omniaudit.runners import factory, hf

    factory.release_models()
    loads = []
    original = hf.HFJudge.__init__

    def counting(self, *args, **kwargs):
        loads.append(args[0])
        original(self, *args, **kwargs)

    monkeypatch.setattr(hf.HFJudge, "__init__", counting)
    spec = f"hf:{tiny_models['audio']}"
    for config, conditions in (("blueprint", ["audio"]), ("reference", ["match"])):
        run_judge(protocol_dataset, config, spec, tmp_path / f"{config}.jsonl", conditions)
    assert loads == [str(tiny_models["audio"])]  # one load for both configs
    factory.make_judge(spec, batch_size=1)  # other settings: a fresh runner
    assert len(loads) == 2
    factory.release_models()


def test_every_audit_json_opens_with_its_schema(intervention_dataset, tmp_path):
    """One envelope for the four audits: schema version, audit, omniaudit version, command, inputs."""
    from omniaudit import __version__

    preds = tmp_path / "p.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", preds)
    assert main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(preds),
                 "--n-resamples", "20", "--out", str(tmp_path / "r")]) == 0
    audit = json.loads((tmp_path / "r" / "audit.json").read_text())
    assert next(iter(audit)) == "schema"
    assert audit["schema"] | {"arguments": None} == {
        "version": 1, "audit": "interventions", "omniaudit": __version__, "command": "omniaudit audit interventions",
        "arguments": None, "inputs": {"dataset": intervention_dataset.name, "predictions": preds.name}}  # by name
