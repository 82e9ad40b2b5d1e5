"""Constrained answers (`--answer-format free|choice|json`): the request field per dialect and format, rows that say
which path their answer took (constrained, unconstrained, free, option_scores), a warning when a server ignores the
constraint, the format in the provenance and the response cache key, and runners that cannot constrain refused."""

import json
import warnings

import pytest
from chat_server import ChatServer, first_option

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.runners import run_judge
from omniaudit.runners.base import RefusedItems
from omniaudit.runners.factory import make_judge
from omniaudit.runners.items import JudgeItem, Sampling
from omniaudit.runners.payload import Payloads, answer_schema
from omniaudit.runners.rows import prediction_row
from omniaudit.runners.run import AnswerFormatWarning

CLOSED = {"audio/1": "angry", "image/1": "yes", "pair/1/AB": "A", "pair/1/BA": "A"}  # the fake server's picks
FREE_FORM = ("video/sync", "video/sound", "video/silent", "text/1")
LISTED = [{"id": "m", "object": "model"}]  # the server lists the model asked for: no served-model warning


def _rows(path):
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def _judge(dataset, server, out, cache, **options):
    return run_judge(dataset, "mixed", f"openai:m@{server.url}", out, cache_dir=cache, fps=4.0, max_frames=2,
                     **options)


def _format_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, AnswerFormatWarning)]


@pytest.mark.parametrize("dialect", ["vllm", "openai", "frames"])
def test_closed_items_carry_the_constraint_of_their_dialect_and_format(dialect):
    closed = JudgeItem(id="c", prompt="Which emotion? angry or sad.", options=["angry", "sad"])
    free_form = JudgeItem(id="f", prompt="What happens?", options=[])
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {
        "type": "object", "properties": {"answer": {"type": "string", "enum": ["angry", "sad"]}},
        "required": ["answer"], "additionalProperties": False}}}
    assert answer_schema(["angry", "sad"]) == schema
    plain = Payloads("m", dialect).body(closed, Sampling())
    for fmt in ("free", "choice", "json"):
        payloads = Payloads("m", dialect, answer_format=fmt)
        body = payloads.body(closed, Sampling())
        extra = {k: v for k, v in body.items() if k not in plain}
        if fmt == "free":
            assert body == plain
        elif fmt == "choice" and dialect == "vllm":
            assert extra == {"structured_outputs": {"choice": ["angry", "sad"]}}
        else:
            assert extra == {"response_format": schema}
        assert body["logprobs"] is True and body["top_logprobs"] == 10  # kept as without a constraint
        assert payloads.body(free_form, Sampling()) == Payloads("m", dialect).body(free_form, Sampling())
    with pytest.raises(InputError, match="unknown answer format"):
        Payloads("m", dialect, answer_format="xml")


@pytest.mark.parametrize(("fmt", "dialect", "raw"), [("choice", "vllm", "angry"),
                                                     ("json", "vllm", '{"answer": "angry"}'),
                                                     ("choice", "frames", '{"answer": "angry"}')])
def test_a_server_that_honours_the_constraint_gives_constrained_rows(mixed_dataset, tmp_path, fmt, dialect, raw):
    with ChatServer(models=LISTED) as server, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = _judge(mixed_dataset, server, tmp_path / "p.jsonl", tmp_path / "c", answer_format=fmt,
                        dialect=dialect)
    rows = _rows(tmp_path / "p.jsonl")
    assert {id: (r["label"], r["answer_path"]) for id, r in rows.items() if id in CLOSED} == {
        id: (label, "constrained") for id, label in CLOSED.items()}
    assert rows["audio/1"]["raw"] == raw
    assert {rows[id]["answer_path"] for id in FREE_FORM} == {"free"}
    assert {rows[id]["label"] for id in FREE_FORM} == {None}
    assert {r["provenance"]["runner"]["answer_format"] for r in rows.values()} == {fmt}
    assert counts["answer_format"] == fmt and counts["answer_paths"] == {"constrained": 4}
    assert not _format_warnings(caught)


