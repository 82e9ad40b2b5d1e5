"""The memory plan of a training recipe (``omniaudit plan RECIPE``): what one GPU holds, estimated, for the recipe's
model (built on the meta device from its config, :mod:`omniaudit.real_size`), LoRA or full fine-tuning, sequence
length, micro-batch and gradient checkpointing, under DeepSpeed ZeRO-2 / ZeRO-3 with or without CPU offload.

- **Model states** (parameters, gradients, optimizer states, ZeRO-3's gather buffer, CPU memory): DeepSpeed's own
  estimators (``estimate_zero2_model_states_mem_needs``, ``estimate_zero3_model_states_mem_needs``, the functions
  behind their ``*_all_live`` printers) for the trainable parameters, whose byte split (bf16 weights, fp32 gradients
  and Adam states) they follow; the frozen weights of a LoRA run add 2 bytes each, partitioned under ZeRO-3 and on
  the CPU with offload.
- **Activations**: :func:`layer_bytes` per token and decoder layer (the saved tensors of a transformers decoder
  layer in bf16, counted with autograd's ``saved_tensors_hooks``: ``tests/test_memory_plan.py`` recounts them) times
  the tokens of a micro-batch. Without gradient checkpointing every layer keeps them; with it each layer keeps its
  input (2h bytes per token) and one layer is recomputed at a time. Plus TRL's fused LM head (SFT and DPO: bf16 tiles
  of 4096 tokens x 32768 vocabulary entries, never the full logits) and, for full fine-tuning, the towers'.
- **Tokens per sequence**: the recipe's ``max_length``, or for a video recipe the clip's tokens from the processor
  config (``max_frames`` frames of a 720p source resized within the processor's frame bounds or
  ``video_max_pixels``, its soundtrack up to the last frame) plus :data:`TEXT_TOKENS` of text, at most
  ``max_length``. DPO and ODIN forward two sequences per pair (chosen and rejected), so twice the micro-batch.

Everything is an estimate: allocator fragmentation, CUDA context and NCCL buffers, and kernels' workspaces are not
counted (the verdict keeps 10% of the card for them).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omniaudit.errors import InputError

GIB = 1024 ** 3
H100_GIB = 79.6  # an H100 80 GB card: nvidia-smi's 81,559 MiB
USABLE_SHARE = 0.9  # of the card: the rest for the CUDA context, NCCL buffers and fragmentation
TEXT_TOKENS = 512  # text beside a clip (prompt, descriptions, answer) in a video recipe's sequence
SEQUENCES = {"sft": 1, "star_verifier": 1, "dpo": 2, "reward_odin": 2, "pairwise_judge": 1}  # per example
FUSED_HEAD = ("sft", "dpo", "star_verifier")  # TRL's fused LM head; reward_odin and pairwise_judge: a score head
TILE_TOKENS, TILE_VOCAB = 4096, 32768  # trl.kernels.chunked_logprob's tiles of the fused LM head
# bytes per tile element: with Triton (GPU) the bf16 tile, the softmax in registers; the torch fallback (CPU) keeps the
# tile and up to 7 fp32 temporaries (measured: 27 bytes per element on a small model, benchmarks/real_size.py)
HEAD_BYTES_GPU, HEAD_BYTES_TORCH = 2, 28
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


@dataclass(frozen=True)
class Setup:
    """GPUs (H100 80 GB) in one node, ZeRO stage and offload (ZeRO-3: parameters and optimizer to CPU, as
    ``accelerate_configs/zero3_offload.yaml``; ZeRO-2: the optimizer)."""

    gpus: int = 8
    zero: int = 3
    offload: bool = False

    @property
    def label(self) -> str:
        return f"{self.gpus}×H100 ZeRO-{self.zero}{' offload' if self.offload else ''}"


SETUPS = tuple(Setup(g, z, o) for g in (1, 8) for z, o in ((2, False), (3, False), (3, True)))


# ---------------------------------------------------------------------------------------------------------- recipes
@dataclass(frozen=True)
class Recipe:
    """What the plan reads from a training recipe."""

    name: str
    script: str
    model: str
    lora: bool
    r: int
    dropout: float
    targets: tuple[str, ...]
    language_model_only: bool
    max_length: int
    batch: int
    checkpointing: bool
    fps: float | None = None
    max_frames: int | None = None
    video_max_pixels: int | None = None
    frozen_towers: tuple[str, ...] = ()
    output_dir: str | None = None


def _script(text: str) -> str | None:
    from omniaudit.launch_files import header_launches

    for line in header_launches(text):
        found = re.search(r"(?:training/|omniaudit\.training\.)(\w+)(?:\.py)?(?=\s|$)", line)
        if found:
            return found[1]
    return None


def read_recipe(name: str) -> Recipe:
    """A packaged recipe (``qwen2.5-omni-7b/judge``, ``recipe:`` optional) or a recipe file."""
    import yaml

    from omniaudit.launch_files import recipe_path

    path = Path(name)
    if not (path.suffix in (".yaml", ".yml") and path.is_file()):
        path = recipe_path(name)
    text = path.read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text) or {}
    script = _script(text)
    if script not in SEQUENCES:
        raise InputError(f"the recipe's header names no training script the plan knows ({', '.join(SEQUENCES)})",
                         file=path)
    targets = data.get("lora_target_modules") or ALL_LINEAR
    return Recipe(name=name.removeprefix("recipe:"), script=script, model=str(data["model_name_or_path"]),
                  lora=bool(data.get("use_peft")), r=int(data.get("lora_r", 16)),
                  dropout=float(data.get("lora_dropout", 0.05)),
                  targets=tuple([targets] if isinstance(targets, str) else targets),
                  language_model_only=bool(data.get("lora_language_model_only", True)),
                  max_length=int(data.get("max_length") or 1024),
                  batch=int(data.get("per_device_train_batch_size", 8)),
                  checkpointing=bool(data.get("gradient_checkpointing")), fps=data.get("fps"),
                  max_frames=data.get("max_frames"), video_max_pixels=data.get("video_max_pixels"),
                  frozen_towers=tuple(t for t in ("audio", "vision") if data.get(f"freeze_{t}_tower")),
                  output_dir=data.get("output_dir"))


def model_folder(recipe: Recipe, model: str | None = None) -> Path:
    """The folder whose config describes the recipe's model: ``model`` or the recipe's ``model_name_or_path`` as a
    local folder or a shipped architecture, or the model of the packaged recipe whose ``output_dir`` it is (the
    30B DPO recipes start from the SFT recipe's output)."""
    from omniaudit.launch_files import recipe_names
    from omniaudit.real_size import resolve_model

    wanted = model or recipe.model
    try:
        return resolve_model(wanted)
    except InputError:
        for other in recipe_names() if model is None else []:
            try:
                parent = read_recipe(other)
            except InputError:  # a recipe for a script the plan does not know
                continue
            if parent.output_dir == wanted and parent.model != wanted:
                return model_folder(parent)
        raise InputError("no config for the recipe's model: a local model folder, a published id omniaudit ships "
                         "the architecture of, or another recipe's output_dir (tiny recipes: run omniaudit "
                         "tiny-models first; or give --model)", value=wanted) from None


# --------------------------------------------------------------------------------------------------- model shapes
@dataclass(frozen=True)
class Tower:
    """A media encoder: ``depth`` blocks of width ``hidden`` (MLP ``intermediate``)."""

    name: str
    depth: int
    hidden: int
    intermediate: int


@dataclass(frozen=True)
class Shape:
    """The sizes the plan needs, read from a model built on the meta device."""

    folder: Path
    model_type: str
    params: int  # with the LM head
    lm_head: int
    largest_layer: int  # DeepSpeed's model_to_params: the most parameters one module holds
    layers: int
    hidden: int
    q_dim: int
    kv_dim: int
    intermediate: int
    vocab: int
    experts: tuple[int, int, int] | None  # (per token, moe intermediate, experts) of an MoE language model
    towers: tuple[Tower, ...] = ()
    lora_in: dict[str, dict[tuple[str, ...], list[int]]] = field(default_factory=dict, compare=False)


def _towers(config) -> tuple[Tower, ...]:
    out = []
    vision, audio = getattr(config, "vision_config", None), getattr(config, "audio_config", None)
    if vision is not None:
        out.append(Tower("vision", vision.depth, vision.hidden_size, vision.intermediate_size))
    if audio is not None:
        out.append(Tower("audio", audio.encoder_layers, audio.d_model, audio.encoder_ffn_dim))
    return tuple(out)


@functools.lru_cache(maxsize=16)
def model_shape(folder: Path) -> tuple[Shape, Any]:
    """The :class:`Shape` of the model in ``folder`` and the meta-device model itself (cached per folder)."""
    from deepspeed.runtime.zero.stage3 import model_to_params

    from omniaudit.real_size import build_model, count_parameters, load_config

    config = load_config(folder)
    model = build_model(config, device="meta")
    counts = count_parameters(model)
    text = config.get_text_config()
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    experts = (text.num_experts_per_tok, text.moe_intermediate_size, text.num_experts) \
        if getattr(text, "num_experts", 0) else None
    shape = Shape(folder, config.model_type, counts.total, counts.lm_head, model_to_params(model)[1],
                  text.num_hidden_layers, text.hidden_size, text.num_attention_heads * head_dim,
                  text.num_key_value_heads * head_dim, text.intermediate_size, text.vocab_size, experts,
                  _towers(config))
    return shape, model


def trainable_parameters(recipe: Recipe, shape: Shape, model) -> int:
    """LoRA's adapters (:func:`omniaudit.real_size.lora_parameters`), or every parameter of the trained model (less
    the LM head for a score-head script) minus the towers a full fine-tuning recipe freezes."""
    from omniaudit.real_size import count_parameters, lora_parameters

    if recipe.lora:
        return lora_parameters(model, list(recipe.targets), recipe.r, recipe.language_model_only)
    parts = count_parameters(model).parts
    frozen = sum(parts.get(name, 0) for name, tower in (("audio_tower", "audio"), ("visual", "vision"))
                 if tower in recipe.frozen_towers)
    return trained_parameters(recipe, shape) - frozen


def trained_parameters(recipe: Recipe, shape: Shape) -> int:
    """The parameters of the model the script trains: score-head scripts (ODIN, pairwise judge) drop the LM head."""
    return shape.params - (0 if recipe.script in FUSED_HEAD else shape.lm_head)


# ------------------------------------------------------------------------------------------------------ activations
def dense_layer(h: int, q: int, kv: int, i: int, full: bool) -> int:
    """Saved bytes per token of a dense decoder layer (Qwen2 / Qwen2.5 / Qwen2.5-Omni's), bf16: frozen weights
    (LoRA's base) ``8h + 4q + 4kv + 6i + 24``, full fine-tuning ``16h + 4q + 4kv + 8i + 24`` (h hidden, q and kv the
    query and key/value widths, i the MLP width; the 24: fp32 RMSNorm statistics)."""
    return (16 if full else 8) * h + 4 * q + 4 * kv + (8 if full else 6) * i + 24


def moe_layer(h: int, q: int, kv: int, experts: tuple[int, int, int], full: bool) -> int:
    """Saved bytes per token of a Qwen3-Omni MoE decoder layer (k experts of width m per token, E experts; q/k
    norms): frozen ``(8 + 2k)h + 8(q + kv) + 6km + 48 + 4E + 38k``, full ``(16 + 4k)h + 10(q + kv) + 8km + ...``."""
    k, m, n = experts
    if full:
        return (16 + 4 * k) * h + 10 * (q + kv) + 8 * k * m + 48 + 4 * n + 38 * k
    return (8 + 2 * k) * h + 8 * (q + kv) + 6 * k * m + 48 + 4 * n + 38 * k


def adapter_bytes(in_features: int, r: int, dropout: bool) -> int:
    """A LoRA adapter's saved bytes per token: ``8 in + 4r`` with dropout (the mask and the dropped input), else
    ``4 in + 4r``."""
    return (8 if dropout else 4) * in_features + 4 * r


def layer_bytes(shape: Shape, full: bool, adapters: Sequence[int] = (), r: int = 0, dropout: bool = True) -> int:
    """Saved bytes per token of one decoder layer of ``shape``'s language model; ``adapters``: the input widths of
    the layer's LoRA-adapted linear layers."""
    if shape.experts is not None:
        base = moe_layer(shape.hidden, shape.q_dim, shape.kv_dim, shape.experts, full)
    else:
        base = dense_layer(shape.hidden, shape.q_dim, shape.kv_dim, shape.intermediate, full)
    return base + sum(adapter_bytes(n, r, dropout) for n in adapters)


@dataclass(frozen=True)
class Activations:
    """Bytes of one micro-batch's activations: the language model's layers, the LM head's tiles, the towers'."""

    layers: int  # recompute included
    head: int
    towers: int
    formula: str
    recompute: int = 0  # with checkpointing: the one layer recomputed during backward (not saved by the forward)

    @property
    def total(self) -> int:
        return self.layers + self.head + self.towers


def activation_bytes(shape: Shape, tokens: int, *, full: bool, adapters: Sequence[int], r: int, dropout: bool,
                     checkpointing: bool, fused_head: bool, tower_positions: dict[str, int] | None = None,
                     trained_towers: tuple[str, ...] = (), head_bytes: int = HEAD_BYTES_GPU) -> Activations:
    """The activations of ``tokens`` tokens (all sequences of a micro-batch) in ``shape``'s model.

    Layers: ``tokens * (L * layer + 8h)`` without checkpointing, ``tokens * (L * 2h + layer + 8h)`` with it (each
    layer's input kept, one layer recomputed at a time; 8h: embeddings, final norm, head input). Head: TRL's fused LM
    head, ``min(tokens, 4096) * min(vocabulary, 32768) * head_bytes`` (:data:`HEAD_BYTES_GPU`; on a CPU
    :data:`HEAD_BYTES_TORCH`). Towers (full fine-tuning only; frozen towers save nothing): per
    encoder position, as a dense layer of the tower's width, checkpointed like the language model."""
    layer = layer_bytes(shape, full, adapters, r, dropout)
    h, depth = shape.hidden, shape.layers
    per_token = (depth * 2 * h + layer if checkpointing else depth * layer) + 8 * h
    head = min(tokens, TILE_TOKENS) * min(shape.vocab, TILE_VOCAB) * head_bytes if fused_head else 0
    towers = 0
    for tower in shape.towers:
        positions = (tower_positions or {}).get(tower.name, 0)
        if tower.name in trained_towers and positions:
            block = dense_layer(tower.hidden, tower.hidden, tower.hidden, tower.intermediate, full=True)
            towers += positions * ((tower.depth * 2 * tower.hidden + block) if checkpointing else tower.depth * block)
    kind = "full" if full else f"frozen + {len(adapters)} LoRA adapters"
    formula = (f"{tokens:,} tokens x ({depth} x {'2h' if checkpointing else 'layer'}"
               f"{' + layer' if checkpointing else ''} + 8h), layer = {layer:,} B/token ({kind})")
    return Activations(tokens * per_token, head, towers, formula, tokens * layer if checkpointing else 0)


def layer_adapters(model, recipe: Recipe) -> list[int]:
    """The input widths of the LoRA-adapted linear layers of one decoder layer (its first)."""
    from omniaudit.real_size import lora_modules

    if not recipe.lora:
        return []
    return [fan_in for name, fan_in, _ in lora_modules(model, list(recipe.targets), True)
            if re.match(r"(.*\.)?layers\.0\.", name)]


# ---------------------------------------------------------------------------------------------------------- tokens
@dataclass(frozen=True)
class Tokens:
    """The tokens of one sequence, how many sequences a GPU's micro-batch holds and the towers' encoder positions."""

    per_sequence: int
    sequences: int
    note: str
    tower_positions: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.per_sequence * self.sequences


def sequence_tokens(recipe: Recipe, shape: Shape) -> Tokens:
    """Video recipes: the clip's tokens from the processor config + :data:`TEXT_TOKENS`, at most ``max_length``;
    any other recipe: ``max_length`` (the longest a sequence is let be)."""
    from omniaudit.real_size import media_tokens

    sequences = SEQUENCES[recipe.script] * recipe.batch
    if not (shape.towers and recipe.fps and recipe.max_frames):
        return Tokens(recipe.max_length, sequences, f"max_length {recipe.max_length}")
    media = media_tokens(shape.folder, recipe.fps, recipe.max_frames, recipe.video_max_pixels)
    wanted = media.video + media.audio + TEXT_TOKENS
    tokens = min(wanted, recipe.max_length)
    note = (f"{media.frames} frames at {media.frame_size[1]}x{media.frame_size[0]}: {media.video:,} video + "
            f"{media.audio:,} audio ({media.seconds:g} s) + {TEXT_TOKENS} text"
            f"{'' if tokens == wanted else f', cut to max_length {recipe.max_length}'}")
    positions = {"vision": media.patches * sequences, "audio": media.audio_frames * sequences}
    return Tokens(tokens, sequences, note, positions)


# ---------------------------------------------------------------------------------------------------- model states
def model_states(params: int, trainable: int, largest_layer: int, setup: Setup) -> tuple[dict[str, int], int]:
    """Bytes per GPU by kind (``parameters``, ``gradients``, ``optimizer states``, ``ZeRO-3 gather buffer``) and CPU
    bytes per node, from DeepSpeed's estimators for the ``trainable`` parameters (zero_init as the shipped ZeRO-3
    configs, DeepSpeed's 1.5 buffer factor on CPU) plus 2 bytes per frozen parameter."""
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    n, frozen = setup.gpus, params - trainable
    if setup.zero == 3:
        cpu, gpu, buffer = estimate_zero3_model_states_mem_needs(
            trainable, largest_layer, num_gpus_per_node=n, num_nodes=1, cpu_offload=setup.offload,
            cpu_offload_params=setup.offload, zero_init=True)
        if setup.offload:  # DeepSpeed: only the gather buffer stays on the GPU
            return _rows(0, 0, 0, buffer), cpu + 2 * frozen
        states = gpu - buffer  # 18 bytes per trainable parameter / N: 2 bf16 weights, 4 gradients, 12 Adam
        weights, grads = states * 2 // 18, states * 4 // 18
        return _rows(weights + 2 * frozen // n, grads, states - weights - grads, buffer), cpu
    cpu, gpu = estimate_zero2_model_states_mem_needs(trainable, num_gpus_per_node=n, num_nodes=1,
                                                    cpu_offload=setup.offload)
    if setup.offload:  # DeepSpeed: the bf16 weights on the GPU, gradients and optimizer on the CPU
        return _rows(gpu + 2 * frozen, 0, 0), cpu
    weights = 2 * trainable  # replicated; the rest, 18 bytes / N: 6 gradients (bf16 + fp32), 12 Adam
    grads = (gpu - weights) * 6 // 18
    return _rows(weights + 2 * frozen, grads, gpu - weights - grads), cpu


def _rows(weights: int, grads: int, optimizer: int, buffer: int | None = None) -> dict[str, int]:
    rows = {"parameters (bf16)": weights, "gradients": grads, "optimizer states (Adam)": optimizer}
    return rows if buffer is None else {**rows, "ZeRO-3 gather buffer": buffer}


# ------------------------------------------------------------------------------------------------------------ plan
@dataclass(frozen=True)
class Plan:
    """One recipe on one setup, per GPU (bytes), estimated."""

    recipe: Recipe
    shape: Shape
    setup: Setup
    params: int  # of the trained model
    trainable: int
    tokens: Tokens
    states: dict[str, int]
    activations: Activations
    reference: int  # a DPO run without LoRA keeps a second, frozen copy of the model
    cpu: int

    @property
    def rows(self) -> dict[str, int]:
        rows = dict(self.states)
        if self.reference:
            rows["reference model (bf16)"] = self.reference
        rows["activations"] = self.activations.total
        return rows

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    @property
    def fits(self) -> bool:
        return self.total <= H100_GIB * USABLE_SHARE * GIB


def make_plan(recipe: Recipe | str, setup: Setup = Setup(), model: str | None = None) -> Plan:
    """The memory plan of ``recipe`` (a :class:`Recipe`, a packaged recipe's name or a recipe file) on ``setup``;
    ``model``: another model folder or published id than the recipe's."""
    recipe = read_recipe(recipe) if isinstance(recipe, str) else recipe
    shape, meta = model_shape(model_folder(recipe, model))
    params, trainable = trained_parameters(recipe, shape), trainable_parameters(recipe, shape, meta)
    tokens = sequence_tokens(recipe, shape)
    trained_towers = () if recipe.lora else tuple(t.name for t in shape.towers if t.name not in recipe.frozen_towers)
    activations = activation_bytes(shape, tokens.total, full=not recipe.lora, adapters=layer_adapters(meta, recipe),
                                   r=recipe.r, dropout=recipe.dropout > 0, checkpointing=recipe.checkpointing,
                                   fused_head=recipe.script in FUSED_HEAD, tower_positions=tokens.tower_positions,
                                   trained_towers=trained_towers)
    states, cpu = model_states(params, trainable, shape.largest_layer, setup)
    reference = 0
    if recipe.script == "dpo" and not recipe.lora:
        reference = 0 if setup.zero == 3 and setup.offload else 2 * params // (setup.gpus if setup.zero == 3 else 1)
    return Plan(recipe, shape, setup, params, trainable, tokens, states, activations, reference, cpu)


def full_size_recipes() -> list[str]:
    """The packaged recipes of full-size models (every one but ``tiny/``)."""
    from omniaudit.launch_files import recipe_names

    return [name for name in recipe_names() if not name.startswith("tiny/")]
