"""Reading answers: how labels were obtained (label sources per judge / model, the LLM extractor's
agreement with the rule reader) in the protocols and interventions audits, and the multilingual reader benchmark."""

import json
import runpy
from pathlib import Path

import pandas as pd
import pytest

from omniaudit.data_builders.interventions.diagnostic_answers import read_predictions
from omniaudit.evaluation.interventions.audit import audit_interventions
from omniaudit.evaluation.interventions.report import label_sources_line
from omniaudit.evaluation.protocols.audit import ProtocolAuditConfig, audit_protocols, read_judge_predictions
from omniaudit.evaluation.protocols.report import protocols_report

LABELS = ["angry", "happy", "sad"]


def cue_items() -> pd.DataFrame:
    rows = [{"id": f"cc/{c}/{cond}", "config": "cue_conflict", "attribute": "emotion", "condition": cond,
             "clip_id": f"clip{c}", "options": LABELS, "k": 3, "gold": gold, "cue": LABELS[(c + 1) % 3]}
            for c, gold in enumerate(LABELS) for cond in ("none", "conf_spec")]
    frame = pd.DataFrame(rows).reindex(columns=["id", "config", "attribute", "task", "condition", "placement",
                                                "clip_id", "trial", "order", "format", "options", "k", "gold", "cue"])
    return frame.astype(object).where(frame.notna(), None)


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_protocols_audit_counts_label_sources_and_the_extractors_agreement(tmp_path):
    items = cue_items()
    ids = list(items["id"])
    probs = {"angry": 0.7, "happy": 0.2, "sad": 0.1}
    rows = [{"id": ids[0], "raw": "angry", "label": "angry", "parsed": True, "option_probs": probs},  # option probs
            {"id": ids[1], "raw": "I think it's angry.", "label": "angry", "parsed": True},  # rule (extractor agrees)
            {"id": ids[2], "raw": "Sounds happy to me.", "label": "happy", "parsed": True},  # rule (extractor: angry)
            {"id": ids[3], "raw": "hmm, hard to say", "label": None, "parsed": False},  # extractor fills: angry
            {"id": ids[4], "raw": "", "label": None, "parsed": False},  # empty: unparsed, not asked
            {"id": ids[5], "raw": "Sad.", "label": "sad", "parsed": True}]  # rule (extractor: angry)
    path = write(tmp_path / "j.jsonl", rows)
    plain = read_judge_predictions([f"j={path}"], items)["j"]
    assert plain.attrs["label_sources"] == {"rule": 3, "extractor": 0, "option_probs": 1, "given": 0, "unparsed": 2,
                                            "answers": 6}
    # scripted:always-a answers the extractor's question with its first option (angry) whatever the text
    pred = read_judge_predictions([f"j={path}"], items, extractor="scripted:always-a")["j"]
    labels = [lab if isinstance(lab, str) else None for lab in pred["label"]]
    assert labels == ["angry", "angry", "happy", "angry", None, "sad"]  # the rule reader's labels are kept
    sources = pred.attrs["label_sources"]
    assert sources == {"rule": 3, "extractor": 1, "option_probs": 1, "given": 0, "unparsed": 1, "answers": 6,
                       "extractor_agreement": {"n": 3, "agree": 1, "rate": pytest.approx(1 / 3)}}
    result = {"dataset": "d", **audit_protocols(items, {"j": pred}, ProtocolAuditConfig(n_resamples=50))}
    assert result["label_sources"]["j"] == sources
    report = protocols_report(result)
    assert ("`j`: 6 answers: 3 read by the rule reader, 1 filled by the LLM extractor, 1 taken from option "
            "probabilities, 0 given in the file, 1 left unparsed.") in report
    assert "agreed with the rule reader on 1 of the 3 answers both read (33.3%)" in report


def test_protocols_labels_without_answer_text_are_given(tmp_path):
    items = cue_items()
    path = write(tmp_path / "ext.jsonl", [{"id": i, "label": "sad"} for i in items["id"]])
    sources = read_judge_predictions([f"ext={path}"], items)["ext"].attrs["label_sources"]
    assert sources["given"] == len(items) and sources["rule"] == sources["unparsed"] == 0


