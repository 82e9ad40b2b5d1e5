"""Which diagnostic rows an intervention audit scores per dimension: paired (a source's Original against its own
intervened clips) or, for independent clips such as an OOD sync set, every row with sources decided one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from omniaudit.data_builders.interventions.answers import OOD_SYNC_CATEGORY


def _ood(diag: pd.DataFrame) -> np.ndarray:
    """Rows of an OOD sync set (``category`` marks them; a frame without the column has none)."""
    if "category" not in diag.columns:
        return np.zeros(len(diag), bool)
    return (diag["category"] == OOD_SYNC_CATEGORY).to_numpy()


def scored_rows(diag: pd.DataFrame, intervention_of: dict[str, str],
                n_runs: int) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
    """Per dimension, the rows its Original / intervention accuracies are over, and how many rows (per run) each
    path used. Paired (a `build interventions` set: every source has its Original): only sources with both
    conditions, so the gap compares the same clips (an Original whose Shifts were all skipped is left out).
    Otherwise (an OOD sync set, or any source with an intervened clip but no Original): every row, decided per source:
    a source with both conditions is paired, the others enter unpaired."""
    dim, iv, source = diag["dimension"].to_numpy(), diag["intervention"].to_numpy(), diag["source_id"]
    ood = _ood(diag)
    masks, used = {}, {}
    for d, intervention in intervention_of.items():
        rows = (dim == d) & ((iv == "original") | (iv == intervention))
        with_orig = source.isin(diag.loc[rows & (iv == "original"), "source_id"].unique()).to_numpy()
        with_interv = source.isin(diag.loc[rows & (iv == intervention), "source_id"].unique()).to_numpy()
        both = with_orig & with_interv
        per_source = (rows & ood).any() or (rows & ~with_orig).any()
        masks[d] = rows if per_source else rows & with_interv
        used[d] = {"paired": int((masks[d] & both).sum()) // n_runs,
                   "unpaired": int((masks[d] & ~both).sum()) // n_runs,
                   "left_out": int((rows & ~masks[d]).sum()) // n_runs}
    return masks, used


def ood_sync_rule(diag: pd.DataFrame) -> dict:
    """An OOD sync set's rule as its gold answers apply it: the largest |offset| among its in-sync clips (0: only a
    zero offset is synchronized; more: the set was built with an explicit --sync-tolerance)."""
    ood = _ood(diag)
    if not ood.any():
        return {}
    in_sync = diag.loc[ood & (diag["intervention"] == "original").to_numpy(), "offset_s"]
    return {"ood_sync": {"in_sync_max_abs_offset_s": float(in_sync.abs().max()) if len(in_sync) else None}}
