"""Progress in piped and SLURM logs (timestamped lines with counts and ETA), -q / -v."""

import json
import logging
import re

from omniaudit.cli import main
from omniaudit.cli.progress import EtaClock, log
from omniaudit.runners import run_judge


def test_counts_get_the_steady_rate_and_an_eta_not_the_warm_up():
    clock = EtaClock()
    assert clock("loading dataset", now=0.0) == "loading dataset"
    assert clock("run 1/2: 8/480", now=60.0) == "run 1/2: 8/480"  # a minute of loading before the first answers
    # 100 more items in 10 s: 10/s, 380 left: 38 s (the average since the start would say 108 in 70 s)
    assert clock("run 1/2: 108/480", now=70.0) == "run 1/2: 108/480 (10.0/s, ETA 0m37s)"
    assert clock("run 2/2: 0/480", now=71.0) == "run 2/2: 0/480"  # another job: its own clock
    assert clock("run 2/2: 48/480", now=75.0) == "run 2/2: 48/480 (12.0/s, ETA 0m36s)"


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
