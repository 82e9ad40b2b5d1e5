"""Composition samples: validation, bucket selection with template diversity, ablations, grading and the audit."""

import json

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from media_clips import noise_audio, write_clip
from PIL import Image

from omniaudit.cli import main
from omniaudit.data_builders.composition import bucket, build_composition_dataset, read_samples, select
from omniaudit.errors import InputError
from omniaudit.evaluation.grading import exact_match, grade, normalize


@pytest.mark.parametrize(("difficulty", "expected"), [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (7, 3), (8, 4),
                                                      (10, 4)])
def test_difficulty_buckets(difficulty, expected):
    assert bucket(difficulty) == expected


def fake_samples(n_templates: int, per_template: int, difficulty: int = 3, category: str = "IC") -> pd.DataFrame:
    rows = [{"id": f"t{t}_{k}", "template_id": f"T{t}", "template_name": f"T{t}", "category": category, "tier": 2,
             "question": "q", "answer": "a", "evidence_modality": "image", "generation_confidence": 4,
             "auditor_decision": "ACCEPT", "difficulty": difficulty, "video": None, "audio": None, "image": "x"}
            for t in range(n_templates) for k in range(per_template * (t + 1))]  # template t has (t+1) x as many
    return pd.DataFrame(rows)


def test_selection_respects_targets_and_template_diversity():
    df = pd.concat([fake_samples(3, 10), fake_samples(2, 10, difficulty=9, category="CC")], ignore_index=True)
    df.loc[0, "auditor_decision"] = "REJECT"
    df.loc[1, "difficulty"] = -1
    chosen = select(df, target=12, seed=0)
    assert not chosen["id"].isin(["t0_0", "t0_1"]).any()
    per_cell = chosen.groupby(["category", "bucket"]).size().to_dict()
    assert per_cell == {("CC", 4): 12, ("IC", 2): 12}
    counts = chosen[chosen["category"] == "IC"]["template_id"].value_counts()
    assert counts.max() - counts.min() <= 1  # round-robin: no template over-represented
    assert select(df, target=12, seed=0).equals(chosen)


def test_embedded_samples_build_and_ablate(tmp_path):
    import datasets

    out = build_composition_dataset(tmp_path / "ds", n_synthetic=12)
    samples = datasets.load_dataset(str(out), "samples", split="train")
    ablations = datasets.load_dataset(str(out), "ablations", split="train")
    assert len(samples) > 0 and set(ablations["ablation"]) == {"mute_audio", "drop_image", "text_only"}
    rows = ablations.cast_column("audio", datasets.Audio(decode=False)).cast_column(
        "image", datasets.Image(decode=False))
    for r in rows:
        if r["ablation"] == "mute_audio":
            audio, _ = sf.read(__import__("io").BytesIO(r["audio"]["bytes"]))
            assert np.abs(audio).max() == 0 and audio.size > 0
        if r["ablation"] in ("drop_image", "text_only"):
            assert r["image"] is None
    assert "Bypass-test ablations" in (out / "README.md").read_text()


def test_video_samples_get_a_blank_video_with_their_audio(tmp_path):
    write_clip(tmp_path / "v.mp4", seconds=2.0, audio=noise_audio(2.0, 3))
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "i.png")
    row = {"id": "v1", "template_id": "T", "template_name": "T", "category": "CC", "tier": 2, "video": "v.mp4",
           "image": "i.png", "question": "q", "answer": "a", "evidence_modality": "video",
           "generation_confidence": 5, "auditor_decision": "ACCEPT", "difficulty": 6}
    (tmp_path / "s.jsonl").write_text(json.dumps(row) + "\n")
    out = build_composition_dataset(tmp_path / "ds", tmp_path / "s.jsonl")
    from omniaudit.data_builders.interventions import media

    table = pd.read_parquet(next((out / "ablations").glob("*.parquet")))
    blank = table[table["ablation"] == "blank_video"].iloc[0]
    (tmp_path / "b.mp4").write_bytes(blank["video"]["bytes"])
    frames = __import__("av").open(str(tmp_path / "b.mp4"))
    first = next(frames.decode(video=0)).to_ndarray(format="rgb24")
    assert first.max() <= 20  # black (up to codec rounding)
    kept, _ = media.timeline_audio(media.probe(tmp_path / "b.mp4"))
    orig, _ = media.timeline_audio(media.probe(tmp_path / "v.mp4"))
    assert np.corrcoef(kept[0, : orig.shape[1]], orig[0, : kept.shape[1]])[0, 1] > 0.9  # the audio stays


