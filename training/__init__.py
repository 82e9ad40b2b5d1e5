"""Training scripts (SFT, DPO, ODIN reward model, pairwise judges) run with ``accelerate launch training/<x>.py``."""
