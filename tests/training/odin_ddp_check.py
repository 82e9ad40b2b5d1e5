"""Run under `torchrun --nproc_per_node 2`: ODIN correlations and gradients on a split global batch equal those of
one process on the whole batch. Rank 0 writes the comparison to the JSON path given as argv[1]."""

import json
import sys

import torch
import torch.distributed as dist

from omniaudit.training.odin import Heads, odin_loss

torch.manual_seed(0)
hidden = 16
pooled = torch.randn(8, hidden)  # 4 pairs: [chosen x4; rejected x4], the same on every rank
lengths, priors = torch.rand(8) * 100, torch.rand(8)
heads, reference = Heads(hidden), Heads(hidden)
reference.load_state_dict(heads.state_dict())

# one process, whole batch (computed before the process group exists, so nothing is gathered)
scores, orth = reference(pooled)
single = odin_loss(scores[:4], scores[4:], orth, lengths, priors)
single["loss"].backward()

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
mine = torch.tensor([2 * rank, 2 * rank + 1])  # rank r holds pairs 2r and 2r + 1 (chosen and rejected rows)
rows = torch.cat([mine, mine + 4])
scores, orth = heads(pooled[rows])
local = odin_loss(scores[:2], scores[2:], orth, lengths[rows], priors[rows])
local["loss"].backward()
for p in heads.parameters():  # what DDP does with the gradients
    dist.all_reduce(p.grad)
    p.grad /= world
result = {"world": world,
          "rho_single": {k: float(v) for k, v in single.items() if k.startswith("rho")},
          "rho_parallel": {k: float(v) for k, v in local.items() if k.startswith("rho")},
          "max_grad_diff": max(float((a.grad - b.grad).abs().max())
                               for a, b in zip(heads.parameters(), reference.parameters(), strict=True))}
if rank == 0:
    with open(sys.argv[1], "w") as fh:
        json.dump(result, fh)
dist.destroy_process_group()
