"""A scorecard's answers (:class:`ModelAnswers`): each model's predictions file per item config, asked
(``run_judge``, or dealt to the ranks of a launch), reused when a kept file is this very run's (a served model's only
while a canary of its answers, asked again, is answered the same) or merged from shard runs; and the checks that a
smoke run's sample or a sharding can be dealt, before any model call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from omniaudit.audits import get
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard.modalities import dataset_modalities
from omniaudit.evaluation.scorecard.options import ScorecardOptions
from omniaudit.runners.base import RefusedItems
from omniaudit.runners.factory import input_settings
from omniaudit.runners.plugins import BUILT_IN

STATUS = "status.json"
CANARY = 8  # answers of a kept predictions file of a served model asked again before it is reused
CANARY_SEED = 0


class MissingShard(InputError):
    """A merge of shard runs that lacks a shard's answers (or holds another run's)."""


class ModelAnswers:
    """The answering half of a scorecard run (:class:`~.runner.Scorecard` is the rest): each model's predictions
    files, asked, reused or merged (see the module docstring)."""

    out: Path
    models: dict[str, str]
    options: ScorecardOptions
    say: Callable[[str], None]
    datasets: dict[str, Path | str]  # audit -> the dataset its models answered
    canaries: dict[str, dict[str, dict]]  # model -> config -> its canary (see _canary)
    # under a multi-process launch (main process): sends one judge run's arguments to the other ranks, which judge
    # their shards of it beside the main process (run_scorecard sets it); None: one process judges
    dispatch: Callable[[dict], None] | None
    _needs: dict[str, dict[str, tuple[str, ...]]]
    _samples: dict[tuple[str, str], list[int] | None]  # (dataset, config) -> the --limit sample

    def needs(self, audit: str) -> dict[str, tuple[str, ...]]:
        """config -> modalities of an audit's items (the user's dataset's, else the registry's)."""
        if audit not in self._needs:
            configs = get(audit).item_configs
            self._needs[audit] = ({c: dataset_modalities(self.options.data[audit], c) for c in configs}
                                  if audit in self.options.data else dict(configs))
        return self._needs[audit]

    def runner(self, spec: str) -> dict:
        """The runner options of one model: ``answer_format`` only for servers (``openai:``), which can constrain
        their answers; reference and local models answer as they do (scripted by rule, ``hf:`` closed items by
        option scores already)."""
        if spec.startswith("openai:"):
            return self.options.runner
        return {k: v for k, v in self.options.runner.items() if k != "answer_format"}

    def _reusable(self, path: Path, dataset, config: str, spec: str, runs: int) -> bool:
        """A complete predictions file of this very run (dataset build, judge, sampling, model)."""
        from omniaudit.data_builders.fingerprint import fingerprint_of
        from omniaudit.runners.identity import local_model_identity
        from omniaudit.runners.transport import redact

        try:
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            record = rows[0]["provenance"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return False
        kind, _, rest = spec.partition(":")
        sampling = {**self._sampling(), "runs": runs, "max_tokens": self.options.runner.get("max_tokens", 32)}
        shard = rows[0].get("shard")
        selection = record.get("selection") if isinstance(record.get("selection"), dict) else {}
        sample = self.sample(dataset, config)  # a smoke run's sample (None: every item)
        # a limited run's answers only for the same limit and seed, a full run's only for a full run (a limit at or
        # above a config's items takes every item and records none: that file is the full run's)
        limited = (selection.get("limit"), selection.get("limit_seed"))
        if limited != ((None, None) if sample is None else (self.options.limit, self.limit_seed())):
            return False
        expected = (selection.get("items", -1) if sample is None else len(sample)) * runs
        complete = (shard is not None and (shard.get("index"), shard.get("count")) == self.options.shard
                    if self.options.shard else shard is None and len(rows) == expected)
        same = (complete and record.get("dataset", {}).get("fingerprint") == fingerprint_of(dataset, config)
                and record.get("judge") == redact(spec) and record.get("sampling") == sampling
                and record.get("runner", {}) == input_settings(spec, self.runner(spec)))
        if same and kind == "hf":
            same = record.get("model") == local_model_identity(rest)
        elif same and kind not in BUILT_IN:  # a plugin's own word on what answers, as its rows recorded it
            same = record.get("model") == self._model_identity(spec)
        return bool(same)

    def _sampling(self) -> dict:
        s = self.options.sampling
        return {"temperature": s.get("temperature", 0.0), "top_p": s.get("top_p"), "seed": s.get("seed")}

    def limit_seed(self) -> int:
        """The seed of a smoke run's sample, as ``run_judge`` draws it: the sampling seed (None: 0)."""
        seed = self._sampling()["seed"]
        return 0 if seed is None else seed

    def sample(self, dataset, config: str) -> list[int] | None:
        """A smoke run's sample of ``config`` (``limit``): the positions, in the config's item order, that
        ``run_judge(limit=...)`` answers (:func:`~omniaudit.runners.shards.limit_positions`, on the items'
        ids, orders and conditions only: no media read); None without a limit or when the limit holds every item."""
        from omniaudit.runners.shards import limit_positions

        if self.options.limit is None:
            return None
        key = (str(dataset), config)
        if key not in self._samples:
            items = light_items(dataset, config)
            self._samples[key] = (None if self.options.limit >= len(items)
                                  else limit_positions(items, self.options.limit, self.limit_seed()))
        return self._samples[key]

    def predictions(self, name: str, spec: str, audit: str, dataset) -> dict[str, Path]:
        """config -> predictions file of one model (run or reused); UnusableRun / InputError propagate. A kept file
        is reused unless ``reuse`` is off, and a served model's only while its canary holds (:meth:`_canary`); a
        served model asked afresh for either reason is asked past its response cache (which its new replies
        refresh)."""
        from omniaudit.runners.run import run_judge

        files = {}
        for config in self.needs(audit):
            path = self.out / "models" / name / f"{config}.jsonl"
            runs = get(audit).runs.get(config, 1)
            if self.options.from_shards:  # merged every time (cheap): a re-done shard is never missed
                self._merge(name, audit, config, path)
                if not self._reusable(path, dataset, config, spec, runs):
                    raise MissingShard(f"the merged shards of {name}'s {config} answers are not answers of this run "
                                       "(another dataset build, judge, sampling, runner setting or model): run the "
                                       "shards with the same models, options and --data", file=path)
                self._check_usable(path, spec)
                files[config] = path
                continue
            served = spec.startswith("openai:")
            keep = self.options.reuse and self._reusable(path, dataset, config, spec, runs)
            changed = keep and served and not self._canary(name, spec, config, path, dataset)
            if not keep or changed:
                self.say(f"{name}: {audit}: {config}")
                refresh = {"refresh_cache": True} if served and (changed or not self.options.reuse) else {}
                progress = lambda m, c=config: self.say(f"{name}: {audit}: {c} {m}")  # noqa: E731
                options = {"runs": runs, **self._sampling(), **self.runner(spec), **refresh,
                           **({"limit": self.options.limit} if self.options.limit is not None else {})}
                if self.dispatch is not None:  # every rank judges its shard; the main process merges them
                    from omniaudit.runners.data_parallel import judge_data_parallel

                    order = {"dataset": dataset, "config": config, "spec": spec, "out": path,
                             "min_usable": self.options.min_usable, "options": options}
                    self.dispatch(order)
                    judge_data_parallel(dataset, config, spec, path, progress=progress,
                                        min_usable=self.options.min_usable, **options)
                else:  # a shard keeps every answer: --min-usable holds for the whole run, checked once merged
                    run_judge(dataset, config, spec, path, progress=progress, min_usable=0 if self.options.shard
                              else self.options.min_usable, shard=self.options.shard, **options)
            files[config] = path
        return files

    def _canary(self, name: str, spec: str, config: str, path: Path, dataset) -> bool:
        """Do a served model's kept answers still stand? :data:`CANARY` of them (a sample drawn with a fixed seed) are
        asked again through the same runner at the file's own sampling, past the response cache, and compared (the
        option named, else the text). False when any differs, when the server says another model or deployment answers
        now (the rows' ``served_model`` / ``system_fingerprint`` differ from the kept ones), or when answers sampled
        without a seed cannot be compared: the user is told (naming the changed items) and the status records it
        (``canary``). A server that does not answer cannot be checked: its kept answers are reused, with a warning."""
        import random

        from omniaudit.errors import ServiceError
        from omniaudit.runners.rows import served_difference
        from omniaudit.runners.run import answer_again

        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        picks = sorted(random.Random(CANARY_SEED).sample(range(len(rows)), min(CANARY, len(rows))))
        sampling = self._sampling()
        if sampling["temperature"] > 0 and sampling["seed"] is None:
            return self._canary_says(name, config, len(picks), None, f"{name}: its {config} answers were sampled "
                                     "without a seed and cannot be checked against the server: asked afresh")
        # a row's position in the config's item order: a shard's rows say it; a smoke run's rows are its sample's
        order = self.sample(dataset, config) or list(range(rows[0]["provenance"]["selection"]["items"]))
        asked = [(rows[k]["run"], (rows[k].get("shard") or {}).get("position", order[k % len(order)]))
                 for k in picks]
        try:
            again = answer_again(dataset, config, spec, asked, **sampling,
                                 **{**self.runner(spec), "refresh_cache": True})
        except ServiceError as exc:
            self._canary_says(name, config, len(picks), None, f"{name}: the server did not answer, so its kept "
                              f"{config} answers could not be checked and are reused ({exc})")
            return True
        moved = served_difference(rows, again)  # another model or deployment: none of the kept answers stand
        if moved:
            changed = list(dict.fromkeys(str(rows[k]["id"]) for k in picks))
            return self._canary_says(name, config, len(picks), changed, f"{name}: the server's model changed since "
                                     f"its {config} answers were kept ({moved}): not reused, every item is asked "
                                     "afresh")
        changed = list(dict.fromkeys(str(rows[k]["id"]) for k, row in zip(picks, again, strict=True)
                                     if (row["id"], said(row)) != (rows[k]["id"], said(rows[k]))))
        return self._canary_says(name, config, len(picks), changed, f"{name}: the server's answers to {config} "
                                 f"changed since they were kept (asked again, items {', '.join(changed)} are "
                                 "answered otherwise): not reused, every item is asked afresh" if changed else None)

    def _canary_says(self, name: str, config: str, asked: int, changed: list[str] | None, note: str | None) -> bool:
        """Record a canary's outcome (``changed``: None when it could not compare); tell the user ``note``. True:
        the kept answers stand."""
        self.canaries.setdefault(name, {})[config] = {"asked": asked, "changed": changed, "note": note}
        if note:
            self.say(note)
        return changed == []

    def _merge(self, name: str, audit: str, config: str, path: Path) -> None:
        """Join the shard runs' answers of one model and config into ``path`` (``merge_predictions``: every shard
        once, all from one run); a shard run that found the model not answering makes it not answering here."""
        from omniaudit.runners.shards import merge_predictions

        missing: list[tuple[Path, str | None]]  # (shard run, why)
        refused: list[tuple[Path, str | None]]
        files, missing, refused = [], [], []
        for folder in map(Path, self.options.from_shards):
            file = folder / "models" / name / f"{config}.jsonl"
            if file.is_file():
                files.append(file)
                continue
            try:
                entry = json.loads((file.parent / STATUS).read_text(encoding="utf-8")).get(audit) or {}
            except (OSError, ValueError):
                entry = {}
            (refused if entry.get("status") == "not answering" else missing).append((folder, entry.get("reason")))
        if missing:
            raise MissingShard(f"no answers of {name} to {config} in the shard run(s) "
                               f"{', '.join(str(f) for f, _ in missing)}: did they finish (scorecard --shard I/N "
                               "with the same models)?")
        if refused:  # the runner refused the items in a shard (every shard would): not answering
            raise RefusedItems(f"{refused[0][1]} (shard run {refused[0][0]})")
        self.say(f"{name}: merging {len(files)} shards of {config}")
        try:
            merge_predictions(path, files)
        except InputError as exc:  # a shard missing or given twice, shards of different runs: not the model's doing
            raise MissingShard(str(exc)) from exc

    def _check_usable(self, path: Path, spec: str) -> None:
        """--min-usable on a merged run (shards keep every answer), as ``run_judge`` checks an unsharded one."""
        from omniaudit.runners.rows import check_usable

        if not spec.startswith("scripted:"):
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            try:
                check_usable(rows, spec, self.options.min_usable)
            except InputError:
                path.unlink()  # not this run's answers to keep: a rerun asks the shards again
                raise

    def _model_identity(self, spec: str) -> dict | None:
        """A local model's identity (a checkpoint rewritten in place is another model), else None."""
        from omniaudit.runners.identity import local_model_identity

        kind, _, rest = spec.partition(":")
        if kind not in BUILT_IN:
            from omniaudit.runners.factory import make_judge
            from omniaudit.runners.identity import runner_identity

            return runner_identity(make_judge(spec, **self.runner(spec)))
        return local_model_identity(rest) if kind == "hf" else None


