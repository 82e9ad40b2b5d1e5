"""A model that answers the Thud questions in a language no reader glosses is not called broken: its answers are
usable text, and the audit says which language it could not read."""

import json

import pandas as pd

from omniaudit.cli import main
from omniaudit.runners.run import usable

RUSSIAN = "Звук синхронизирован с видео, я слышу лай собаки."


def test_answers_in_an_unglossed_language_are_reported_as_such(intervention_dataset, tmp_path, capsys):
    ids = pd.read_parquet(next((intervention_dataset / "diagnostic").glob("*.parquet")), columns=["id"])["id"]
    rows = [{"id": i, "response": RUSSIAN} for i in ids]
    assert all(usable({"parsed": None, "option_probs": None, "raw": r["response"]}) for r in rows)
    pred = tmp_path / "ru.jsonl"
    pred.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(pred),
                 "--out", str(tmp_path / "rep"), "--n-resamples", "50"]) == 0, capsys.readouterr().err
    sources = json.loads((tmp_path / "rep" / "audit.json").read_text())["label_sources"]
    assert sources["unparsed"] == len(ids) and sources["unparsed_languages"] == {"ru": len(ids)}
    assert f"in a language no reader glosses: ru {len(ids)}" in (tmp_path / "rep" / "report.md").read_text()
