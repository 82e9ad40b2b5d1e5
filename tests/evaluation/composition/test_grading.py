"""Reading the grading judge's Yes / No verdict (C3PO §3): final explicit verdicts win, ambiguity is unparsed, and
audits count the unparsed verdicts."""

import json

import pandas as pd
import pytest

from omniaudit.answer_match import exact_match
from omniaudit.evaluation.composition.grading import grade, unparsed_verdicts
from omniaudit.evaluation.composition.verdicts import JUDGE_PROMPT, YES_FLAG_MIN, parse_verdict, verdict_yes_rate

# (judge answer, verdict): a labelled set of how judges actually answer "same entity? Yes or No"
VERDICT_TEXTS = [
    ("Yes", "Yes"),
    ("No", "No"),
    ("yes.", "Yes"),
    ("**No**", "No"),
    ("(Yes)", "Yes"),
    ("Answer: NO", "No"),
    ("The answer is yes.", "Yes"),
    ("I'd say no.", "No"),
    ("Yes, both name a rabbit.", "Yes"),
    ("Yes \u2014 same entity.", "Yes"),
    ("Yes, they are different words for the same animal.", "Yes"),
    ("No, the prediction names a hare, not a rabbit.", "No"),
    # an explanation of equivalence is not a "No" because it contains the word "no"
    ("There is no difference: both name a rabbit.", "Yes"),
    ("No difference.", "Yes"),
    ("They aren't different.", "Yes"),
    ("The answer is no different from the ground truth.", "Yes"),
    # reasoning, then the verdict: the final explicit verdict wins
    ("The prediction and the ground truth refer to the same animal, no doubt about it.\nYes", "Yes"),
    ("<think>Ground truth: rabbit. Prediction: bunny. No, wait: a bunny is a rabbit.</think>\nYes", "Yes"),
    ("Let me compare. The answer says 'five', the prediction 'four'. These differ.\n\nFinal answer: No", "No"),
    ("Reasoning: both refer to a thunderstorm. Verdict: Yes", "Yes"),
    ("Yes. Actually, on reflection, the prediction names a different colour, so no.", "No"),
    ("Does the prediction pick out the same entity? Yes.", "Yes"),
    ("Verdict: No. Both name animals, but different ones.", "No"),
    # statements without a Yes / No
    ("The predicted answer is semantically equivalent to the ground truth.", "Yes"),
    ("The prediction is correct.", "Yes"),
    ("The predicted answer is not equivalent to the ground truth.", "No"),
    ("They are not the same entity.", "No"),
    ("They refer to different objects.", "No"),
    ("The prediction is incorrect.", "No"),
    ("The prediction doesn't match the ground truth.", "No"),
    ("Not the same: the prediction says red, the answer is blue.", "No"),
    ("The ground truth is 'rabbit' and the prediction is 'bunny'; they don't refer to the same thing.", "No"),
    # ambiguous, hedged, contradictory, unfinished or empty: unparsed
    ("Yes and no.", None),
    ("Yes/No", None),
    ("Answer with exactly one of: Yes, No.", None),
    ("No, there is no difference.", "No"),  # the explicit verdict stands over the explanation (was None)
    ("No - wait, Yes", None),  # two bare opposite verdicts (was No)
    ("Yes. No.", None),  # (was No)
    ("Both name a rabbit, but the prediction says two while the answer says one, so they are different.", None),
    ("I cannot determine whether they match.", None),
    ("Maybe.", None),
    ("Probably the same animal.", None),
    ("<think>They are the same so yes", None),
    ("", None),
    (None, None),
]


@pytest.mark.parametrize(("text", "verdict"), VERDICT_TEXTS)
def test_verdict_parser_on_a_labelled_set(text, verdict):
    assert parse_verdict(text) == verdict


def test_the_labelled_set_is_large_and_balanced():
    verdicts = [v for _, v in VERDICT_TEXTS]
    assert len(VERDICT_TEXTS) >= 20 and min(verdicts.count("Yes"), verdicts.count("No"), verdicts.count(None)) >= 8


class _Judge:
    """A judge that answers with fixed texts, in item order."""

    def __init__(self, texts):
        self.texts = texts

    def answer(self, items, progress=None):
        return self.texts[: len(items)]


SAMPLES = pd.DataFrame({"id": ["a", "b", "c", "d"], "template_name": "T", "category": "IC", "tier": 2,
                        "question": "Which animal?", "answer": ["rabbit", "rabbit", "hare", "fox"]})
PREDICTIONS = pd.DataFrame({"id": ["a", "b", "c", "d"], "prediction": ["Rabbit", "bunny", "rabbit", "wolf"]})
JUDGE_TEXTS = ["There is no difference: both name a rabbit.",  # b: Yes (the old parser read "no": No)
               "A hare and a rabbit differ.\nSo the verdict is: ...\nYes and no.",  # c: unparsed
               "They refer to different animals.\nNo"]  # d: No


def test_grade_reads_verdicts_and_counts_the_unparsed(monkeypatch):
    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: _Judge(JUDGE_TEXTS))
    graded = grade(SAMPLES, PREDICTIONS, "fake:judge")
    assert graded["judge_says"].tolist() == [None, "Yes", None, "No"]
    assert graded["correct"].tolist() == [True, True, False, False]  # unparsed counts as wrong
    assert unparsed_verdicts(graded) == 1  # "a" was an exact match: never asked, so not unparsed
    assert unparsed_verdicts(grade(SAMPLES, PREDICTIONS)) == 0  # no judge: nothing to parse


