"""How an ``hf:`` model is loaded: device placement, weight dtype, k-bit quantisation and attention kernel.

Four :func:`~omniaudit.runners.factory.make_judge` options (``omniaudit judge`` / ``scorecard`` flags
``--device-map``, ``--torch-dtype``, ``--load-in``, ``--attn-implementation``), given to ``from_pretrained``:

- ``device_map``: ``auto`` / ``balanced`` / ``sequential`` (accelerate spreads the layers over every visible GPU, then
  the CPU), ``cpu`` or ``cuda:N``; default None: the whole model on one device (a GPU when there is one), as before.
- ``dtype``: ``auto`` (the checkpoint's own, the default), ``bfloat16``, ``float16`` or ``float32``. Transformers 5
  calls this ``from_pretrained`` argument ``dtype`` (``torch_dtype`` is its deprecated spelling).
- ``load_in``: ``4bit`` (NF4, computing in ``dtype``, or bfloat16 under ``auto``) or ``8bit`` (LLM.int8), through
  transformers' ``BitsAndBytesConfig``. bitsandbytes quantises on CUDA: without a CUDA device it is refused before
  anything loads.
- ``attn_implementation``: ``eager``, ``sdpa`` or ``flash_attention_2`` (needs the flash-attn package and a GPU);
  default None: the model's own choice.

Each is checked before any model loads (:func:`check_loading`: its value, then what it needs of this machine), and
recorded in the predictions' provenance (the runner settings) only when not at its default
(:func:`loading_settings`), so the provenance of runs made without them stays the same.
"""

from __future__ import annotations

import importlib.util
import re

from omniaudit.errors import InputError

DEVICE_MAPS = ("auto", "balanced", "sequential", "cpu")  # and cuda:N
DTYPES = ("auto", "bfloat16", "float16", "float32")
LOAD_IN = ("4bit", "8bit")
ATTN_IMPLEMENTATIONS = ("eager", "sdpa", "flash_attention_2")
# make_judge option -> its default (the behaviour before these options existed): recorded only when not this
DEFAULTS = {"device_map": None, "dtype": "auto", "load_in": None, "attn_implementation": None}
_CUDA = re.compile(r"cuda:(\d+)")


def is_device_map(value) -> bool:
    """``value`` is one of :data:`DEVICE_MAPS` or ``cuda:N``."""
    return isinstance(value, str) and (value in DEVICE_MAPS or _CUDA.fullmatch(value) is not None)


def check_values(options: dict) -> None:
    """The loading options given in ``options`` are among their values (InputError naming the option)."""
    value = options.get("device_map")
    if value is not None and not is_device_map(value):
        raise InputError(f"device_map must be one of {', '.join(DEVICE_MAPS)} or cuda:N", value=value)
    for name, allowed in (("dtype", DTYPES), ("load_in", LOAD_IN), ("attn_implementation", ATTN_IMPLEMENTATIONS)):
        value = options.get(name)
        if value not in (None, DEFAULTS[name]) and value not in allowed:
            raise InputError(f"{name} must be one of {', '.join(allowed)}", value=value)


def check_environment(options: dict) -> None:
    """What the loading options in ``options`` need of this machine is here: a CUDA device for ``load_in``,
    ``cuda:N`` and ``flash_attention_2``, and their packages. InputError in one line, or ModuleNotFoundError naming the
    missing package (which the CLI turns into the extra to install), before any model loads."""
    load_in, device_map = options.get("load_in"), options.get("device_map")
    attn = options.get("attn_implementation")
    cuda = _CUDA.fullmatch(device_map) if isinstance(device_map, str) else None
    if device_map is not None and importlib.util.find_spec("accelerate") is None:  # from_pretrained's device_map
        raise ModuleNotFoundError("No module named 'accelerate'", name="accelerate")
    if load_in is None and cuda is None and attn != "flash_attention_2":
        return
    import torch

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if load_in is not None:
        if not visible:
            raise InputError(f"load_in {load_in} (bitsandbytes) needs a CUDA GPU and none is visible here: drop "
                             "--load-in, or run on a machine with a GPU")
        if importlib.util.find_spec("bitsandbytes") is None:
            raise ModuleNotFoundError("No module named 'bitsandbytes'", name="bitsandbytes")
    if cuda is not None and int(cuda.group(1)) >= visible:
        raise InputError(f"device_map {device_map}: " + (f"only {visible} CUDA device(s) visible here (cuda:0.."
                                                         f"cuda:{visible - 1})" if visible else
                                                         "no CUDA device is visible here (use cpu)"))
    if attn == "flash_attention_2":
        if not visible:
            raise InputError("attn_implementation flash_attention_2 needs a CUDA GPU and none is visible here: use "
                             "sdpa or eager")
        if importlib.util.find_spec("flash_attn") is None:
            raise InputError("attn_implementation flash_attention_2 needs the flash-attn package, which is not "
                             "installed (pip install flash-attn --no-build-isolation): use sdpa or eager")


def check_loading(options: dict) -> None:
    """:func:`check_values`, then :func:`check_environment`."""
    check_values(options)
    check_environment(options)


def loading_settings(options: dict) -> dict:
    """The loading options of ``options`` that are not at their default, for the provenance's runner settings."""
    return {k: options[k] for k, default in DEFAULTS.items() if options.get(k) not in (None, default)}


def from_pretrained_kwargs(torch, dtype: str | None = "auto", device_map: str | None = None,
                           load_in: str | None = None, attn_implementation: str | None = None) -> dict:
    """``from_pretrained`` keyword arguments for these options (those at their default left out, but ``dtype``)."""
    kwargs: dict = {"dtype": dtype if dtype in ("auto", None) else getattr(torch, dtype)}
    if device_map is not None:
        kwargs["device_map"] = device_map
    if attn_implementation is not None:
        kwargs["attn_implementation"] = attn_implementation
    if load_in == "4bit":
        from transformers import BitsAndBytesConfig

        compute = kwargs["dtype"] if dtype not in ("auto", None) else torch.bfloat16
        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                                           bnb_4bit_compute_dtype=compute)
    elif load_in == "8bit":
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(load_in_8bit=True)
    return kwargs
