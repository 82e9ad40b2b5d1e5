"""The ODIN-style diagnostic reward model (EmoPrefer audit §3, eq. 1; appendix B).

A shared trunk (LoRA-adapted) pools the last token of one description; three linear heads give the content, length
and generator-prior rewards ``r_C, r_L, r_G``; their sum ``r`` enters the Bradley-Terry loss::

    L = L_BT + lambda * L_dec + lambda_o * L_orth
    L_BT   = -log sigmoid(r(d+) - r(d-))
    L_dec  = |rho(r_C, len)| + |rho(r_C, prior)| - rho(r_L, len) - rho(r_G, prior)
    L_orth = |<w_C, w_L>| + |<w_C, w_G>|

``rho`` is the Pearson correlation over the scores of *both* candidates of every pair in the *global* batch: under
data parallelism the scores, lengths and priors of all processes are gathered (differentiably) first, so the
correlations equal those of one process on the same global batch. At inference only ``r_C`` is used:
``p(d1 > d2) = sigmoid(r_C(d1) - r_C(d2))``.

With one head (``n_heads=1``) the model is the omni no-decorrelation control of Table 4 ("single-head BT on r_C": the
content head alone, trained with ``L_BT``; no confound heads, so no ``L_dec`` and no ``L_orth``). The trunk is a text
model or an omni thinker's multimodal model (video frames + audio + one description, ``forward(..., **media)``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from omniaudit.runners.odin_model import (  # noqa: F401 - the model lives in the core (the reward: runner uses it)
    HEADS,
    HEADS_FILE,
    N_HEADS,
    Heads,
    OdinRewardModel,
    is_omni,
    load_odin,
    load_trunk,
)


def pearson(x: torch.Tensor, y: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    x, y = x.float() - x.float().mean(), y.float() - y.float().mean()
    return (x * y).sum() / (x.norm() * y.norm() + eps)


def gather(x: torch.Tensor) -> torch.Tensor:
    """Concatenate ``x`` over all processes, keeping gradients (a no-op in a single process)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        from torch.distributed.nn.functional import all_gather

        return torch.cat(all_gather(x.contiguous()), dim=0)
    return x


def correlations(scores: torch.Tensor, lengths: torch.Tensor, priors: torch.Tensor) -> dict[str, torch.Tensor]:
    """The head-confound correlations over the global batch (scores: (n, 3), both candidates stacked): four with
    three heads, the content head's two with one."""
    scores, lengths, priors = gather(scores), gather(lengths), gather(priors)
    rho = {"rho_content_length": pearson(scores[:, 0], lengths), "rho_content_prior": pearson(scores[:, 0], priors)}
    if scores.shape[1] > 1:
        rho.update(rho_length_head_length=pearson(scores[:, 1], lengths),
                   rho_prior_head_prior=pearson(scores[:, 2], priors))
    return rho


def odin_loss(chosen: torch.Tensor, rejected: torch.Tensor, orth: torch.Tensor, lengths: torch.Tensor,
              priors: torch.Tensor, lambda_dec: float = 1.0, lambda_orth: float = 1.0) -> dict[str, torch.Tensor]:
    """Eq. 1. ``chosen``/``rejected``: (B, 3) head scores; ``lengths``/``priors``: (2B,) for [chosen; rejected].

    One head (B, 1): the single-head BT control, ``L = L_BT`` on ``r_C`` (``L_dec`` needs the confound heads, so
    ``lambda_dec`` must be 0; ``orth`` is 0)."""
    bt = -F.logsigmoid(chosen.sum(-1) - rejected.sum(-1)).mean()
    rho = correlations(torch.cat([chosen, rejected]), lengths, priors)
    if chosen.shape[-1] == 1:
        if lambda_dec:
            raise ValueError("a single head has no confound heads to decorrelate against: lambda_dec must be 0")
        dec = bt.new_zeros(())
    else:
        dec = (rho["rho_content_length"].abs() + rho["rho_content_prior"].abs() - rho["rho_length_head_length"]
               - rho["rho_prior_head_prior"])
    loss = bt + lambda_dec * dec + lambda_orth * orth
    return {"loss": loss, "bt": bt, "dec": dec, "orth": orth, **rho}