def light_items(dataset, config: str) -> list:
    """The items of a config as far as grouping and sampling go (id, order, condition: a row's condition, else its
    task, as :func:`~omniaudit.runners.items.load_items` reads them), in the config's order, without
    reading a prompt or a medium."""
    from omniaudit.data_builders.hub import load_hub_dataset
    from omniaudit.runners.items import JudgeItem

    ds = load_hub_dataset(dataset, config)
    table = ds.select_columns([c for c in ("id", "order", "condition", "task") if c in ds.column_names]).to_dict()
    n = len(table["id"])
    column = lambda c: table.get(c) or [None] * n  # noqa: E731
    return [JudgeItem(id=str(i), prompt="", order=o or None, condition=c or t)
            for i, o, c, t in zip(table["id"], column("order"), column("condition"), column("task"), strict=True)]


def check_limit_fits(card: ModelAnswers, limit: int) -> None:
    """A smoke run's limit holds at least one whole item group of every item config (both orders of a pair are
    judged together): InputError naming the audit, the config and its smallest group, before any model call."""
    from omniaudit.runners.shards import item_groups

    for audit, dataset in card.datasets.items():
        for config in card.needs(audit):
            smallest = min(map(len, item_groups(light_items(dataset, config))))
            if smallest > limit:
                raise InputError(f"--limit {limit} holds no whole item group of {audit} {config} (the orders of one "
                                 f"trial are judged together: its groups have {smallest} or more items): raise "
                                 "--limit", value=limit)


def check_shard_count(card: ModelAnswers, shard: tuple[int, int]) -> None:
    """Every item config (a smoke run's sample of it) can be dealt into the N shards (whole trials, none empty), N
    shard runs or N launched processes: InputError before any model call, never a model's "not answering"."""
    from omniaudit.runners.shards import shard_positions

    for audit, dataset in card.datasets.items():
        for config in card.needs(audit):
            items = light_items(dataset, config)
            sample = card.sample(dataset, config)
            items = items if sample is None else [items[p] for p in sample]
            try:
                shard_positions(items, *shard)
            except InputError as exc:
                raise InputError(f"{audit} {config}: {exc}") from exc


def said(row: dict) -> str:
    """What a predictions row answered: the option it named, else its text."""
    return row["label"] if row.get("label") is not None else str(row.get("raw", "")).strip()
