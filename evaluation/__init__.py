"""Audit metrics with honest uncertainty, judge prediction files, audits and reports."""