def test_a_constrained_option_is_taken_as_it_stands():
    # an option a free-text reader would read as negated is the answer when the server kept the reply to the options
    item = JudgeItem(id="x", prompt="Is it in sync? Answer with one of: not synchronized, synchronized.",
                     options=["not synchronized", "synchronized"])
    for raw in ("not synchronized", '{"answer": "not synchronized"}'):
        row = prediction_row(item, raw, Sampling(), None, path="constrained")
        assert (row["label"], row["parsed"], row["answer_path"]) == ("not synchronized", True, "constrained")
    assert prediction_row(item, "synchronized", Sampling(), None)["answer_path"] == "free"


def test_a_server_that_ignores_the_constraint_gives_unconstrained_rows_and_one_warning(mixed_dataset, tmp_path):
    def sentence(body):
        return f"I would say {first_option(body)}."

    with ChatServer(answer=sentence, honour_constraints=False, models=LISTED) as server, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = _judge(mixed_dataset, server, tmp_path / "p.jsonl", tmp_path / "c", answer_format="choice")
        url = server.url
        assert sum("structured_outputs" in b for b in server.bodies) == 4  # asked of every closed item
    rows = _rows(tmp_path / "p.jsonl")
    # read as free text by the reader, never forced to an option
    assert {id: (r["label"], r["answer_path"]) for id, r in rows.items() if id in CLOSED} == {
        id: (label, "unconstrained") for id, label in CLOSED.items()}
    assert {rows[id]["answer_path"] for id in FREE_FORM} == {"free"}
    assert rows["audio/1"]["raw"] == "I would say angry." and counts["answer_paths"] == {"unconstrained": 4}
    assert _format_warnings(caught) == [f"the server at {url} ignored --answer-format choice on 4 of 4 closed "
                                        "answers; their text was read as free text"]


def test_a_server_that_rejects_the_constraint_field_is_named_with_a_way_out(mixed_dataset, tmp_path):
    def reject(body):  # as `transformers serve` does: HTTP 422 "Unexpected fields in the request"
        return 422 if "structured_outputs" in body else None

    with ChatServer(fault=reject, models=LISTED) as server, \
            pytest.raises(RefusedItems, match=r"takes structured_outputs\.choice \(vLLM >= 0\.12\), asked by "
                                              r"--answer-format choice \(--answer-format free asks none\); a server "
                                              r"other than vLLM .* --dialect openai"):
        _judge(mixed_dataset, server, tmp_path / "p.jsonl", tmp_path / "c", conditions=["audio", "image", "pair"],
               answer_format="choice")
    assert not (tmp_path / "p.jsonl").exists()


def test_free_is_the_default_and_asks_no_constraint(mixed_dataset, tmp_path):
    with ChatServer(models=LISTED) as server:
        counts = _judge(mixed_dataset, server, tmp_path / "p.jsonl", tmp_path / "c")
        sent = json.dumps(server.bodies)
    rows = _rows(tmp_path / "p.jsonl")
    assert "structured_outputs" not in sent and "response_format" not in sent
    assert {r["answer_path"] for r in rows.values()} == {"free"}
    assert {rows[id]["label"] for id in CLOSED} == set(CLOSED.values())
    assert "answer_format" not in rows["audio/1"]["provenance"]["runner"]  # a default run's provenance as before
    assert counts["answer_format"] == "free" and counts["answer_paths"] == {"free": 4}


def test_cached_answers_under_one_format_are_not_reused_for_another(mixed_dataset, tmp_path):
    cache = tmp_path / "c"
    with ChatServer(models=LISTED) as server:
        _judge(mixed_dataset, server, tmp_path / "free.jsonl", cache)
        assert server.requests == 8
        _judge(mixed_dataset, server, tmp_path / "choice.jsonl", cache, answer_format="choice")
        assert server.requests == 8 + 4  # the closed items asked again; free-form bodies are unchanged: cached
        _judge(mixed_dataset, server, tmp_path / "json.jsonl", cache, answer_format="json")
        assert server.requests == 12 + 4
        _judge(mixed_dataset, server, tmp_path / "choice2.jsonl", cache, answer_format="choice")
        assert server.requests == 16  # each format's own replies, from the cache
    assert _rows(tmp_path / "choice2.jsonl")["audio/1"]["raw"] == "angry"
    assert _rows(tmp_path / "json.jsonl")["audio/1"]["raw"] == '{"answer": "angry"}'
    assert _rows(tmp_path / "free.jsonl")["audio/1"]["answer_path"] == "free"


