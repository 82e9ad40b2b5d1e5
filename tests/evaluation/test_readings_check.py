"""Checking the readings on your own model: a stratified sample to label by hand, and agreement with the labels."""

import json

import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.evaluation.readings import agreement, sample_readings
from omniaudit.runners.reading import read_answer

REPLIES = ["Answer: A", "B.", "It is not the case that A is better.", "I choose B", "A... wait, no.",
           "Clip A is better", "A or B?", "B is better. Final answer: B."] * 5


def _predictions(tmp_path):
    rows = []
    for i, raw in enumerate(REPLIES):
        label, reason = read_answer(raw, ["A", "B"])
        rows.append({"id": f"p{i}", "order": "AB", "run": 0, "raw": raw, "label": label, "parsed": label is not None,
                     "option_probs": None, **({"unread": reason} if reason else {})})
    rows.append({"id": "free", "order": None, "run": 0, "raw": "A dog barks.", "label": None, "parsed": None,
                 "option_probs": None})
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_sample_is_seeded_stratified_and_leaves_free_form_rows_out(tmp_path):
    path = _predictions(tmp_path)
    one, two = sample_readings(path, n=12, seed=3), sample_readings(path, n=12, seed=3)
    pd.testing.assert_frame_equal(one, two)
    assert len(one) <= 12 and "free" not in set(one["id"]) and set(one["truth"]) == {""}
    assert {"A", "B", "none"} <= set(one["reading"])  # every reading represented
    assert {"negated", "reversed", "none"} <= set(one["reason"])  # every reason for no reading too
    assert sample_readings(path, n=1000)["id"].is_unique


def test_agreement_counts_misreadings_and_misses_against_hand_labels(tmp_path):
    path = _predictions(tmp_path)
    assert main(["readings", "sample", "--predictions", str(path), "--n", "40", "--out", str(tmp_path / "r")]) == 0
    table = pd.read_csv(tmp_path / "r" / "readings.csv", keep_default_na=False)
    assert "<table>" in (tmp_path / "r" / "readings.html").read_text()
    table["truth"] = table["reading"]
    table.to_csv(tmp_path / "r" / "readings.csv", index=False)
    perfect = agreement(tmp_path / "r" / "readings.csv")
    assert perfect.accuracy == 1.0 and perfect.kappa == 1.0 and perfect.meets_goal
    # the hand labeller reads "A... wait, no." as no answer (as the reader) but "Clip A is better" as B: one misread
    table.loc[table["raw"] == "Clip A is better", "truth"] = "B"
    table.loc[table["raw"] == "A or B?", "truth"] = "A"  # and a reply the reader left unread as A: a miss
    table.to_csv(tmp_path / "r" / "readings.csv", index=False)
    result = agreement(tmp_path / "r" / "readings.csv")
    from sklearn.metrics import cohen_kappa_score
    assert result.kappa == pytest.approx(cohen_kappa_score(table["truth"], table["reading"]))
    assert {r["raw"] for r in result.misread} == {"Clip A is better"} and not result.meets_goal
    assert {r["raw"] for r in result.missed} == {"A or B?"}
    with pytest.raises(SystemExit) as stop:
        main(["readings", "agree", str(tmp_path / "r" / "readings.csv")])
    assert stop.value.code == 1


def test_composition_grades_are_sampled_with_their_gold_and_what_read_them(tmp_path):
    """A C3PO graded.csv: each reply shown with its question and gold, read right / wrong (none where no reader
    decided), the reason its reader; a misgraded reply is a misreading."""
    rows = [{"id": f"s{i}", "template_name": "T", "question": "How many dogs?", "answer": "3", "prediction": pred,
             "exact": by == "exact", "closed": by == "closed", "read_by": by, "correct": ok, "run": 0}
            for i, (pred, by, ok) in enumerate([("3", "exact", True), ("three dogs", "closed", True),
                                                ("I count 4.", "closed", False), ("hmm", "", False),
                                                ("Not 3: I count 4.", "closed", True)] * 3)]
    path = tmp_path / "graded.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    sample = sample_readings(path, n=15)
    assert set(sample["reading"]) == {"right", "wrong", "none"} and set(sample["reason"]) == {"exact", "closed", ""}
    assert sample["raw"].str.contains("gold: 3\nreply: ").all()
    sample["truth"] = sample["reading"]
    sample.loc[sample["raw"].str.endswith("Not 3: I count 4."), "truth"] = "wrong"  # graded right: misread
    sample.to_csv(tmp_path / "readings.csv", index=False)
    result = agreement(tmp_path / "readings.csv")
    assert len(result.misread) == 3 and not result.meets_goal


def test_unfilled_and_foreign_files_are_refused(tmp_path):
    path = _predictions(tmp_path)
    sample = sample_readings(path, n=5)
    sample.to_csv(tmp_path / "empty.csv", index=False)
    with pytest.raises(InputError, match="no row has a truth"):
        agreement(tmp_path / "empty.csv")
    (tmp_path / "other.jsonl").write_text(json.dumps({"id": "x", "response": "A"}) + "\n")
    with pytest.raises(InputError, match="not an `omniaudit judge` predictions file"):
        sample_readings(tmp_path / "other.jsonl")


def test_the_scorecard_reports_a_reader_check_and_refuses_one_naming_no_model(tmp_path):
    from omniaudit.evaluation.scorecard.card import reader_checks
    from omniaudit.evaluation.scorecard.runner import check_reader_checks

    sample = sample_readings(_predictions(tmp_path), n=20).assign(truth=lambda t: t["reading"])
    sample.loc[0, "truth"] = "B" if sample.loc[0, "reading"] != "B" else "A"  # one reply the reader got wrong
    sample.to_csv(tmp_path / "checked.csv", index=False)
    checked = reader_checks({"judge": str(tmp_path / "checked.csv")}, tmp_path)["judge"]
    assert checked["n"] == len(sample) and checked["file"] == "checked.csv" and not checked["meets_goal"]
    assert checked["misread"] + checked["left_unread"] == 1
    assert checked["accuracy"] == pytest.approx(1 - 1 / len(sample))
    check_reader_checks({"judge": str(tmp_path / "checked.csv")}, {"judge": "scripted:random"})
    with pytest.raises(InputError, match="names no model of this card: other"):
        check_reader_checks({"other": str(tmp_path / "checked.csv")}, {"judge": "scripted:random"})
    assert main(["scorecard", "--model", "j=scripted:random", "--reader-check", f"x={tmp_path / 'checked.csv'}",
                 "--out", str(tmp_path / "card")]) == 2
    assert not (tmp_path / "card").exists()