def diagnostic(n_clips: int) -> pd.DataFrame:
    from omniaudit.data_builders.interventions import answers

    rows = []
    for c in range(n_clips):
        for iv, off in [("original", 0.0), ("shift", 2.0), ("mute", 0.0), ("swap", 0.0)]:
            for d in answers.DIMENSIONS if iv == "original" else (answers.INTERVENTION_DIMENSION[iv],):
                name = f"shift{off:+.2f}" if iv == "shift" else iv
                rows.append({"id": f"c{c}/{name}/{d}", "source_id": f"c{c}", "intervention": iv, "offset_s": off,
                             "dimension": d, **answers.target(iv, d, off)})
    return pd.DataFrame(rows)


def test_the_extractor_fills_only_what_the_rules_leave_unread_and_its_agreement_is_measured(tmp_path):
    diag = diagnostic(1)  # c0: original sync / existence / consistency, shift sync, mute existence, swap consistency
    rows = [{"id": "c0/original/sync", "response": "The audio is synchronized with the video."},  # rule + LLM: synced
            {"id": "c0/shift+2.00/sync", "response": "The audio is delayed by about 2 seconds."},  # LLM: synced
            {"id": "c0/original/existence", "response": "mumble"},  # rule: nothing; LLM: audio_described
            {"id": "c0/mute/existence", "response": ""},  # empty: unparsed
            {"id": "c0/swap/consistency", "audio_state": None, "match": "mismatch"}]  # given
    path = write(tmp_path / "p.jsonl", rows)
    rules = read_predictions(path, diag)
    assert rules.attrs["label_sources"] == {"given": 1, "rule": 2, "extractor": 0, "unparsed": 2, "answers": 5}
    # scripted:always-a picks the first option of the extractor's question: synchronized / audio_described / match
    llm = read_predictions(path, diag, "scripted:always-a")
    sources = llm.attrs["label_sources"]
    # rules first: the two rule-read answers keep their reading (the delayed one stays delayed), "mumble" is filled;
    # the rule-read answers are also put to the extractor, which agrees on one of two
    assert sources == {"given": 1, "rule": 2, "extractor": 1, "unparsed": 1, "answers": 5,
                       "extractor_agreement": {"n": 2, "agree": 1, "rate": 0.5}}
    assert llm.set_index("id").loc["c0/shift+2.00/sync", "direction"] == "delay"
    result = audit_interventions(diag, llm)
    assert result["label_sources"] == sources
    line = label_sources_line(result["label_sources"])[0]
    assert line.startswith("How the answers were read: 5 answers: 2 read by the rule reader, 1 filled by the LLM "
                           "extractor, 1 given in the file, 1 left unparsed.")
    assert "agreed with the rule reader on 1 of the 2 answers both read (50.0%)" in line


def test_the_reader_benchmark_meets_the_issues_goals():
    """No answer read as another option, verdict or class; every answer without a choice left unread; >= 95% of the
    answers that state a choice read (over every batch but the held-out reply sets, whose own read rates the benchmark
    reports)."""
    bench = runpy.run_path(str(Path(__file__).parents[2] / "benchmarks" / "extractor_accuracy.py"))
    result = bench["reader_accuracy"](bench["reader_cases"]())
    table = result["table"]
    for key, counts in table.items():
        assert counts.get("wrong", 0) == 0 and counts.get("guessed", 0) == 0, (key, result["misses"])
        assert counts.get("left", 0) == counts.get("no_answer", 0), key
    # the read rate over the sets written as models answer (dev-3b, written to be hard, has its own floor)
    overall = bench["reader_accuracy"]([c for c in bench["reader_cases"]()
                                        if c[4] not in (*bench["OWN_READ_RATE"], "dev-3b")])
    overall = overall["table"]["all/all"]
    assert overall["read"] / overall["choice"] >= 0.95
    languages = {key.split("/")[1] for key in table}
    assert {"en", "es", "zh"} <= languages
    for reader in ("sync", "existence", "consistency", "options", "verdict", "em"):
        for language in ("en", "es", "zh"):
            assert table[f"{reader}/{language}"]["choice"] + table[f"{reader}/{language}"].get("no_answer", 0) > 0
    dev = bench["reader_accuracy"](batch="dev")["table"]["all/all"]
    held = bench["reader_accuracy"](batch="held-out")["table"]["all/all"]
    assert dev["choice"] >= 200 and held["choice"] + held["no_answer"] >= 40
