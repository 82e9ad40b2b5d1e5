"""MkDocs hooks (mkdocs.yml `hooks:`): after every build, the site's images/card.png is drawn again from the demo card
the code writes now (scripts/card_picture.py), so the picture of a card on the docs pages is never a stale screenshot.

Set OMNIAUDIT_DOCS_CARD=skip to keep the committed docs/images/card.png instead (a quick `mkdocs serve`); within one
`mkdocs serve` the demo card is run once and its picture reused on every rebuild.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.card_picture")
_DRAWN: dict[str, bytes] = {}  # this process's picture, drawn once


def _card_picture():
    spec = importlib.util.spec_from_file_location("card_picture", Path(__file__).with_name("card_picture.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_post_build(config, **_) -> None:
    if os.environ.get("OMNIAUDIT_DOCS_CARD", "").lower() == "skip":
        log.info("card picture: OMNIAUDIT_DOCS_CARD=skip, the committed docs/images/card.png is kept")
        return
    target = Path(config["site_dir"]) / "images" / "card.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    if "png" in _DRAWN:
        target.write_bytes(_DRAWN["png"])
        return
    module = _card_picture()
    module.render(target)
    _DRAWN["png"] = target.read_bytes()
    log.info("card picture: drawn from the demo card in %s", module.WORK)
