"""The shipped full-size configs and the memory plan (omniaudit/real_size.py, omniaudit/memory_plan.py): the configs
give the published sizes, the activation formula is what autograd saves (recounted with ``saved_tensors_hooks`` on
small models of each layer family), token counts are the processors', model states are DeepSpeed's estimators',
and ``omniaudit plan`` prints the plan. docs/memory.md's table equals the code's."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("deepspeed")
pytest.importorskip("peft")

from omniaudit.memory_plan import (  # noqa: E402
    ALL_LINEAR,
    SETUPS,
    Setup,
    activation_bytes,
    adapter_bytes,
    dense_layer,
    make_plan,
    model_shape,
    model_states,
    moe_layer,
)
from omniaudit.real_size import (  # noqa: E402
    PUBLISHED,
    audio_tokens,
    count_parameters,
    lora_parameters,
    media_tokens,
    real_config_dir,
    real_config_names,
)

# parameters of the thinkers (towers, language model, LM head) and of Qwen2.5-7B-Instruct, as the configs build them
PARAMETERS = {"qwen2.5-omni-7b-thinker": 8_931_813_888, "qwen2.5-omni-3b-thinker": 4_703_464_448,
              "qwen2.5-7b-instruct": 7_615_616_512, "qwen3-omni-30b-a3b-thinker": 31_719_205_488}


def test_every_published_id_has_a_shipped_config():
    assert sorted(PUBLISHED.values()) == real_config_names() == sorted(PARAMETERS)


@pytest.mark.parametrize("name", sorted(PARAMETERS))
def test_the_shipped_configs_build_the_published_sizes(name):
    shape, model = model_shape(real_config_dir(name))
    assert shape.params == PARAMETERS[name]
    assert {p.device.type for p in model.parameters()} == {"meta"}  # nothing allocated
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}


def test_the_3b_thinker_is_the_published_3b():
    shape, model = model_shape(real_config_dir("Qwen/Qwen2.5-Omni-3B"))
    assert (shape.hidden, shape.layers, shape.q_dim, shape.kv_dim, shape.intermediate) == (2048, 36, 2048, 256, 11008)
    parts = count_parameters(model).parts
    assert parts["lm_head"] == 151_936 * 2048  # untied, the published vocabulary
    assert parts["audio_tower"] == 637_676_544 and parts["visual"] == 668_684_288
    config = json.loads((real_config_dir("qwen2.5-omni-3b-thinker") / "config.json").read_text())
    assert config["audio_config"]["output_dim"] == config["vision_config"]["out_hidden_size"] == 2048


def test_the_30b_language_model_has_the_published_count():
    _, model = model_shape(real_config_dir("qwen3-omni-30b-a3b-thinker"))
    parts = count_parameters(model).parts
    assert abs(parts["language_model"] + parts["lm_head"] - 30_532_122_624) < 1e-4 * 30e9  # Qwen's 30.53 B


# --------------------------------------------------------------------------------------------- activation formula
def _saved(model, ids) -> int:
    """Bytes autograd saves for backward in one forward (each storage once, parameters left out)."""
    params = {p.data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t):
        if t.data_ptr() not in params:
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(input_ids=ids)
    return sum(seen.values())


def _dense(layers: int, h=256, i=640, kv_heads=1, head_dim=64):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(hidden_size=h, intermediate_size=i, num_attention_heads=h // head_dim, head_dim=head_dim,
                         num_key_value_heads=kv_heads, num_hidden_layers=layers, vocab_size=300,
                         tie_word_embeddings=False)
    return Qwen2ForCausalLM(config).to(torch.bfloat16)


def _moe(layers: int, h=256, m=128, experts=(2, 8)):
    from transformers import Qwen3OmniMoeThinkerConfig, Qwen3OmniMoeThinkerForConditionalGeneration

    torch.manual_seed(0)
    config = Qwen3OmniMoeThinkerConfig(
        audio_config=dict(num_mel_bins=16, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=32, output_dim=h, downsample_hidden_size=8),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=32, num_heads=2, out_hidden_size=h,
                           deepstack_visual_indexes=[0]),
        text_config=dict(vocab_size=300, hidden_size=h, intermediate_size=m, moe_intermediate_size=m,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                         num_experts=experts[1], num_experts_per_tok=experts[0],
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [8, 12, 12]}))
    return Qwen3OmniMoeThinkerForConditionalGeneration._from_config(config).to(torch.bfloat16)


def _trained(model, mode: str, dropout: float = 0.05):
    from peft import LoraConfig, get_peft_model

    if mode == "full":
        return model.train()
    if mode == "frozen":
        model.requires_grad_(False)
        model.enable_input_require_grads()
        return model.train()
    targets = ALL_LINEAR if mode == "lora7" else ALL_LINEAR[:4]
    return get_peft_model(model, LoraConfig(r=8, lora_alpha=16, lora_dropout=dropout, target_modules=targets)).train()


def _per_layer(build, mode: str, tokens: int = 32, **dims) -> float:
    """Saved bytes per token of one decoder layer: a 2-layer model less a 1-layer one."""
    ids = torch.randint(0, 290, (1, tokens))
    return (_saved(_trained(build(2, **dims), mode), ids) - _saved(_trained(build(1, **dims), mode), ids)) / tokens


SLOW = pytest.mark.slow  # each a few seconds on a busy machine; one case per family stays in the quick run


@pytest.mark.parametrize("mode", ["frozen", "full", "lora4", "lora7"])
@pytest.mark.parametrize("dims", [dict(h=256, i=640, kv_heads=1),
                                  pytest.param(dict(h=384, i=512, kv_heads=2, head_dim=32), marks=SLOW)])
def test_the_dense_layer_formula_is_what_autograd_saves(mode, dims):
    h, i, head_dim = dims["h"], dims["i"], dims.get("head_dim", 64)
    kv = dims["kv_heads"] * head_dim
    widths = {"lora4": [h, h, h, h], "lora7": [h, h, h, h, h, h, i]}.get(mode, [])
    want = dense_layer(h, h, kv, i, full=mode == "full") + sum(adapter_bytes(n, 8, True) for n in widths)
    assert _per_layer(_dense, mode, **dims) == pytest.approx(want, rel=0.02)


def test_an_adapter_without_dropout_saves_half():
    from peft import LoraConfig, get_peft_model

    ids = torch.randint(0, 290, (1, 32))

    def lora(layers):
        return get_peft_model(_dense(layers), LoraConfig(r=8, target_modules=ALL_LINEAR, lora_dropout=0.0)).train()

    got = (_saved(lora(2), ids) - _saved(lora(1), ids)) / 32
    want = dense_layer(256, 256, 64, 640, False) + sum(adapter_bytes(n, 8, False) for n in [256] * 6 + [640])
    assert got == pytest.approx(want, rel=0.02)


@pytest.mark.parametrize("mode", [pytest.param("frozen", marks=SLOW), pytest.param("full", marks=SLOW), "lora4"])
@pytest.mark.parametrize("experts", [(2, 8), pytest.param((4, 8), marks=SLOW)])
def test_the_moe_layer_formula_is_what_autograd_saves(mode, experts):
    want = moe_layer(256, 256, 64, (experts[0], 128, experts[1]), full=mode == "full")
    want += sum(adapter_bytes(256, 8, True) for _ in range(4)) if mode == "lora4" else 0
    assert _per_layer(_moe, mode, experts=experts) == pytest.approx(want, rel=0.02)


def test_checkpointing_keeps_each_layer_s_input():
    ids = torch.randint(0, 290, (1, 32))

    def checkpointed(layers):
        model = _trained(_dense(layers), "lora7")
        model.base_model.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
        return model

    assert (_saved(checkpointed(2), ids) - _saved(checkpointed(1), ids)) / 32 == 2 * 256


def _thinker(layers: int):
    """A small Qwen2.5-Omni thinker (the towers one block each)."""
    from transformers import Qwen2_5OmniThinkerConfig, Qwen2_5OmniThinkerForConditionalGeneration

    torch.manual_seed(0)
    config = Qwen2_5OmniThinkerConfig(
        audio_config=dict(num_mel_bins=16, d_model=32, encoder_layers=1, encoder_attention_heads=2,
                          encoder_ffn_dim=32, output_dim=256),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=32, num_heads=2, out_hidden_size=256,
                           fullatt_block_indexes=[0]),
        text_config=dict(vocab_size=300, hidden_size=256, intermediate_size=640, num_hidden_layers=layers,
                         num_attention_heads=4, num_key_value_heads=1,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [8, 12, 12]}))
    return Qwen2_5OmniThinkerForConditionalGeneration._from_config(config).to(torch.bfloat16)


def test_the_omni_thinker_s_language_model_saves_what_the_dense_formula_says():
    """Qwen2.5-Omni's text layers (multimodal RoPE) save what Qwen2's do: 1 layer against 2."""
    ids = torch.randint(0, 290, (1, 32))
    got = (_saved(_trained(_thinker(2), "lora4"), ids) - _saved(_trained(_thinker(1), "lora4"), ids)) / 32
    assert got == pytest.approx(dense_layer(256, 256, 64, 640, False) + 4 * adapter_bytes(256, 8, True), rel=0.02)


def test_activation_bytes_scale_with_tokens_layers_and_checkpointing():
    shape, _ = model_shape(real_config_dir("qwen2.5-omni-3b-thinker"))
    plain = activation_bytes(shape, 100, full=False, adapters=[2048] * 4, r=16, dropout=True, checkpointing=False,
                             fused_head=False)
    layer = dense_layer(2048, 2048, 256, 11008, False) + 4 * adapter_bytes(2048, 16, True)
    assert plain.total == 100 * (36 * layer + 8 * 2048)
    gc = activation_bytes(shape, 100, full=False, adapters=[2048] * 4, r=16, dropout=True, checkpointing=True,
                          fused_head=True)
    assert gc.layers == 100 * (36 * 2 * 2048 + layer + 8 * 2048) and gc.recompute == 100 * layer
    assert gc.head == 100 * 32768 * 2  # a bf16 tile (GPU); the CPU fallback: HEAD_BYTES_TORCH


# ---------------------------------------------------------------------------------------------------- token counts
@pytest.mark.parametrize("frames", [1, 99, 100, 101, 1200, 3200, 30000])
def test_audio_tokens_are_the_processors(frames):
    from transformers.models.qwen2_5_omni import processing_qwen2_5_omni as p25
    from transformers.models.qwen3_omni_moe import processing_qwen3_omni_moe as p3

    assert audio_tokens("qwen2_5_omni_thinker", frames)[0] == int(p25._get_feat_extract_output_lengths(
        torch.tensor(frames)))
    assert audio_tokens("qwen3_omni_moe_thinker", frames)[0] == int(p3._get_feat_extract_output_lengths(
        torch.tensor(frames)))


def test_a_recipe_s_clip_tokens_come_from_the_processor_config():
    media = media_tokens(real_config_dir("qwen2.5-omni-7b-thinker"), fps=1.0, max_frames=12)
    assert media.frame_size == (560, 1008)  # 720p resized within 768 x 28 x 28 pixels, in 28-px steps
    assert (media.video, media.audio, media.patches) == (6 * 20 * 36, 300, 6 * 40 * 72)
    capped = media_tokens(real_config_dir("qwen3-omni-30b-a3b-thinker"), fps=1.0, max_frames=32, max_pixels=250880)
    assert capped.frame_size[0] * capped.frame_size[1] <= 250880 and capped.audio == 32 * 13


def test_lora_parameters_are_peft_s():
    """Counted from shapes as the training scripts adapt them: PEFT through training.common.peft_config (the
    towers' q/k/v_proj and gate/up/down_proj left out)."""
    from peft import get_peft_model
    from trl import ModelConfig

    from omniaudit.training.common import peft_config

    model = _thinker(2)
    want = lora_parameters(model, ALL_LINEAR, 8)
    assert want == 2 * 8 * (2 * (256 + 256) + 2 * (256 + 64) + 3 * (256 + 640))
    args = ModelConfig(use_peft=True, lora_r=8, lora_alpha=16, lora_target_modules=ALL_LINEAR)
    peft = get_peft_model(model, peft_config(args, language_model_of=model))
    assert peft.get_nb_trainable_parameters()[0] == want


# ---------------------------------------------------------------------------------------------------- model states
@pytest.mark.parametrize("setup", SETUPS + (Setup(4, 2, True),))
def test_model_states_are_deepspeed_s_estimate_plus_the_frozen_weights(setup):
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs
    from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

    params, trainable, largest = 9_000_000_000, 40_000_000, 545_000_000
    rows, cpu = model_states(params, trainable, largest, setup)
    frozen = params - trainable
    if setup.zero == 3:
        ds_cpu, ds_gpu, _ = estimate_zero3_model_states_mem_needs(trainable, largest, setup.gpus, 1, setup.offload,
                                                                  setup.offload, True)
        on_gpu = 0 if setup.offload else 2 * frozen // setup.gpus
    else:
        ds_cpu, ds_gpu = estimate_zero2_model_states_mem_needs(trainable, setup.gpus, 1, setup.offload)
        on_gpu = 2 * frozen
    assert abs(sum(rows.values()) - (ds_gpu + on_gpu)) <= 2
    assert cpu == ds_cpu + (2 * frozen if setup.zero == 3 and setup.offload else 0)


def test_full_fine_tuning_is_deepspeed_s_estimate_exactly():
    from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

    plan = make_plan("qwen3-omni-30b-a3b/sft", Setup(8, 3, False))
    assert plan.trainable == plan.params == PARAMETERS["qwen3-omni-30b-a3b-thinker"]
    states = sum(plan.states.values())
    assert abs(states - estimate_zero3_model_states_mem_needs(plan.params, plan.shape.largest_layer, 8, 1, False,
                                                              False, True)[1]) <= 2
    assert plan.activations.towers > 0  # the towers train too (not frozen)


def test_a_lora_recipe_trains_its_adapters_and_keeps_frozen_towers_out():
    plan = make_plan("qwen2.5-omni-7b/judge", Setup(1, 3, False))
    _, meta = model_shape(real_config_dir("qwen2.5-omni-7b-thinker"))
    per_layer = 2 * (3584 + 3584) + 2 * (3584 + 512) + 3 * (3584 + 18944)  # q, o; k, v; gate, up, down
    assert plan.trainable == lora_parameters(meta, ALL_LINEAR, 16) == 28 * 16 * per_layer
    assert plan.activations.towers == 0 and plan.tokens.per_sequence == 4320 + 300 + 512
    odin = make_plan("qwen2.5-omni-7b/reward_odin", Setup(1, 3, False))
    assert odin.params == plan.params - plan.shape.lm_head  # a score head, no LM head
    assert odin.tokens.sequences == 2 * 2  # two pairs, chosen and rejected


def test_the_30b_dpo_recipe_plans_the_sft_recipe_s_model():
    plan = make_plan("qwen3-omni-30b-a3b/dpo", Setup(8, 3, False))
    assert plan.shape.folder == real_config_dir("qwen3-omni-30b-a3b-thinker")  # runs/qwen3-omni-sft: sft's output


# ------------------------------------------------------------------------------------------------------ the command
def test_omniaudit_plan_prints_an_estimate(capsys):
    from omniaudit.cli import main

    assert main(["plan", "qwen2.5-omni-7b/judge", "--gpus", "1", "--zero", "3"]) == 0
    out = capsys.readouterr().out
    assert "qwen2.5-omni-7b/judge on 1×H100 ZeRO-3 (estimated, per GPU)" in out
    for row in ("parameters (bf16)", "gradients", "optimizer states (Adam)", "activations", "total"):
        assert f"\n  {row} " in out
    assert "4,320 video + 300 audio" in out and "fits an H100 80 GB" in out


def test_omniaudit_plan_names_a_model_it_has_no_config_for(capsys):
    from omniaudit.cli import main

    assert main(["plan", "tiny/dpo", "--model", "no/such-model"]) != 0
    assert "no config for the recipe's model" in capsys.readouterr().err


@pytest.mark.slow  # every full-size recipe on six setups: ~10 s
def test_the_docs_table_is_the_code_s():
    from omniaudit.memory_tables import DOCS, docs_block, docs_section

    assert docs_section(DOCS.read_text(encoding="utf-8")) == docs_block(), \
        "run python benchmarks/real_size.py --docs"


def test_the_docs_table_row_of_a_recipe_is_the_code_s():
    from omniaudit.memory_tables import DOCS, docs_table

    row = docs_table(["qwen2.5-omni-7b/judge"]).splitlines()[-1]
    assert row in DOCS.read_text(encoding="utf-8")
