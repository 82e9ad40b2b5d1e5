"""One judge run across the processes of a multi-process launch (``accelerate launch -m omniaudit judge``,
torchrun): every process is one rank, rank r of N judges shard r/N (the ``--shard`` split of :mod:`~.shards`) into
its own part file beside ``--out``, with its own journal (a killed rank resumes its own part on rerun); then the
processes meet (accelerate's PartialState, over gloo) and the main process merges the N parts with
:func:`~.shards.merge_predictions` into ``--out``, byte for byte the file a single process writes. Nothing is
scheduled here: the launcher starts the processes, the shard split deals the items."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omniaudit.errors import InputError
from omniaudit.io import check_out_file
from omniaudit.runners.shards import merge_predictions

DP_TIMEOUT_S = 24 * 3600  # how long a finished rank waits for the slowest one (the process group's timeout)


class OtherRankReports(Exception):  # noqa: N818 - not an error to report: the main process reports it
    """A non-main rank's failure (or refusal), or another rank's, which the main process reports for every rank and
    exits 2: the command ends on this rank quietly and with status 0, for a launcher (torchrun) stops every process
    as soon as one exits non-zero, and could stop the main process before it says why."""


def launch_world() -> tuple[int, int] | None:
    """(rank, world size) of this process when a multi-process launcher started it (``accelerate launch``,
    ``torchrun``: ``WORLD_SIZE`` > 1, the rank from ``RANK``, else ``LOCAL_RANK``), else None. Reads the environment
    only: no distributed package is imported, so the core install needs none."""
    import os

    try:
        world = int(os.environ.get("WORLD_SIZE") or 1)
        rank = int(os.environ.get("RANK") or os.environ.get("LOCAL_RANK") or 0)
    except ValueError:
        raise InputError("WORLD_SIZE, RANK and LOCAL_RANK must be integers (set by the launcher)",
                         value=" ".join(f"{k}={os.environ.get(k)}" for k in ("WORLD_SIZE", "RANK", "LOCAL_RANK")
                                        if k in os.environ)) from None
    if world <= 1:
        return None
    if not 0 <= rank < world:
        raise InputError(f"RANK {rank} is not one of the launch's {world} processes (0..{world - 1})")
    return rank, world


def part_path(out: str | Path, rank: int, world: int) -> Path:
    """Where rank ``rank`` of ``world`` keeps its part of ``out`` (``x.jsonl.rank-0-of-2``)."""
    out = Path(out)
    return out.with_name(f"{out.name}.rank-{rank}-of-{world}")


def join_process_group(world: int):
    """accelerate's PartialState for this launch: it joins the process group and puts each GPU process on its own
    device (``LOCAL_RANK``), which ``hf:`` judges load onto. The group's backend is gloo on CPUs and GPUs alike: the
    ranks only exchange a few small objects (their outcomes), and gloo needs no GPU memory of the judge's, no NCCL
    watchdog over the long wait for the slowest rank, nor one GPU per process. Its timeout
    (:data:`DP_TIMEOUT_S`) is how long a finished rank waits."""
    import os
    from datetime import timedelta

    try:
        import torch
        from accelerate import PartialState
    except ImportError as exc:
        raise InputError(f"a multi-process launch (WORLD_SIZE={world}) needs accelerate and torch ({exc}): pip "
                         "install 'omniaudit[infer]' -c requirements/constraints.txt, or run one process (without "
                         "the launcher, or --shard I/N per machine)") from None
    cpu = os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes") or not torch.cuda.is_available()
    with _quiet_stdout():  # gloo prints "[Gloo] Rank r is connected to ..." on stdout, where the summary goes
        state = PartialState(cpu=cpu, backend="gloo", timeout=timedelta(seconds=DP_TIMEOUT_S))
    if state.num_processes != world:
        raise InputError(f"the launcher says WORLD_SIZE={world} but accelerate's process group has "
                         f"{state.num_processes} process(es) ({state.distributed_type}); use a launch config that "
                         "starts the processes through torchrun (e.g. accelerate_configs/cpu_2proc.yaml on CPU)")
    return state


def leave_process_group() -> None:
    """Destroys this process's process group, if a launch joined one (a no-op otherwise, torch left unimported). Called
    once as the command ends: a gloo group left to the interpreter's exit can abort the process ("terminate called
    without an active exception", SIGABRT), which the launcher then reports as the whole launch failing."""
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


