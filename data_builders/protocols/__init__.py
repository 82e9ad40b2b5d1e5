"""Judge-protocol probes (blueprint / reference placement / pairwise order / cue conflict) from labelled clips."""

from omniaudit.data_builders.protocols.build import ProtocolBuildOptions, build_protocols_dataset
from omniaudit.data_builders.protocols.corpora import CorpusOptions, corpus_rows, write_corpus_manifest
from omniaudit.data_builders.protocols.manifest import read_clip_manifest
from omniaudit.data_builders.protocols.speech import SpeechSetSpec, synthesize_speech_set

__all__ = [
    "CorpusOptions",
    "ProtocolBuildOptions",
    "SpeechSetSpec",
    "build_protocols_dataset",
    "corpus_rows",
    "read_clip_manifest",
    "synthesize_speech_set",
    "write_corpus_manifest",
]
