"""What the commands tell the user while they work: a console on stderr, progress (a spinner on a terminal, timestamped
lines with counts and ETA in a piped or SLURM log, nothing with ``-q``), notes and warnings, and the log level.

The libraries' own tqdm bars (datasets' "Generating train split", transformers' "Loading weights", Hub downloads)
follow the same rule, decided here once (:func:`setup_logging`): on a terminal they draw as they always did; in a
piped or SLURM log (stderr not a terminal) and with ``-q`` they are off, so a log holds omniaudit's lines, not
carriage-return bar redraws. An environment variable the user set (``HF_DATASETS_DISABLE_PROGRESS_BARS``,
``HF_HUB_DISABLE_PROGRESS_BARS``) has the last word."""

from __future__ import annotations

import logging
import re
import sys
import time
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.text import Text

console = Console(stderr=True)
log = logging.getLogger("omniaudit")
LOG_EVERY_S = 10.0  # piped / SLURM logs: at most one progress line per this many seconds (and the last one)


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is now (a caller, or a test, may have replaced it since)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(verbosity: int) -> None:
    """``-q`` (-1): warnings and errors only, no progress; default (0): progress and notes; ``-v`` (1): debug."""
    log.setLevel({-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG))
    if verbosity < 0 or not console.is_terminal:  # the libraries' own bars are progress too (see the docstring)
        library_bars_off()
    if verbosity < 0:
        import os

        os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    if not log.handlers:
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        log.addHandler(handler)
        log.propagate = False


_TRUE = {"1", "ON", "YES", "TRUE"}  # how datasets and huggingface_hub read their *_DISABLE_PROGRESS_BARS variables


def library_bars_off() -> None:
    """Turn off the tqdm bars of datasets, huggingface_hub and transformers: through their environment variables
    (read when a library is first imported) and, for those imported already, their own switches
    (``datasets.disable_progress_bars()``, ``huggingface_hub.utils.disable_progress_bars()``,
    ``transformers.utils.logging.disable_progress_bar()``). A variable the user set to 0 keeps that library's bars."""
    import os

    off = {}
    for var in ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS"):
        off[var] = os.environ.setdefault(var, "1").upper() in _TRUE
    if off["HF_DATASETS_DISABLE_PROGRESS_BARS"] and "datasets" in sys.modules:
        sys.modules["datasets"].disable_progress_bars()
    if off["HF_HUB_DISABLE_PROGRESS_BARS"]:
        if "huggingface_hub" in sys.modules:
            from huggingface_hub.utils import disable_progress_bars

            disable_progress_bars()
        if "transformers" in sys.modules:  # its weight-loading bars (it also reads the Hub's switch on import)
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()


class EtaClock:
    """Gives a progress message's last count "k/n" its steady rate and the time left ("run 1/2: 120/480" -> "run
    1/2: 120/480 (3.1/s, ETA 1m56s)"). The rate is measured from the first count seen of that job (its text before
    the count, and n) to this one, so a model's load and warm-up before its first answer do not slow the estimate;
    until a second count of the job arrives there is no ETA. A count that goes back (a new run of the same size)
    starts the job's clock again."""

    def __init__(self) -> None:
        self.first: dict[tuple[str, int], tuple[float, int]] = {}

    def __call__(self, message: str, now: float | None = None) -> str:
        counts = list(re.finditer(r"(\d+)/(\d+)", message))
        if not counts:
            return message
        now = time.monotonic() if now is None else now
        done, n = int(counts[-1].group(1)), int(counts[-1].group(2))
        job = (message[: counts[-1].start()], n)
        t0, d0 = self.first.get(job, (now, done))
        if job not in self.first or done < d0:
            self.first[job] = (now, done)
            return message
        if done == d0 or now <= t0:
            return message
        rate = (done - d0) / (now - t0)
        left = max(0, n - done) / rate
        return f"{message} ({rate:.1f}/s, ETA {int(left // 60)}m{int(left % 60):02d}s)"


@contextmanager
def progress_status(title: str):
    """The callback audits and runners accept as ``progress``: on a terminal a rich spinner whose text follows the
    steps; in a piped or SLURM log, timestamped lines once the work has run ``LOG_EVERY_S`` seconds (then at most
    one per ``LOG_EVERY_S``, and the last one); nothing with ``-q``. Counts "k/n" get their steady rate and ETA
    (:class:`EtaClock`)."""
    started, with_eta = time.monotonic(), EtaClock()
    if not log.isEnabledFor(logging.INFO):
        yield lambda msg: None
        return
    if console.is_terminal:
        with console.status(title) as status:
            yield lambda msg: status.update(f"{title}: {with_eta(msg)}")
        return
    last: dict[str, Any]
    last = {"at": started, "message": None, "logged": None}  # short commands log nothing: the result speaks

    def progress(msg: str) -> None:
        last["message"] = msg
        if time.monotonic() - last["at"] >= LOG_EVERY_S:
            last["at"], last["logged"] = time.monotonic(), msg
            log.info("%s: %s", title, with_eta(msg))

    try:
        yield progress
    finally:
        if last["logged"] is not None and last["message"] != last["logged"]:
            log.info("%s: %s", title, with_eta(last["message"]))


def say(kind: str, message: str, style: str = "bold yellow") -> None:
    """``kind: message`` on stderr; the message (values, paths) verbatim: no markup, highlighting or hard wrapping."""
    console.print(Text(f"{kind}: ", style=style) + Text(message), highlight=False, soft_wrap=True)