@contextmanager
def _quiet_stdout():
    """The block's writes to file descriptor 1 (a native library's own prints) are discarded; Python's are flushed
    first. Errors are raised as exceptions and are not affected."""
    import os
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _silenced_rank() -> None:
    """A non-main rank says nothing but errors: no library progress bars (its warnings are forwarded)."""
    import os
    import sys

    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    if "datasets" in sys.modules:
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()


def _sum_counts(parts: list[dict], world: int) -> dict:
    """The counts of the whole run from the ranks' counts (see run_judge)."""
    from collections import Counter

    first = parts[0]
    total = {**first, "shard": None, "processes": world}
    total.pop("journal", None)
    for key, value in first.items():
        if key in ("runs", "answer_format", "shard", "selected", "limit", "journal"):
            continue
        if isinstance(value, dict):
            total[key] = dict(sorted(sum((Counter(p[key]) for p in parts), Counter()).items()))
        elif isinstance(value, int) and not isinstance(value, bool):
            total[key] = sum(p[key] for p in parts)
        elif value is None and any(p[key] is not None for p in parts):
            total[key] = sum(p[key] or 0 for p in parts)
    return total


def _start_group(world: int, main: bool):
    """The process group of the launch; a failure to start it (the same on every rank: the environment, the
    packages) is said once, by the main process."""
    try:
        return join_process_group(world)
    except InputError as exc:
        if main:
            raise
        raise OtherRankReports(str(exc)) from None


def _end_other_rank(state, error: Exception | None, outcome: dict, outcomes: list[dict]) -> None:
    """A rank other than the main one waits until the main process has merged (or given up), then ends: quietly,
    or with a bug's own traceback, or reporting that a rank failed (the main process said why)."""
    state.wait_for_everyone()
    if error is not None and not isinstance(error, InputError | OSError):
        raise error
    if error is not None or any("error" in o for o in outcomes):
        raise OtherRankReports(outcome.get("error", "another rank failed"))


def judge_data_parallel(dataset: str | Path, config: str, spec: str, out: str | Path,
                        conditions: list[str] | None = None, progress=None, formats: list[str] | None = None, *,
                        min_usable: float | None = None, **options) -> dict | None:
    """:func:`~.run.run_judge` as one rank of a multi-process launch (:func:`launch_world`): this rank judges shard
    r/N into :func:`part_path` (its journal beside it, kept until the merge: a killed or failed rank resumes its own
    part on rerun, the finished ranks answer nothing again), every rank waits for the others, and the main process
    (rank 0) checks the run's usable answers as a single process would (``min_usable``, over every part), merges the
    parts into ``out`` (:func:`merge_predictions`: byte for byte the single-process file), removes the parts and
    their journals, and returns the whole run's counts (``processes``: N). The other ranks return None.

    Failures are reported by the main process, for every rank (an InputError naming the ranks unless all failed
    alike); on the other ranks they raise :class:`OtherRankReports` (the command ends quietly there). Their
    warnings are forwarded to the main process. Every rank takes part in every meeting, whatever failed, so no rank
    waits for one that gave up."""
    import warnings
    from contextlib import ExitStack

    from omniaudit.io import output_lock
    from omniaudit.runners.rows import MIN_USABLE, is_predictions_file
    from omniaudit.runners.run import run_judge

    world_info = launch_world()
    if world_info is None:
        raise InputError("judge_data_parallel runs under a multi-process launcher (WORLD_SIZE > 1)")
    rank, world = world_info
    main = rank == 0
    if "shard" in options:
        raise TypeError("judge_data_parallel deals the shards itself: no shard option")
    min_usable = MIN_USABLE if min_usable is None else min_usable
    if not main:
        _silenced_rank()
        progress = None
    state = _start_group(world, main)
    out = Path(out)
    part = part_path(out, rank, world)
    with ExitStack() as held, warnings.catch_warnings(record=not main) as caught:
        if not main:
            warnings.simplefilter("always")  # every warning forwarded to the main process

        def checks() -> None:  # before any rank judges: a refusal stops every rank up front
            if not 0 <= min_usable <= 1:
                raise InputError("min_usable must be in [0, 1]", value=min_usable)
            if main:  # a second run on the same --out is refused, not raced
                held.enter_context(output_lock(out))
            check_out_file(out, is_predictions_file)  # never replace a file omniaudit did not write

        def judge() -> dict:  # the usable answers are checked over all parts, by the main process
            return run_judge(dataset, config, spec, part, conditions, progress, formats, shard=(rank, world),
                             min_usable=0.0, keep_journal=True, **options)

        outcome: dict[str, Any]
        for step in (checks, judge):
            error, outcome = None, {}
            try:
                outcome["counts"] = step()
            except Exception as exc:  # noqa: BLE001 - reported by the main process, after every rank has met
                error = exc
                outcome["error"] = str(exc) if isinstance(exc, InputError) else f"{type(exc).__name__}: {exc}"
            outcome["warnings"] = [(w.category.__name__, str(w.message)) for w in (caught or ())]
            outcomes = _gather(state, outcome)
            if any("error" in o for o in outcomes):
                break
        if not main:
            _end_other_rank(state, error, outcome, outcomes)
            return None
        try:
            return _finish(out, spec, world, outcomes, error, min_usable, progress, judged=step is judge)
        finally:
            state.wait_for_everyone()


