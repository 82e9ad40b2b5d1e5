"""The rule-based answer extractor on the labelled phrasings, and its accuracy report."""

import json

import pandas as pd
import pytest

from omniaudit.data_builders.interventions import answers
from omniaudit.data_builders.interventions.diagnostic_answers import read_predictions
from omniaudit.data_builders.interventions.extract import extract, extract_consistency, extract_existence, extract_sync
from omniaudit.data_builders.interventions.extract_labelled import LABELLED, extractor_accuracy
from omniaudit.data_builders.interventions.extract_llm import llm_fields
from omniaudit.evaluation.interventions.audit import audit_interventions


def diagnostic(n_clips: int) -> pd.DataFrame:
    """Diagnostic rows as the builder writes them: per clip 3 originals, Shift +2 s, Mute, Swap."""
    rows = []
    for c in range(n_clips):
        for iv, off in [("original", 0.0), ("shift", 2.0), ("mute", 0.0), ("swap", 0.0)]:
            for d in answers.DIMENSIONS if iv == "original" else (answers.INTERVENTION_DIMENSION[iv],):
                name = f"shift{off:+.2f}" if iv == "shift" else iv
                rows.append({"id": f"c{c}/{name}/{d}", "source_id": f"c{c}", "intervention": iv, "offset_s": off,
                             "dimension": d, **answers.target(iv, d, off)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("dimension", "answer", "expected"),
                         [case[:3] for case in LABELLED],
                         ids=[f"{src}-{dim}-{i}" for i, (dim, _, _, src) in enumerate(LABELLED)])
def test_every_labelled_phrasing_is_extracted_as_labelled(dimension, answer, expected):
    got = extract(dimension, answer)
    for key, want in expected.items():
        if isinstance(want, float):
            assert got[key] == pytest.approx(want, abs=1e-6), (answer, got)
        else:
            assert got[key] == want, (answer, got)


def test_the_labelled_set_is_large_and_covers_every_kind():
    sources = {src for *_, src in LABELLED}
    assert len(LABELLED) >= 60
    assert {"paper-D", "issue", "negation", "hedge", "unparsed", "subject", "builder"} <= sources
    for dim in ("sync", "existence", "consistency"):
        cases = [c for c in LABELLED if c[0] == dim]
        assert len(cases) >= 20
        assert any(None in c[2].values() for c in cases)  # every dimension has answers that must stay unparsed
    answers = [(d, a) for d, a, *_ in LABELLED]
    assert len(answers) == len(set(answers))


def test_the_four_misreadings_of_issue_11():
    assert extract_sync("There is no noticeable delay") == {"synced": True, "direction": "none", "offset_s": 0.0}
    assert extract_existence("I don't hear any music, only the sound of wind.")["audio_state"] == "audio_described"
    assert extract_existence("A dog barks twice and a car passes by.")["audio_state"] == "audio_described"
    assert extract_consistency("There is no mismatch between the audio and the video.")["match"] == "match"


def test_accuracy_report_counts_and_lists_misses():
    perfect = extractor_accuracy()
    assert perfect["overall"] == {"n": len(LABELLED), "correct": len(LABELLED), "accuracy": 1.0}
    assert perfect["misses"] == []
    assert sum(perfect[d]["n"] for d in ("sync", "existence", "consistency")) == len(LABELLED)
    # a constant "synchronized / described / match" guess: right exactly where the label is that class
    constant = {"sync": {"synced": True, "direction": "none", "offset_s": 0.0},
                "existence": {"audio_state": "audio_described"}, "consistency": {"match": "match"}}
    guess = extractor_accuracy(lambda dim, _answer: constant[dim])
    want = sum(expected == constant[dim] for dim, _, expected, _ in LABELLED)
    assert guess["overall"]["correct"] == want and len(guess["misses"]) == len(LABELLED) - want
    miss = guess["misses"][0]
    assert set(miss) == {"dimension", "answer", "expected", "got", "source"}
    # offsets match within 1e-6 s
    def nudged(by):
        def run(dim, answer):
            got = extract(dim, answer)
            return {**got, "offset_s": got["offset_s"] + by} if isinstance(got.get("offset_s"), float) else got
        return run

    assert extractor_accuracy(nudged(1e-7))["misses"] == []
    off = extractor_accuracy(nudged(1e-3))
    assert len(off["misses"]) == sum(isinstance(e.get("offset_s"), float) for _, _, e, _ in LABELLED) > 20


@pytest.mark.slow  # every labelled set of every reader, read once: about 10 s
def test_benchmark_prints_accuracy_per_dimension_and_overall(capsys):
    import runpy
    from pathlib import Path

    bench = runpy.run_path(str(Path(__file__).parents[3] / "benchmarks" / "extractor_accuracy.py"))
    bench["main"]([])
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split(":")[0] for ln in lines[:3]] == ["sync", "existence", "consistency"]
    assert all("accuracy=1.000" in ln for ln in lines[:3])
    last = dict(kv.split("=") for kv in lines[-1].split())
    assert float(last["accuracy"]) == 1.0 and 0 < float(last["baseline"]) < 0.6 and int(last["n"]) == len(LABELLED)


