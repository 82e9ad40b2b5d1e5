"""One command for a whole judge-protocol study: every config of a probes dataset, several judges, then the audit.

``OUT/predictions/NAME.CONFIG.jsonl`` is what ``omniaudit judge`` writes for each judge and config (the predictions
contract, so a file can be rerun or replaced one at a time), and ``OUT/audit/`` the ``audit protocols`` output over
all of them. Sampling settings (``runs``, ``temperature``, ``top_p``, ``seed``) apply to every judge: several runs at
T > 0 give the §V-B stability table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.evaluation.protocols.audit import CONFIGS, ProtocolAuditConfig, load_items_meta, run_protocols_audit
from omniaudit.runners.run import run_judge


def parse_judges(specs: list[str]) -> list[tuple[str, str]]:
    """``NAME=SPEC`` or ``SPEC`` (name: the part after the kind, path separators replaced) -> [(name, spec)]."""
    out = []
    for text in specs:
        name, sep, spec = text.partition("=")
        if not sep or ":" in name:
            spec = text
            name = spec.partition(":")[2].rstrip("/").replace("/", "_").replace("@", "_").replace(":", "_")
        if not name or not spec:
            raise InputError("a judge must look like NAME=SPEC or SPEC (hf:..., openai:MODEL@URL, scripted:NAME)",
                             value=text)
        out.append((name, spec))
    names = [n for n, _ in out]
    if len(names) != len(set(names)):
        raise InputError("two judges have the same name; name them NAME=SPEC", value=names)
    return out


def run_protocols(out_dir: str | Path, dataset: str | Path, judges: list[str], configs: list[str] | None = None,
                  conditions: list[str] | None = None, formats: list[str] | None = None, *,
                  audit: bool = True, audit_config: ProtocolAuditConfig | None = None, extractor: str | None = None,
                  progress: Callable[[str], None] | None = None, **judge_options) -> dict:
    """Judge every config (or ``configs``) with every judge, then audit them all. ``judge_options`` go to
    :func:`~omniaudit.runners.run.run_judge` (runs, temperature, top_p, seed, batch_size, ...).

    Returns {"predictions": {name: [files]}, "audit": folder or None}.
    """
    from omniaudit.io import atomic_dir, check_out_dir

    say = progress or (lambda _m: None)
    configs = list(configs or CONFIGS)
    unknown = sorted(set(configs) - set(CONFIGS))
    if unknown:
        raise InputError(f"unknown config(s); expected some of {', '.join(CONFIGS)}", value=unknown)
    pairs = parse_judges(judges)
    out = check_out_dir(out_dir)
    if conditions or formats:  # configs with no item left are skipped
        meta = load_items_meta(dataset)
        selector = meta["condition"].where(meta["condition"].notna(), meta["task"])
        keep = (selector.isin(conditions) if conditions else True) & (
            meta["format"].isna() | meta["format"].isin(formats) if formats else True)
        configs = [c for c in configs if (keep & (meta["config"] == c)).any()]
        if not configs:
            raise InputError(f"no items with condition or task in {conditions} and format in {formats}",
                             file=dataset)
    files: dict[str, list[Path]] = {}
    folder = None
    with atomic_dir(out) as tmp:  # written whole or not at all (an openai judge's answers are cached for a rerun)
        for name, spec in pairs:
            for config in configs:
                path = tmp / "predictions" / f"{name}.{config}.jsonl"
                say(f"{name}: {config}")
                try:
                    run_judge(dataset, config, spec, path, conditions,
                              lambda m, n=name, c=config: say(f"{n}: {c}: {m}"),
                              formats if config == "pairwise" else None, **judge_options)
                except InputError as exc:
                    exc.message = f"judge '{name}' ({spec}) on config {config}: {exc.message}"
                    raise
                files.setdefault(name, []).append(path)
        if audit:
            say("auditing")
            run_protocols_audit(tmp / "audit", dataset, [f"{n}={p}" for n, ps in files.items() for p in ps],
                                audit_config or ProtocolAuditConfig(), progress, extractor)
            folder = out / "audit"
    return {"predictions": {n: [out / "predictions" / p.name for p in ps] for n, ps in files.items()},
            "audit": folder}
