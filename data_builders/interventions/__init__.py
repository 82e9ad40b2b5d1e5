"""Audio-visual interventions (Thud): Shift / Mute / Swap / noise / concatenation, and the datasets built from them."""

from omniaudit.data_builders.interventions.build import InterventionBuildOptions, build_interventions_dataset
from omniaudit.data_builders.interventions.manifest import read_manifest
from omniaudit.data_builders.interventions.synthetic import SyntheticClipSpec, synthesize_clips

__all__ = [
    "InterventionBuildOptions",
    "SyntheticClipSpec",
    "build_interventions_dataset",
    "read_manifest",
    "synthesize_clips",
]
