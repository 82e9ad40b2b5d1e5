"""``omniaudit audits``: the registry of audits (omniaudit/audits.py), as people or scripts read it."""

from __future__ import annotations

import argparse
import json

from omniaudit.cli import common


def cmd_audits(args: argparse.Namespace) -> None:
    """list the audits: item configs, headline metrics, shortcuts

    List the registered audits: for each, its name and title, the paper it implements (shared/papers/PAPER.txt), the
    dataset configs a model answers with the modalities of their items, the headline metrics of its audit.json, the
    shortcuts it measures and how each scripted reference model behaves on it.
    """
    from omniaudit.audits import AUDITS

    if args.json:
        print(json.dumps([a.to_dict() for a in AUDITS.values()], indent=2))
        return
    for i, a in enumerate(AUDITS.values()):
        if i:
            print()
        configs = ", ".join(f"{c} ({' '.join(m)})" for c, m in a.item_configs.items())
        print(f"{a.name}: {a.title}")
        for field, value in (("paper", a.paper), ("configs", configs), ("headline", ", ".join(a.headline)),
                             ("shortcuts", ", ".join(a.shortcuts)),
                             ("references", "; ".join(f"scripted:{k}: {v}" for k, v in a.references.items())),
                             ("commands", f"omniaudit build {a.name}; omniaudit audit {a.name}")):
            print(f"  {field + ':':<11} {value}")


def register(groups: common.Groups) -> None:
    p = common.command(groups.top, "audits", cmd_audits)
    p.add_argument("--json", action="store_true", help="print the registry as JSON")
