"""Progress in piped and SLURM logs (timestamped lines with counts and ETA), -q / -v."""

import json
import logging
import re
import time

from omniaudit.cli import main
from omniaudit.cli.progress import log, with_eta
from omniaudit.runners import run_judge


def test_counts_get_a_rate_and_an_eta():
    started = time.monotonic() - 10.0  # 100 items in 10 s: 10/s, 380 left: 38 s
    assert re.fullmatch(r"run 1/2: 100/480 \(10\.0/s, ETA 0m3[78]s\)", with_eta("run 1/2: 100/480", started))
    assert with_eta("loading dataset", started) == "loading dataset"
    assert with_eta("0/480", started) == "0/480"


def test_piped_progress_is_logged_and_quiet_silences_it(intervention_dataset, tmp_path, capsys, monkeypatch):
    from omniaudit.cli import progress

    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.0)  # every step logged (a long job's lines, in a short test)
    preds = tmp_path / "p.jsonl"
    run_judge(intervention_dataset, "diagnostic", "scripted:oracle", preds)
    args = ["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(preds),
            "--n-resamples", "20"]
    try:
        assert main([*args, "--out", str(tmp_path / "a")]) == 0
        err = capsys.readouterr().err  # not a terminal: log lines, not a spinner
        assert re.search(r"^\d\d:\d\d:\d\d INFO auditing audio grounding: loading dataset$", err, re.M)
        assert main(["-q", *args, "--out", str(tmp_path / "b")]) == 0
        captured = capsys.readouterr()
        assert captured.err == "" and "report:" in captured.out  # the result still prints
        assert json.loads((tmp_path / "b" / "audit.json").read_text())["avg_gap"] is not None
        assert main(["-v", *args, "--out", str(tmp_path / "c")]) == 0 and log.isEnabledFor(logging.DEBUG)
    finally:
        log.setLevel(logging.INFO)