def test_the_cli_takes_the_format_refuses_an_unknown_one_and_counts_paths(mixed_dataset, tmp_path, capsys):
    with ChatServer(models=LISTED) as server:
        base = ["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", f"openai:m@{server.url}",
                "--cache", str(tmp_path / "c"), "--dialect", "frames", "--fps", "4", "--max-frames", "2"]
        with pytest.raises(SystemExit) as exit_:
            main([*base, "--out", str(tmp_path / "x.jsonl"), "--answer-format", "xml"])
        assert exit_.value.code == 2 and "invalid choice: 'xml'" in capsys.readouterr().err
        assert server.requests == 0
        assert main([*base, "--out", str(tmp_path / "p.jsonl"), "--answer-format", "json"]) == 0
    out = capsys.readouterr().out
    assert "answer paths: 4 constrained" in out
    assert {r["answer_path"] for r in _rows(tmp_path / "p.jsonl").values()} == {"constrained", "free"}


def test_runners_that_cannot_constrain_are_refused_up_front(mixed_dataset, tmp_path, capsys):
    args = ["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", "scripted:oracle",
            "--out", str(tmp_path / "p.jsonl"), "--answer-format", "choice"]
    assert main(args) == 2
    assert "--answer-format choice: scripted: judges answer by script" in capsys.readouterr().err
    assert not (tmp_path / "p.jsonl").exists()
    # refused before any model is looked for or loaded (the folder does not exist)
    for fmt, mode in (("json", "logits"), ("choice", "generate"), ("json", "generate")):
        with pytest.raises(InputError, match=f"--answer-format {fmt}: hf: judges cannot constrain generation"):
            make_judge(f"hf:{tmp_path / 'no-model'}", answer_format=fmt, mode=mode)
    with pytest.raises(InputError, match="answer_format must be one of free, choice, json"):
        make_judge("scripted:oracle", answer_format="xml")


def test_hf_option_scores_take_choice_as_they_are(protocol_dataset, tiny_models, tmp_path):
    counts = run_judge(protocol_dataset, "blueprint", f"hf:{tiny_models['text']}", tmp_path / "p.jsonl",
                       ["skeleton"], batch_size=16, answer_format="choice")
    rows = _rows(tmp_path / "p.jsonl")
    assert rows and {r["answer_path"] for r in rows.values()} == {"option_scores"}
    assert counts["answer_paths"] == {"option_scores": len(rows)}
    assert "answer_format" not in next(iter(rows.values()))["provenance"]["runner"]  # nothing changed for hf


@pytest.mark.slow
def test_the_scorecard_constrains_served_models_only(tmp_path, small_defaults):
    """--answer-format reaches the served model under test; the scripted references answer as they do."""
    import json as _json

    from chat_server import ChatServer

    from omniaudit.cli import main

    with ChatServer(models=[{"id": "m", "object": "model"}]) as server:
        argv = ["scorecard", "--model", f"m=openai:m@{server.url}", "--size", "small", "--audits", "protocols",
                "--answer-format", "choice", "--no-cache", "--n-resamples", "200", "--out", str(tmp_path / "c"),
                "--allow-uncalibrated"]
        main(argv)
        constrained = [b for b in server.bodies if "structured_outputs" in b]
    assert constrained and all(b["structured_outputs"]["choice"] for b in constrained)
    rows = [_json.loads(line) for f in (tmp_path / "c" / "models" / "m").glob("*.jsonl")
            for line in f.read_text().splitlines()]
    closed = [r for r in rows if r["parsed"] is not None]
    assert closed and {r["answer_path"] for r in closed} == {"constrained"}
    oracle = [_json.loads(line) for f in (tmp_path / "c" / "models" / "oracle").glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert oracle and {r.get("answer_path", "free") for r in oracle} <= {"free"}