@pytest.mark.parametrize(("row", "match"), [
    ({"category": "XX"}, "expected one of IC, CC"),
    ({"answer": ""}, "an answer"),
    ({"difficulty": 11}, "expected a number in"),
    ({"image": "missing.png"}, "image file not found"),
    ({"image": ""}, "at least one of video, audio, image"),
])
def test_sample_errors_name_row_and_column(tmp_path, row, match):
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "i.png")
    base = {"id": "s1", "template_id": "T", "template_name": "T", "category": "IC", "tier": 1, "image": "i.png",
            "question": "q", "answer": "a", "evidence_modality": "image", "generation_confidence": 3,
            "auditor_decision": "ACCEPT", "difficulty": 4}
    (tmp_path / "s.jsonl").write_text(json.dumps({**base, **row}) + "\n")
    with pytest.raises(InputError, match=match) as err:
        read_samples(tmp_path / "s.jsonl")
    assert "s.jsonl:row 1" in str(err.value)


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("Five.", "5", True), ("The green one", "green one", True), ("an apple", "Apple", True),
    ("twenty-one", "21", True), ("  heavy   Thunderstorm!", "heavy thunderstorm", True), ("four", "five", False),
    ("", "", False),
])
def test_normalised_exact_match(prediction, answer, same):
    assert exact_match(prediction, answer) is same
    assert normalize("The  Red, Square.") == "red square"


def test_judge_fallback_through_a_scripted_judge():
    samples = pd.DataFrame({"id": ["a", "b", "c"], "template_name": "T", "category": "IC", "tier": 2,
                            "question": "Which colour?", "answer": ["red", "blue", "five"]})
    preds = pd.DataFrame({"id": ["a", "b"], "prediction": ["Red.", "navy"]})  # c unanswered
    yes = grade(samples, preds, "scripted:always-a")  # the judge always says Yes
    assert yes["correct"].tolist() == [True, True, False]
    assert yes.loc[1, "judge_prompt"].startswith("Question: Which colour?") and yes.loc[1, "judge_says"] == "Yes"
    assert yes.loc[0, "judge_prompt"] is None  # exact matches never reach the judge
    no = grade(samples, preds, "scripted:always-b")
    assert no["correct"].tolist() == [True, False, False]
    assert grade(samples, preds)["correct"].tolist() == [True, False, False]


def test_audit_composition_cli(tmp_path, capsys):
    out = build_composition_dataset(tmp_path / "ds", n_synthetic=12)
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id", "answer"])
    runs = []
    for k, wrong in enumerate((0, 2)):
        rows = [{"id": i, "prediction": a if j >= wrong else "no idea"}
                for j, (i, a) in enumerate(zip(samples["id"], samples["answer"], strict=True))]
        path = tmp_path / f"run{k}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        runs.append(str(path))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *runs, "--out",
                 str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    n = len(samples)
    assert result["accuracy"]["overall"]["mean"] == pytest.approx((100 + 100 * (n - 2) / n) / 2)
    assert result["accuracy"]["overall"]["runs"] == 2 and result["accuracy"]["overall"]["sd"] > 0
    assert set(result["accuracy"]["by_category"]) <= {"IC", "CC"}
    assert (tmp_path / "rep" / "template_accuracy.png").stat().st_size > 1000
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "nope", "prediction": "x"}) + "\n")
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(bad), "--out",
                 str(tmp_path / "r2")]) == 2
    assert "not a sample of the dataset" in capsys.readouterr().err
