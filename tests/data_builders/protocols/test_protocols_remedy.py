"""``omniaudit remedy label_following --dataset``: deranged supplied labels (never the truth), k-1 per clip, beside the
clip's no-label item, in the Hub layout ``load_dataset(OUT, "sft")`` reads; and the omni SFT collator on its
audio-only chat rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from omniaudit.cli import main as omniaudit
from omniaudit.data_builders.hub import load_config
from omniaudit.data_builders.protocols.remedy import (
    COLUMNS,
    build_deranged_dataset,
    check_deranged,
    derange_prompt,
    deranged_rows,
)

REPO = Path(__file__).resolve().parents[3]
SHARD = Path("sft") / "train-00000-of-00001.parquet"


def records(df: pd.DataFrame) -> list[dict]:
    """Rows as the builder makes them (missing cells None, not NaN)."""
    return [{k: (None if v is None or (isinstance(v, float) and v != v) else v) for k, v in r.items()}
            for r in df.to_dict("records")]


@pytest.fixture(scope="module")
def blueprint(protocol_dataset) -> pd.DataFrame:
    return load_config(protocol_dataset, "blueprint", columns=COLUMNS)


@pytest.fixture(scope="module")
def deranged(tmp_path_factory, protocol_dataset) -> Path:
    return build_deranged_dataset(tmp_path_factory.mktemp("remedy") / "deranged", protocol_dataset, seed=0)


@pytest.fixture(scope="module")
def rows(deranged) -> pd.DataFrame:
    return pq.read_table(deranged / SHARD).to_pandas()


def test_supplied_label_is_never_the_truth(rows):
    labelled = rows[rows["supplied"].notna()]
    assert len(labelled) and (labelled["supplied"] != labelled["gold"]).all()
    assert all(s in list(o) for s, o in zip(labelled["supplied"], labelled["options"], strict=True))
    for r in labelled.itertuples():  # the user text supplies that label, quoted once, and no other option
        prompt = r.messages[0]["content"][1]["text"]
        assert prompt.count(f'"{r.supplied}"') == 1
        assert not [o for o in r.options if o != r.supplied and f'"{o}"' in prompt]
        assert r.messages[1]["content"][0]["text"] == r.gold  # the answer is always the gold label


def test_every_clip_has_its_k_minus_1_wrong_labels_and_a_no_label_item(rows, blueprint):
    clips = blueprint[["attribute", "clip_id"]].drop_duplicates()
    assert len(rows) == sum(int(k) for k in blueprint.drop_duplicates(["attribute", "clip_id"])["options"].map(len))
    for _, group in rows.groupby(["attribute", "clip_id"]):
        options, gold = list(group["options"].iloc[0]), group["gold"].iloc[0]
        assert sorted(group["supplied"].dropna()) == sorted(o for o in options if o != gold)
        plain = group[group["supplied"].isna()]
        assert len(plain) == 1 and plain["condition"].iloc[0] == "audio"
        assert plain["messages"].iloc[0][0]["content"][1]["text"].startswith("Listen to the audio clip.")
    assert rows.groupby(["attribute", "clip_id"]).ngroups == len(clips)
    assert set(rows["condition"]) == {"wrong_audio", "audio"}


def test_deranged_prompt_differs_from_the_source_only_in_the_label(rows, blueprint):
    source = blueprint.set_index("id")
    for r in rows[rows["supplied"].notna()].itertuples():
        original = source.loc[r.source_id]
        assert r.messages[0]["content"][1]["text"] == original["prompt"].replace(f'"{original["cue"]}"',
                                                                                 f'"{r.supplied}"')
        assert r.audio["bytes"] == original["audio_1"]["bytes"]  # the same clip, embedded


def test_load_dataset_reads_the_sft_config(deranged):
    import datasets

    ds = datasets.load_dataset(str(deranged), "sft", split="train")
    assert {"id", "clip_id", "attribute", "supplied", "gold", "condition", "messages", "audio"} <= set(ds.column_names)
    assert isinstance(ds.features["audio"], datasets.Audio)
    assert ds.cast_column("audio", datasets.Audio(decode=False))[0]["audio"]["bytes"]
    card = (deranged / "README.md").read_text()
    assert "training/sft.py" in card and "--dataset_config sft" in card and "Anti-following" in card
    assert (deranged / ".omniaudit.json").is_file()


def test_one_seed_gives_identical_bytes_and_the_seed_only_orders_rows(tmp_path, protocol_dataset, deranged, rows):
    again = build_deranged_dataset(tmp_path / "again", protocol_dataset, seed=0)
    for name in (str(SHARD), "README.md", "build_info.json"):
        assert (again / name).read_bytes() == (deranged / name).read_bytes(), name
    other = pq.read_table(build_deranged_dataset(tmp_path / "other", protocol_dataset, seed=1) / SHARD).to_pandas()
    assert list(other["id"]) != list(rows["id"])
    key = ["id", "supplied", "gold", "condition"]
    def by_id(df):
        return df[key].sort_values("id").reset_index(drop=True)
    assert by_id(other).equals(by_id(rows))


def test_cue_conflict_adds_conf_spec_items(tmp_path, protocol_dataset, rows):
    out = build_deranged_dataset(tmp_path / "cc", protocol_dataset, cue_conflict=True)
    both = pq.read_table(out / SHARD).to_pandas()
    extra = both[both["condition"] == "conf_spec"]
    clips = rows.groupby(["attribute", "clip_id"]).ngroups  # a clip may serve two attributes
    assert len(extra) == len(rows) - clips  # k-1 per clip, again
    assert (extra["supplied"] != extra["gold"]).all()
    check_deranged(records(both))


def test_items_without_one_quoted_label_are_skipped_and_counted(blueprint):
    doctored = blueprint.copy()
    first = doctored.index[doctored["condition"] == "wrong_audio"][:2]
    cue = doctored.loc[first[0], "cue"]
    doctored.loc[first[0], "prompt"] = doctored.loc[first[0], "prompt"] + f' Not "{cue}".'  # quoted twice
    gold = doctored.loc[first[1], "gold"]
    doctored.loc[first[1], "prompt"] = doctored.loc[first[1], "prompt"] + f' Or "{gold}"?'  # quotes another option
    out, summary = deranged_rows(doctored)
    assert len(summary["skipped"]) == 2 and "2 times" in summary["skipped"][0]["why"]
    assert "also quotes" in summary["skipped"][1]["why"]
    skipped = {(s["attribute"], s["clip_id"]) for s in summary["skipped"]}
    assert not [r for r in out if (r["attribute"], r["clip_id"]) in skipped]
    assert summary["clips"] == blueprint.groupby(["attribute", "clip_id"]).ngroups - 2
    assert derange_prompt('predicts "angry".', "angry", ["angry", "sad"]) is None


def test_the_card_lists_what_was_skipped(blueprint):
    from omniaudit.hub_cards import dataset_card

    doctored = blueprint.copy()
    first = doctored.index[doctored["condition"] == "wrong_audio"][0]
    doctored.loc[first, "prompt"] = doctored.loc[first, "prompt"].replace('"', "")
    _, summary = deranged_rows(doctored)
    card = dataset_card("remedy_label_following.md.j2", {"configs": []}, source="probes", summary=summary,
                        config="sft", train_command="accelerate launch ...", cue_conditions=("conf_spec",))
    assert "**Skipped.**" in card and f"/ {doctored.loc[first, 'clip_id']}: the prompt quotes" in card
    assert f"| clips | {summary['clips']} |" in card


def test_check_deranged_refuses_a_supplied_gold_label(rows):
    check_deranged(records(rows))
    rows_ = records(rows)
    bad = next(r for r in rows_ if r["supplied"] is not None)
    bad["supplied"] = bad["gold"]
    with pytest.raises(AssertionError, match="is the gold label"):
        check_deranged(rows_)
    one_missing = [r for r in records(rows) if r["id"] != bad["id"]]
    with pytest.raises(AssertionError, match="expected each wrong option once"):
        check_deranged(one_missing)
    no_plain = [r for r in records(rows) if (r["supplied"], r["clip_id"]) != (None, bad["clip_id"])]
    with pytest.raises(AssertionError, match="no no-label row"):
        check_deranged(no_plain)


def test_a_dataset_without_blueprint_is_refused_in_one_line(capsys, tmp_path, deranged):
    assert omniaudit(["remedy", "label_following", "--dataset", str(deranged), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(deranged) in err and "no 'blueprint' config" in err
    assert not (tmp_path / "x").exists()
    assert omniaudit(["remedy", "label_following", "--dataset", str(tmp_path / "none"), "--out",
                      str(tmp_path / "x")]) == 2
    assert "folder not found" in capsys.readouterr().err


def test_the_cli_writes_the_set_and_says_the_counts(capsys, tmp_path, protocol_dataset, rows):
    out = tmp_path / "deranged"
    assert omniaudit(["remedy", "label_following", "--dataset", str(protocol_dataset), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    n = rows.groupby(["attribute", "clip_id"]).ngroups
    assert f"{n} clips: {len(rows) - n} rows with a deranged label, {n} without a label" in said
    assert "--dataset_config sft" in said and (out / SHARD).is_file()


@pytest.fixture(scope="module")
def tiny_omni(tmp_path_factory) -> Path:
    from omniaudit.tiny_models import tiny_omni

    return tiny_omni(tmp_path_factory.mktemp("omni") / "omni")


def test_the_omni_sft_collator_hears_audio_only_rows(tiny_omni, deranged):
    """training/collators.py: an ``audio`` column is decoded as audio (no frames), its placeholders expanded, and
    only the gold answer is a target."""
    from transformers import AutoProcessor

    from omniaudit.data_builders.hub import load_hub_dataset
    from omniaudit.training.collators import OmniSFTCollator
    from omniaudit.training.common import media_column

    ds, column = media_column(load_hub_dataset(deranged, "sft"))
    assert column == "audio"
    processor = AutoProcessor.from_pretrained(tiny_omni)
    batch = OmniSFTCollator(processor, video_column=column, max_length=1024)([ds[0], ds[1]])
    assert "input_features" in batch and "pixel_values_videos" not in batch and "use_audio_in_video" not in batch
    audio_id = processor.tokenizer.convert_tokens_to_ids("<|AUDIO|>")
    assert ((batch["input_ids"] == audio_id).sum(1) > 1).all()  # the clip's frames of audio, not one placeholder
    for i in range(2):
        labels = batch["labels"][i]
        assert processor.tokenizer.decode(labels[labels != -100]).startswith(ds[i]["gold"] + "<|im_end|>")


@pytest.mark.slow
def test_sft_trains_on_the_set_through_accelerate_launch(tiny_omni, deranged, tmp_path):
    out = tmp_path / "sft"
    cmd = [str(Path(sys.executable).parent / "accelerate"), "launch", "--config_file",
           str(REPO / "accelerate_configs" / "cpu.yaml"), str(REPO / "training" / "sft.py"),
           "--config", str(REPO / "training" / "recipes" / "tiny" / "sft_omni.yaml"),
           "--model_name_or_path", str(tiny_omni), "--dataset_name", str(deranged), "--dataset_config", "sft",
           "--max_steps", "2", "--output_dir", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "WANDB_MODE": "offline", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (out / "model.safetensors").is_file()
