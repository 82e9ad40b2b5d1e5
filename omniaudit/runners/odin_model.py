"""The ODIN-style reward model's architecture (EmoPrefer audit §3, eq. 1; appendix B): a shared trunk pools the
last token of one description, and linear heads give the content, length and generator-prior rewards ``r_C, r_L,
r_G``. At inference only ``r_C`` is used: ``p(d1 > d2) = sigmoid(r_C(d1) - r_C(d2))``.

A layer of the core because two sides use it: ``training/reward_odin.py`` trains it (its losses are
``omniaudit.training.odin``) and the ``reward:`` runner (:mod:`omniaudit.runners.reward`) judges pairs with it. With
one head (``n_heads=1``) it is the single-head Bradley-Terry model (no confound heads): the no-decorrelation control.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

HEADS = ("content", "length", "prior")
N_HEADS = (1, len(HEADS))  # the single-head BT control, or ODIN's three heads


class Heads(nn.Module):
    """Three (or one: the content head alone) linear heads whose weights are this module's own parameters: ZeRO-3
    gathers a module's partitioned parameters only while that module runs, so the orthogonality term, which reads the
    weights, is computed here (zero for a single head)."""

    def __init__(self, hidden_size: int, n_heads: int = len(HEADS)) -> None:
        super().__init__()
        if n_heads not in N_HEADS:
            raise ValueError(f"n_heads must be one of {N_HEADS}, got {n_heads}")
        reference = nn.Linear(hidden_size, n_heads)  # nn.Linear's initialisation
        self.weight = nn.Parameter(reference.weight.detach().clone())
        self.bias = nn.Parameter(reference.bias.detach().clone())

    def forward(self, pooled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w = self.weight
        orth = w.new_zeros(()) if w.shape[0] == 1 else (w[0] @ w[1]).abs() + (w[0] @ w[2]).abs()
        return F.linear(pooled, w, self.bias), orth


HEADS_FILE = "odin_heads.safetensors"


class OdinRewardModel(nn.Module):
    trunk: Any  # a transformers model, or a PEFT model around one (their methods are not nn.Module's)

    def __init__(self, trunk: nn.Module, hidden_size: int, n_heads: int = len(HEADS)) -> None:
        super().__init__()
        self.trunk = trunk
        self.heads = Heads(hidden_size, n_heads)

    @property
    def n_heads(self) -> int:
        return self.heads.weight.shape[0]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                **media) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores (batch, n_heads) for content / length / prior, orthogonality term). Right-padded inputs;
        ``media``: the processor's tensors for an omni trunk (``pixel_values_videos``, ``input_features``, ...)."""
        hidden = self.trunk(input_ids=input_ids, attention_mask=attention_mask, **media).last_hidden_state
        last = attention_mask.sum(dim=1) - 1
        pooled = hidden[torch.arange(hidden.size(0), device=hidden.device), last]
        scores, orth = self.heads(pooled.to(self.heads.weight.dtype))
        return scores, orth

    def _base_trunk(self) -> Any:
        """The transformers model under a PEFT wrapper (or the trunk itself)."""
        return self.trunk.get_base_model() if hasattr(self.trunk, "get_base_model") else self.trunk

    def activation_checkpointing_enable(self, activation_checkpointing_kwargs=None, every_n_layers: int = 1,
                                        offload: bool = False) -> None:
        """``--gradient_checkpointing``: recompute the trunk's layer activations in the backward pass (the Trainer
        calls this). Non-reentrant by default, so a frozen (LoRA) trunk still passes gradients through."""
        self._base_trunk().activation_checkpointing_enable(
            activation_checkpointing_kwargs=activation_checkpointing_kwargs or {"use_reentrant": False},
            every_n_layers=every_n_layers, offload=offload)

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None, **kwargs) -> None:
        self.activation_checkpointing_enable(gradient_checkpointing_kwargs, **kwargs)

    @property
    def is_activation_checkpointing(self) -> bool:
        return bool(getattr(self._base_trunk(), "is_activation_checkpointing", False))

    def save(self, out_dir: str | Path, state_dict: dict[str, torch.Tensor] | None = None) -> list[str]:
        """Save what a LoRA run trained: the trunk's adapter (``adapter_model.safetensors`` + ``adapter_config.json``,
        which names the base model) and the three heads (``odin_heads.safetensors``), never the frozen trunk.
        ``state_dict``: this model's full or trainable-only state dict (what ZeRO-3 gathers); default: its own."""
        from safetensors.torch import save_file

        state_dict = self.state_dict() if state_dict is None else state_dict
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        trunk = {k.removeprefix("trunk."): v for k, v in state_dict.items() if k.startswith("trunk.")}
        self.trunk.save_pretrained(out_dir, state_dict=trunk)
        heads = {k.removeprefix("heads."): v.detach().contiguous().cpu() for k, v in state_dict.items()
                 if k.startswith("heads.")}
        save_file(heads, out_dir / HEADS_FILE, metadata={"heads": ",".join(HEADS[: self.n_heads])})
        return sorted(p.name for p in out_dir.iterdir())

    def load_trained(self, folder: str | Path) -> None:
        """Load a folder written by :meth:`save` into this model (adapter weights and heads): resuming a run."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        folder = Path(folder)
        result = set_peft_model_state_dict(self.trunk, load_file(folder / "adapter_model.safetensors"))
        unexpected = getattr(result, "unexpected_keys", None)
        if unexpected:
            raise ValueError(f"{folder}: adapter weights that this model does not have: {unexpected[:5]}")
        self.heads.load_state_dict(load_file(folder / HEADS_FILE))


def load_odin(folder: str | Path, base_model: str | None = None, **kwargs) -> OdinRewardModel:
    """An ODIN reward model saved by ``training/reward_odin.py``: a LoRA run's folder (adapter + heads; the base
    model is the one ``adapter_config.json`` names unless ``base_model`` is given) or a full fine-tuning run's
    (``model.safetensors`` with trunk and heads; ``base_model`` gives the trunk's architecture). ``kwargs`` go to
    ``from_pretrained`` (e.g. ``dtype``)."""
    from safetensors.torch import load_file

    folder = Path(folder)
    if (folder / "adapter_config.json").is_file():
        from peft import PeftConfig, PeftModel

        base = base_model or PeftConfig.from_pretrained(str(folder)).base_model_name_or_path
        trunk = PeftModel.from_pretrained(load_trunk(base, **kwargs), folder)
        heads = load_file(folder / HEADS_FILE)
        model = OdinRewardModel(trunk, heads["weight"].shape[1], heads["weight"].shape[0])
        model.heads.load_state_dict(heads)
    elif (folder / "model.safetensors").is_file():
        if base_model is None:
            raise ValueError(f"{folder}: a full fine-tuning run; pass base_model (the model it started from)")
        state = load_file(folder / "model.safetensors")
        weight = state["heads.weight"]
        model = OdinRewardModel(load_trunk(base_model, from_config=True, **kwargs), weight.shape[1], weight.shape[0])
        model.load_state_dict(state)
    else:
        raise FileNotFoundError(f"{folder}: no ODIN model (adapter_config.json + {HEADS_FILE}, or model.safetensors)")
    return model.eval()


def is_omni(config) -> bool:
    """An omni model (a full Qwen-Omni checkpoint with a thinker, or a thinker itself: audio and vision towers)."""
    return hasattr(config, "thinker_config") or (hasattr(config, "audio_config") and hasattr(config, "vision_config"))


def load_trunk(path: str | Path, from_config: bool = False, **kwargs) -> nn.Module:
    """The reward trunk of a model: a text model's base model, or an omni thinker's multimodal model (audio tower,
    vision tower and language model; a full Qwen-Omni checkpoint's thinker, its talker dropped). ``from_config``:
    the architecture only (weights loaded afterwards)."""
    from transformers import AutoConfig, AutoModel, AutoModelForMultimodalLM

    config = AutoConfig.from_pretrained(path)
    if not is_omni(config):
        return AutoModel.from_config(config, **kwargs) if from_config else AutoModel.from_pretrained(path, **kwargs)
    if from_config:
        model = AutoModelForMultimodalLM.from_config(config, **kwargs)
    else:
        model = AutoModelForMultimodalLM.from_pretrained(path, **kwargs)
    thinker = getattr(model, "thinker", model)
    return getattr(thinker, "model", thinker)