def test_composition_audit_reports_unparsed_verdicts(tmp_path, monkeypatch, capsys):
    from omniaudit.cli import main
    from omniaudit.data_builders.composition import build_composition_dataset

    out = build_composition_dataset(tmp_path / "ds_verdicts", n_synthetic=6)  # (datasets caches by folder name)
    ids = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id"])["id"].tolist()
    texts = ["Both name the same colour.\nYes", "Perhaps.", "No - wait, Yes", "No"] * len(ids)
    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: _Judge(texts))
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"id": i, "prediction": "something else"}) + "\n" for i in ids))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", f"r1={run}", f"r2={run}", "--judge",
                 "fake:judge", "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    says = [parse_verdict(t) for t in texts[: len(ids)]]
    per_run = says.count(None)
    assert per_run == sum(k % 4 in (1, 2) for k in range(len(ids))) and per_run > 0
    assert result["n_judged"] == 2 * len(ids)
    assert result["n_unparsed_verdicts"] == 2 * per_run and result["unparsed_verdicts_by_run"] == [per_run] * 2
    assert result["accuracy"]["overall"]["mean"] == pytest.approx(100 * says.count("Yes") / len(ids))
    assert f"**{2 * per_run} unparsed**" in (tmp_path / "rep" / "report.md").read_text()
    assert f"{2 * len(ids)} asked, {2 * per_run} unparsed" in capsys.readouterr().out


# ------------------------------------------------------------------------------------ reading answers
@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("ＪＡＰＡＮＥＳＥ", "Japanese", True),
    ("İstanbul", "Istanbul", True),
    ("İstanbul", "istanbul", True),
    ("ISTANBUL", "İstanbul", True),
    ("1,000", "1000", True),
    ("1,000,000 people", "1000000 people", True),
    ("Straße", "STRASSE", True),
    ("México", "mexico", True),
    ("１０００", "1000", True),
    ("サッカー", "サッカー", True),  # kana voicing marks are kept (not stripped as accents)
    ("dos", "2", True),
    ("1,000", "100", False),
    ("1,5", "15", False),
    ("10,00", "1000", False),
    ("once", "11", False),  # "once" is English, not Spanish 11
    ("サッカ", "サッカー", False),
    ("", "Japanese", False),
])
def test_exact_match_normalises_unicode_case_and_digit_grouping(prediction, answer, same):
    assert exact_match(prediction, answer) is same
    assert exact_match(answer, prediction) is same or not prediction  # the same normalisation on both sides


@pytest.mark.parametrize(("text", "verdict"), [
    ("Sí", "Yes"), ("Sí, ambos nombran la misma ciudad.", "Yes"), ("No, son animales distintos.", "No"),
    ("Respuesta: sí", "Yes"), ("No hay diferencia.", "Yes"), ("是", "Yes"), ("否", "No"),
    ("是的，两者指的是同一个城市。", "Yes"), ("不是，预测的是另一种动物。", "No"), ("答案：是", "Yes"),
    ("Nope.", "No"), ("Yep, same thing.", "Yes"),
    ("The answer is no - wait, yes.", None), ("Sí o no", None), ("是或否", None), ("也许吧。", None),
])
def test_verdicts_in_spanish_chinese_and_contradictions(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize("text", ["Audio", "Yes Yes Yes Yes Yes No", "asdkj qwpeo", "<unk><unk>", "", "   ",
                                  JUDGE_PROMPT.format(question="Which animal?", answer="rabbit", prediction="hare"),
                                  "Does the predicted answer pick out exactly the same entity or concept as the "
                                  "ground-truth answer?", "Answer with exactly one of: Yes, No."])
def test_degenerate_verdicts_are_unparsed(text):
    assert parse_verdict(text) is None


def test_yes_rate_uses_the_wilson_interval_and_flags_a_yes_sayer():
    from scipy.stats import binomtest

    says = ["Yes"] * 47 + ["No"] * 3 + [None] * 4  # None: not asked or unparsed, left out
    got = verdict_yes_rate(says)
    ci = binomtest(47, 50).proportion_ci(method="wilson")
    assert (got["n"], got["yes"], got["no"]) == (50, 47, 3) and got["rate"] == pytest.approx(0.94)
    assert got["ci"] == pytest.approx([ci.low, ci.high]) and not got["flagged"]  # lower bound 0.84
    assert verdict_yes_rate(["Yes"] * 120 + ["No"] * 2)["flagged"]  # lower bound 0.94 > 0.9
    assert verdict_yes_rate(["Yes"] * YES_FLAG_MIN)["flagged"]  # Yes to every verdict
    assert not verdict_yes_rate(["Yes"] * (YES_FLAG_MIN - 1))["flagged"]  # too few to call
    empty = verdict_yes_rate([None, None])  # nothing read: no rate, no flag
    assert empty["n"] == 0 and empty["rate"] is None and empty["ci"] == [None, None] and not empty["flagged"]


def test_composition_audit_flags_a_judge_that_says_yes_to_everything(tmp_path, monkeypatch):
    from omniaudit.cli import main
    from omniaudit.data_builders.composition import build_composition_dataset

    out = build_composition_dataset(tmp_path / "ds_yes", n_synthetic=6)
    ids = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id"])["id"].tolist()
    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: _Judge(["Yes."] * 100))
    run = tmp_path / "run.jsonl"
    run.write_text("".join(json.dumps({"id": i, "prediction": "something else"}) + "\n" for i in ids))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", f"r1={run}", "--judge",
                 "fake:judge", "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    yes = result["judge_verdicts"]
    assert yes["n"] == yes["yes"] == len(ids) and yes["rate"] == 1.0 and yes["flagged"]
    report = (tmp_path / "rep" / "report.md").read_text()
    assert f"Judge Yes rate: {len(ids)}/{len(ids)}" in report and "**Flagged" in report
