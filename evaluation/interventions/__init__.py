"""The Thud audio-grounding audit: answer extraction, paired accuracies, failure modes, alignment tax, report."""
