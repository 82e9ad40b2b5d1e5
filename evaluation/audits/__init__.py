"""Audits: from a dataset (+ prediction files) to metrics with uncertainty per slice, as one JSON-able dict."""
