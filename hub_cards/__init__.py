"""Dataset and model cards (README.md with YAML front matter) rendered from Jinja2 templates."""

from omniaudit.hub_cards.render import dataset_card, render

__all__ = ["dataset_card", "render"]