def _gather(state, outcome: dict) -> list[dict]:
    """Every rank's outcome, in rank order, on every rank (a meeting: it returns when all ranks have sent theirs)."""
    from accelerate.utils import gather_object

    outcomes = gather_object([outcome])
    if len(outcomes) != state.num_processes:
        raise RuntimeError(f"gathered {len(outcomes)} outcomes from {state.num_processes} processes")
    return outcomes


_WARNINGS = {"ServedModelWarning", "AnswerFormatWarning"}


def _finish(out: Path, spec: str, world: int, outcomes: list[dict], error: BaseException | None,
            min_usable: float, progress, judged: bool) -> dict:
    """The main process after every rank has judged its part: report, check, merge, clean up."""
    import json
    import warnings

    from omniaudit.runners import run as run_module
    from omniaudit.runners.rows import UnusableRun, check_usable

    for k, o in enumerate(outcomes[1:], 1):
        for category, message in o["warnings"]:
            cls = getattr(run_module, category) if category in _WARNINGS else UserWarning
            warnings.warn(f"rank {k} of {world}: {message}", cls, stacklevel=3)
            if progress is not None:
                progress(f"warning: rank {k} of {world}: {message}")
    failed = [(k, o["error"]) for k, o in enumerate(outcomes) if "error" in o]
    if failed:
        if error is not None and {m for _, m in failed} == {outcomes[0]["error"]}:
            raise error  # every failed rank says what the main one says (a refusal, a bad option): once
        kept = (" The finished parts and every rank's answers so far are kept beside the output: rerun the same "
                "command and each rank resumes its own part." if judged and len(failed) < world else "")
        raise InputError("; ".join(f"rank {k} of {world}: {m.rstrip('.')}" for k, m in failed) + "." + kept)
    parts = [part_path(out, k, world) for k in range(world)]
    absent = [p for p in parts if not p.is_file()]
    if absent:
        raise InputError(f"the part of rank {parts.index(absent[0])} is not on this machine ({absent[0]}): a launch "
                         "across machines needs --out on a file system that every machine shares")
    journals = [Path(o["counts"]["journal"]) for o in outcomes]

    def drop_parts() -> None:
        for path in (*parts, *journals):
            path.unlink(missing_ok=True)

    if not spec.startswith("scripted:"):  # as a single process checks: over the whole run's answers, in its order
        rows = [json.loads(line) for p in parts for line in p.read_text(encoding="utf-8").splitlines() if line]
        rows.sort(key=lambda r: (r.get("run", 0), r["shard"]["position"]))
        try:
            check_usable(rows, spec, min_usable)
        except UnusableRun:
            drop_parts()  # the model's answers, not an interruption: a rerun asks again
            raise
    merge_predictions(out, parts)
    drop_parts()
    return _sum_counts([o["counts"] for o in outcomes], world)
