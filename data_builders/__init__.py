"""Builders that turn benchmarks and media corpora into audit datasets in the Hugging Face Hub layout."""
