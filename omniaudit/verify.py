"""Recheck a folder you received (``omniaudit verify DIR``): is it what it claims to be, and what cannot be told?

A folder that reaches you (a built dataset, a judge's predictions file, an audit output, a scorecard ``OUT``, or a
folder holding several of them) carries its own records: the ``.omniaudit.json`` marker of every folder omniaudit wrote
(:mod:`omniaudit.io`), the data fingerprint sealed into a dataset card (:mod:`omniaudit.data_builders.fingerprint`),
the SHA-256 of every clip a path-mode dataset keeps beside its rows (:mod:`omniaudit.data_builders.media_store`), the
provenance of every predictions row (:mod:`omniaudit.predictions`), the inputs and provenance an ``audit.json`` records
(:mod:`omniaudit.evaluation.audit_outputs`), and the digests of the predictions files a scorecard read
(``models/NAME/status.json``). :func:`verify` walks the folder, rechecks each record against the files with the
project's own functions, and returns one :class:`Finding` per check, each **verified**, **failed** or **cannot vouch**
(with why):

- markers: every file a marker lists is there (no symbolic link in their place), the marker itself is whole, and
  files beside them that it does not list are named (not ours);
- datasets: each config's fingerprint, recomputed (:func:`~omniaudit.data_builders.fingerprint.config_fingerprint`),
  equals the one sealed in the card (else its files changed after the build); a path-mode config's clips match the
  digests its rows record (:func:`~omniaudit.data_builders.media_store.verify_media`);
- predictions (``*.jsonl`` of ``omniaudit judge``): :func:`~omniaudit.predictions.check_predictions`
  (one run per file, no row contradicting its provenance, every item of every run) and, when the dataset the
  provenance names is in the folder or given (``datasets``), that the answers were made on this build of it; the
  rows' ``doc_hash`` / ``prompt_hash`` (in every row or none, one per item) and, with that build at hand, each row's
  ``doc_hash`` recomputed from the dataset's item (:func:`~omniaudit.row_hashes.check_row_hashes`);
- audit outputs (``audit.json``): every predictions file and dataset build its provenance names matches the files
  found here; the omniaudit version that wrote it against this one;
- scorecards (``scorecard.json``): each predictions file's SHA-256 recorded in ``models/NAME/status.json``; every
  verdict decided again from the numbers the card keeps, ``measures.json`` against the card, and ``scorecard.md`` /
  ``scorecard.html`` rendered again from ``scorecard.json`` (:mod:`omniaudit.verify_card`): a card whose verdicts
  were edited fails.

The checks live beside this module, one module per kind of record: :mod:`~omniaudit.verify_files` (markers),
:mod:`~omniaudit.verify_data` (datasets, predictions), :mod:`~omniaudit.verify_audit` (audit outputs) and
:mod:`~omniaudit.verify_card` (scorecards), over what :mod:`~omniaudit.verify_survey` found; a finding is a
:class:`~omniaudit.verify_findings.Finding`.

What it cannot vouch for, and says so: a dataset or predictions file that is not at hand; rows without
``doc_hash`` / ``prompt_hash`` (written before omniaudit recorded them) and every row's ``prompt_hash`` (recomputing
it needs the judge's runner: it is checked only for agreement among an item's rows); a predictions file's answers
edited in a way that agrees with their provenance (rows carry no digest of their answers; a scorecard's status.json
digests are the exception); the numbers of an audit (not recomputed: rerun it); the contents of files the marker
only names (reports, figures, ``build_info.json``); and who wrote any of it: fingerprints and digests are unkeyed
hashes kept beside the data, so files edited and re-sealed by hand would pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from omniaudit.errors import InputError
from omniaudit.outputs import MARKER
from omniaudit.verify_audit import check_audit
from omniaudit.verify_card import check_scorecard
from omniaudit.verify_data import check_dataset, check_predictions_file
from omniaudit.verify_files import check_marker, check_not_ours, check_unchecked, check_unmarked
from omniaudit.verify_findings import CANNOT, FAILED, HEADINGS, VERIFIED, Finding, Verification
from omniaudit.verify_survey import survey

__all__ = ["CANNOT", "FAILED", "HEADINGS", "VERIFIED", "Finding", "Verification", "verify"]

AUTHORSHIP = ("who wrote it: fingerprints and digests are unkeyed SHA-256 hashes kept beside the data; they show "
              "the files agree with their records, not that omniaudit wrote them (files edited and re-sealed by hand "
              "pass)")


# ------------------------------------------------------------------------------------------------------- verify
def verify(folder: str | Path, datasets: Iterable[str | Path] = ()) -> Verification:
    """Recheck ``folder`` (or one predictions file): every record it carries against its files (see the module
    docstring). ``datasets``: dataset folders (or cached Hub repo ids) the predictions may have been made on, beside
    those found in the folder. InputError when the folder or a dataset given is missing."""
    root = Path(folder)
    if not root.exists():
        raise InputError("not found: expected a folder (or a predictions file) to verify", file=folder)
    ctx, findings = survey(root, datasets)
    for dataset in ctx.datasets:
        findings += check_dataset(ctx, dataset)
    for card in ctx.scorecards:  # first: the predictions checks need to know which files a digest vouches for
        findings += check_scorecard(ctx, card)
    for path in ctx.predictions:
        findings += check_predictions_file(ctx, path)
    for path in ctx.audits:
        findings += check_audit(ctx, path)
    for marked in ctx.markers:
        findings += check_marker(ctx, marked) + check_not_ours(ctx, marked)
    for marked in ctx.bad_markers:
        findings.append(Finding(FAILED, "marker", ctx.shown(marked, folder=True), f"marker: its {MARKER} is not a "
                                "readable omniaudit marker (not JSON, or not written by omniaudit)"))
    for marked in ctx.markers:
        findings += check_unchecked(ctx, marked)
    findings += check_unmarked(ctx)
    findings += [Finding(CANNOT, "files", top, "an omniaudit temporary or lock, left by a run that was killed (or is "
                                               "still running): part of no output") for top in ctx.leftovers]
    if any(f.status == VERIFIED for f in findings):
        findings.append(Finding(CANNOT, "authorship", ".", AUTHORSHIP))
    order = {"marker": 0, "dataset": 1, "media": 1, "scorecard": 2, "predictions": 3, "audit": 4, "files": 5}
    findings.sort(key=lambda f: (f.path.rstrip("/").split("/"), order.get(f.check, 9)))
    return Verification(root, findings)
