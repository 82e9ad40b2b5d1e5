"""Render cards: YAML front matter (Hub metadata + the ``configs`` that ``load_dataset`` reads) + a Markdown body."""

from __future__ import annotations

from pathlib import Path

import jinja2
import yaml

TEMPLATES = Path(__file__).parent / "templates"
_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters["pct"] = lambda x, digits=1: "n/a" if x is None or x != x else f"{100 * x:.{digits}f}%"
_ENV.filters["fmt"] = lambda x, digits=1: "n/a" if x is None or x != x else f"{x:.{digits}f}"


def render(template: str, **context: object) -> str:
    """Render ``hub_cards/templates/<template>`` with strict undefined variables (a typo fails loudly)."""
    return _ENV.get_template(template).render(**context)


def dataset_card(template: str, metadata: dict, **context: object) -> str:
    """README.md text: ``---`` YAML metadata ``---`` followed by the rendered body.

    A card is published with the dataset: every absolute local path in it (an input file, a corpus folder, a local
    model) is cut to its last component (:func:`omniaudit.io.redact_paths`). It ends with a "Train on it" section
    naming the training recipes that train on its configs (:mod:`omniaudit.hub_cards.training`), where there are any.
    """
    from omniaudit.hub_cards.training import training_section
    from omniaudit.io import redact_paths

    front = yaml.safe_dump(redact_paths(metadata), sort_keys=False, allow_unicode=True, width=119)
    configs = [c.get("config_name") for c in metadata.get("configs") or () if isinstance(c, dict)]
    body = render(template, **context).rstrip("\n") + "\n" + training_section(template, configs)
    return f"---\n{front}---\n\n{redact_paths(body)}"
