"""Pairwise preference benchmarks (EmoPrefer layout): reading, folds, priors, slices, remedies, synthetic default."""

from omniaudit.data_builders.preference.build import PreferenceBuildOptions, build_preference_dataset, build_tables
from omniaudit.data_builders.preference.read import read_preference_table
from omniaudit.data_builders.preference.synthetic import SyntheticSpec, synthesize

__all__ = [
    "PreferenceBuildOptions",
    "SyntheticSpec",
    "build_preference_dataset",
    "build_tables",
    "read_preference_table",
    "synthesize",
]