@pytest.mark.parametrize("dimension", ["sync", "existence", "consistency"])
@pytest.mark.parametrize("answer", ["", "   ", "I don't know.", "Sorry, I can't help with that.", "Hmm."])
def test_empty_and_non_answers_stay_unparsed(dimension, answer):
    assert all(v is None for v in extract(dimension, answer).values())


def test_ambiguous_answers_are_unparsed_in_the_audit_not_a_dodge(tmp_path):
    """An answer that makes no claim is coverage lost, not a visual-only dodge (which the old rules defaulted to)."""
    diag = diagnostic(2)
    path = tmp_path / "p.jsonl"
    rows = [{"id": "c0/mute/existence", "response": "I'm not sure what the audio contains."},
            {"id": "c1/mute/existence", "response": "A ball rolls across the floor and stops."},
            {"id": "c0/original/existence", "response": "I hear a thud."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pred = read_predictions(path, diag).set_index("id")
    assert pd.isna(pred.loc["c0/mute/existence", "audio_state"])
    assert pred.loc["c1/mute/existence", "audio_state"] == "visual_only"
    res = audit_interventions(diag, read_predictions(path, diag))
    # dodge: muted clips 1 of 1 parsed (c1), real clips 0 of 1 -> (1 + 0) / 2; the hedge is in neither count
    assert res["failure_modes_n"]["audio_dodge"] == 2 and res["failure_modes"]["audio_dodge"] == 0.5
    assert res["coverage"]["existence"]["parsed"]["value"] == pytest.approx(2 / 4)
    assert res["coverage"]["existence"]["answered"]["value"] == pytest.approx(3 / 4)


def test_llm_extractor_reads_the_offset_the_same_way():
    assert llm_fields("sync", "audio early", "The fall occurs at 5.0 s; the thud is heard at 3.1 s.") == {
        "synced": False, "direction": "early", "offset_s": pytest.approx(-1.9)}
    assert llm_fields("sync", "audio delayed", "It trails by 200 ms.")["offset_s"] == pytest.approx(0.2)
    # a number word needs a space: "as" is not "a s"
    assert extract_sync("The audio is delayed as well.")["offset_s"] is None


# ------------------------------------------------------------------------------------ reading answers
NO_FIELDS = {"sync": {"synced": None, "direction": None, "offset_s": None}, "existence": {"audio_state": None},
             "consistency": {"match": None}}
DEGENERATE = {  # every reader must read these as no answer
    "constant word": ["Audio", "Sound.", "Audio Audio Audio Audio", "sound sound sound", "Video"],
    "empty": ["", "   ", "\n\n", "..."],
    "noise": ["asdkj qwpeo zmxn", "<unk><unk><unk> Audio", "<|endoftext|>Audio", "!!!!????", "qwerty zxcvb audio",
              "Lorem ipsum dolor sit amet, consectetur adipiscing elit."],
    "off-topic": ["The capital of France is Paris.", "La capital de Francia es París.", "法国的首都是巴黎。"],
}


@pytest.mark.parametrize("dimension", ["sync", "existence", "consistency"])
@pytest.mark.parametrize(("kind", "answer"), [(k, a) for k, answers_ in DEGENERATE.items() for a in answers_])
def test_degenerate_outputs_are_no_answer(dimension, kind, answer):
    assert extract(dimension, answer) == NO_FIELDS[dimension], (kind, answer)


@pytest.mark.parametrize("asked", ["sync", "existence", "consistency"])
@pytest.mark.parametrize("dimension", ["sync", "existence", "consistency"])
def test_the_question_echoed_back_is_no_answer(asked, dimension):
    """Any of the three diagnostic questions repeated verbatim (a model that echoes its prompt) reads as nothing."""
    assert extract(dimension, answers.QUESTIONS[asked]) == NO_FIELDS[dimension]


@pytest.mark.parametrize("answer", [
    "The sound does not line up with the visuals; it is early by about 2 seconds.",
    "They don't line up.",
    "The thud doesn't coincide with the impact.",
    "The sound and the fall do not occur at the same time.",
    "The audio and the picture never match up in time.",
    "El sonido y la imagen no coinciden.",
    "声音和画面对不上。",
])
def test_negated_synchrony_is_desynchrony(answer):
    assert extract_sync(answer)["synced"] is False


def test_negated_synchrony_keeps_the_stated_direction_and_offset():
    got = extract_sync("The sound does not line up with the visuals; it is early by about 2 seconds.")
    assert got == {"synced": False, "direction": "early", "offset_s": pytest.approx(-2.0)}
    # "not only ..." and alternatives are no negated claim
    assert extract_sync("Not only is it in sync, the timing is perfect.")["synced"] is True
    assert extract_sync("It could be synchronized or not; I can't really tell.")["synced"] is None


def test_a_bare_topic_word_is_no_sound_description_but_a_hearing_claim_is():
    for answer in ("Audio", "audio audio audio", "<|endoftext|>Audio"):
        assert extract_existence(answer)["audio_state"] is None
        assert extract_consistency(answer)["match"] is None
    assert extract_existence("I hear a sound.")["audio_state"] == "audio_described"
    assert extract_existence("Music.")["audio_state"] == "audio_described"
    assert extract_existence("No audio.")["audio_state"] == "muted"


def test_visual_only_needs_a_described_scene():
    assert extract_existence("A man is chopping vegetables on a wooden board.")["audio_state"] == "visual_only"
    assert extract_existence("The capital of France is Paris.")["audio_state"] is None
    assert extract_consistency("A woman waters plants in a garden.")["match"] == "none"
    assert extract_consistency("The capital of France is Paris.")["match"] is None


@pytest.mark.parametrize(("dimension", "answer", "expected"), [
    ("sync", "No está sincronizado: el sonido llega con unos 2 segundos de retraso.",
     {"synced": False, "direction": "delay", "offset_s": 2.0}),
    ("sync", "El sonido se adelanta aproximadamente 1,5 segundos a la imagen.",
     {"synced": False, "direction": "early", "offset_s": -1.5}),
    ("sync", "画面比声音慢了大约2秒。", {"synced": False, "direction": "early", "offset_s": -2.0}),
    ("sync", "音频与画面同步。", {"synced": True, "direction": "none", "offset_s": 0.0}),
    ("existence", "No se oye nada.", {"audio_state": "muted"}),
    ("existence", "没有音乐，但有人在说话。", {"audio_state": "audio_described"}),
    ("consistency", "El audio no corresponde a la imagen.", {"match": "mismatch"}),
    ("consistency", "狗叫声与画面中的狗相符。", {"match": "match"}),
])
def test_spanish_and_chinese_answers_are_read_through_the_gloss(dimension, answer, expected):
    got = extract(dimension, answer)
    assert {k: got[k] for k in expected} == pytest.approx(expected)


def test_off_topic_answers_are_no_audio_dodge_in_the_audit(tmp_path):
    """A tiny model answering off-topic text or gibberish everywhere has no dodge rate (nothing parsed), not 0.875."""
    diag = diagnostic(4)
    path = tmp_path / "p.jsonl"
    noise = ["The capital of France is Paris.", "asdkj qwpeo zmxn", "Audio", "<unk><unk> Audio"]
    path.write_text("".join(json.dumps({"id": i, "response": noise[k % 4]}) + "\n"
                            for k, i in enumerate(diag["id"])))
    pred = read_predictions(path, diag)
    res = audit_interventions(diag, pred)
    assert res["failure_modes_n"]["audio_dodge"] == 0 and res["failure_modes"]["audio_dodge"] is None
    assert res["coverage"]["existence"]["parsed"]["value"] == 0
    assert res["label_sources"] == {"given": 0, "rule": 0, "extractor": 0, "unparsed": len(diag),
                                    "answers": len(diag)}
