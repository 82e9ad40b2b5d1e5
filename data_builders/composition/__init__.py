"""Composition and counterfactual QA (C3PO): samples, bucketed selection, bypass-test ablations, synthetic default."""

from omniaudit.data_builders.composition.build import CompositionBuildOptions, build_composition_dataset
from omniaudit.data_builders.composition.samples import bucket, read_samples, select

__all__ = ["CompositionBuildOptions", "bucket", "build_composition_dataset", "read_samples", "select"]
