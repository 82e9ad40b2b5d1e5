"""Composition samples: validation, bucket selection with template diversity, ablations, grading and the audit."""

import json

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from media_clips import noise_audio, write_clip
from PIL import Image

from omniaudit.answer_match import exact_match, normalize
from omniaudit.cli import main
from omniaudit.data_builders.composition import bucket, build_composition_dataset, read_samples, select
from omniaudit.errors import InputError
from omniaudit.evaluation.composition.grading import grade


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


def _wrong(answer: str, vocabulary) -> str:
    """A wrong answer the audit's readers read (a count beside the gold count, another colour of the template's
    vocabulary): one they cannot read ("no idea") is ungraded, neither right nor wrong."""
    gold = normalize(answer)
    return str(int(gold) + 1) if gold.isdigit() else next(v for v in vocabulary if normalize(v) != gold)


def test_audit_composition_cli(tmp_path, capsys):
    out = build_composition_dataset(tmp_path / "ds", n_synthetic=12)
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id", "answer", "answer_vocabulary"])
    runs = []
    for k, wrong in enumerate((0, 2)):
        rows = [{"id": i, "prediction": a if j >= wrong else _wrong(a, v)}
                for j, (i, a, v) in enumerate(samples.itertuples(False))]
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


@pytest.mark.parametrize(("full", "ablated", "mode"), [
    ("four", {"text_only": "Four.", "mute_audio": "three", "drop_image": "two"}, "text_dominance"),
    ("four", {"text_only": "no idea", "mute_audio": "three", "drop_image": "four"}, "audio_dominance"),
    ("four", {"text_only": "no idea", "mute_audio": "four", "drop_image": "two"}, "image_dominance"),
    ("four", {"text_only": "no idea", "mute_audio": "three", "drop_image": "two"}, "incomplete_fusion"),
    ("four", {"text_only": "no idea", "mute_audio": "four", "drop_image": "four"}, "incomplete_fusion"),
])
def test_failure_mode_classification(full, ablated, mode):
    from omniaudit.evaluation.composition.failure_modes import classify

    assert classify(full, ablated) == mode


def test_failure_modes_from_a_run_with_ablation_answers(tmp_path):
    out = build_composition_dataset(tmp_path / "ds", n_synthetic=12)
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id", "answer", "answer_vocabulary"])
    ablations = pd.read_parquet(next((out / "ablations").glob("*.parquet")), columns=["id", "sample_id", "ablation"])
    # a model that trusts the speech: always wrong on the full input ("seven", or a wrong colour), the gold answer
    # without the audio
    wrong = {i: "seven" if normalize(a).isdigit() else _wrong(a, v) for i, a, v in samples.itertuples(False)}
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    rows = [{"id": i, "prediction": wrong[i]} for i in samples["id"]]
    rows += [{"id": r.id, "prediction": gold[r.sample_id] if r.ablation in ("mute_audio", "text_only")
              else wrong[r.sample_id]} for r in ablations.itertuples()]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(path), "--out",
                 str(tmp_path / "rep")]) == 0
    fm = json.loads((tmp_path / "rep" / "audit.json").read_text())["failure_modes"]
    wrong = (samples["answer"] != "seven").sum()
    assert fm["overall"]["n_failures"] == wrong and fm["overall"]["rates"] == {"audio_dominance": 1.0}
    assert "Failure modes" in (tmp_path / "rep" / "report.md").read_text()


def test_entropy_of_a_uniform_split_is_log2_3_and_of_a_point_mass_is_0():
    from omniaudit.evaluation.composition.attention import entropy, mid_layer_mean

    assert entropy(np.full(3, 1 / 3)) == pytest.approx(np.log2(3))
    assert entropy(np.array([1.0, 0.0, 0.0])) == 0.0
    assert mid_layer_mean(np.array([9.0, 1.0, 2.0, 3.0, 9.0]), (0.25, 0.75)) == 2.0


def test_entropy_gap_bootstrap_and_pooling():
    from omniaudit.evaluation.composition.attention import entropy_gap, pooled_gap

    rng = np.random.default_rng(0)
    h = np.concatenate([rng.normal(1.4, 0.05, 40), rng.normal(1.2, 0.05, 40)])
    ok = np.array([True] * 40 + [False] * 40)
    gap = entropy_gap(h, ok, 500, 0)
    assert gap["value"] == pytest.approx(h[:40].mean() - h[40:].mean())
    assert 0 < gap["ci"][0] < gap["value"] < gap["ci"][1]
    pooled = pooled_gap({"m1": (h, ok), "m2": (h * 10 + 3, ok)}, 500, 0)  # scale-free after z-normalisation
    assert pooled["value"] == pytest.approx(entropy_gap((h - h.mean()) / h.std(ddof=1), ok)["value"])
    assert entropy_gap(h, np.ones(80, bool))["value"] is None


def test_attention_probe_on_the_tiny_omni_model(tmp_path, tiny_models):
    from omniaudit.evaluation.composition.attention import AttentionProbe, ProbeConfig, span_masks
    from omniaudit.tiny_models import tiny_omni

    model = tiny_omni(tmp_path / "omni")
    out = build_composition_dataset(tmp_path / "ds", n_synthetic=6)
    row = pd.read_parquet(next((out / "samples").glob("*.parquet"))).iloc[0]
    with pytest.raises(InputError, match=r"has 2 layer\(s\) at relative depths \[0.0, 1.0\]: none lies in the depth"):
        AttentionProbe(str(model))  # the default 0.25-0.75 holds no layer of a 2-layer model: refused, no fallback
    probe = AttentionProbe(str(model), ProbeConfig(depth_range=(0.0, 1.0)))
    result = probe.sample(row["id"], row["prompt"], row["image"]["bytes"], row["audio"]["bytes"], row["system"])
    masses = result["masses"]
    spans = masses["text"] + masses["audio"] + masses["image"]
    np.testing.assert_allclose(spans, masses["total"], rtol=1e-5)  # the spans partition the row
    np.testing.assert_allclose(masses["total"], 1.0, rtol=1e-4)  # an attention row sums to 1
    assert result["alpha"].shape == (2, 3) and 0 < result["h_mid"] <= np.log2(3)
    assert result["h_mid"] == pytest.approx(result["entropy"].mean())  # both layers lie in 0-1
    assert result["modalities"] == "text+audio+image"
    from transformers import AutoTokenizer

    text_only = AutoTokenizer.from_pretrained(tiny_models["text"])
    text_only.image_token = None
    import torch

    with pytest.raises(InputError, match="no placeholder token for image"):
        span_masks(torch.tensor([[1, 2]]), text_only, ["image"], "text-model")


def test_audit_composition_with_attention_scores_each_model_by_its_own_answers(tmp_path):
    import os

    from omniaudit.evaluation.composition.attention import AttentionProbe, ProbeConfig
    from omniaudit.tiny_models import tiny_omni

    model = tiny_omni(tmp_path / "omni")
    other = tmp_path / "omni2"
    os.symlink(model, other)  # same weights under a second name: same entropies, different answers
    out = build_composition_dataset(tmp_path / "ds_attention", n_synthetic=8)
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet")))
    right = {"a": [k % 2 == 1 for k in range(len(samples))], "b": [k % 3 == 0 for k in range(len(samples))]}
    paths = {}
    for name, ok in right.items():
        paths[name] = tmp_path / f"run_{name}.jsonl"
        paths[name].write_text("".join(json.dumps({"id": i, "prediction": a if good else "no idea"}) + "\n"
                                       for i, a, good in zip(samples["id"], samples["answer"], ok, strict=True)))
    # model: bare, so scored by --predictions (run a); other: by its own run b
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(paths["a"]), "--attention",
                 str(model), f"{other}={paths['b']}", "--depth-range", "0", "1", "--out", str(tmp_path / "rep")]) == 0
    gap = json.loads((tmp_path / "rep" / "audit.json").read_text())["entropy_gap"]
    probe = AttentionProbe(str(model), ProbeConfig(depth_range=(0.0, 1.0)))
    # the probe reads the graded item's own texts (system + prompt), as the model was asked
    h = np.array([probe.sample(r.id, r.prompt, r.image["bytes"], r.audio["bytes"], r.system)["h_mid"]
                  for r in samples.itertuples()])
    for name, key in (("a", str(model)), ("b", str(other))):
        ok = np.array(right[name])
        overall = gap["models"][key]["overall"]
        assert (overall["n_correct"], overall["n_incorrect"]) == (ok.sum(), (~ok).sum())
        assert overall["value"] == pytest.approx(h[ok].mean() - h[~ok].mean(), abs=1e-9)
        assert gap["models"][key]["runs"] == [paths[name].name]  # named, never by where it lives
    z = (h - h.mean()) / h.std(ddof=1)
    pooled = np.concatenate([z[right["a"]], z[right["b"]]]).mean() - np.concatenate(
        [z[~np.array(right["a"])], z[~np.array(right["b"])]]).mean()
    assert gap["pooled_z"]["value"] == pytest.approx(pooled, abs=1e-9)
    assert (tmp_path / "rep" / "entropy_gap.png").exists()
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(paths["a"]), "--attention",
                 str(model), str(other), "--out", str(tmp_path / "rep2")]) == 2  # two models, one set of answers


def test_scripted_judges_answer_samples_and_ablations(tmp_path):
    from omniaudit.runners import run_judge

    out = build_composition_dataset(tmp_path / "ds", n_synthetic=12)
    oracle = tmp_path / "oracle.jsonl"
    run_judge(out, "samples", "scripted:oracle", oracle)
    runs = [str(oracle)]
    for seed in (1, 2):
        path = tmp_path / f"random{seed}.jsonl"
        run_judge(out, "samples", "scripted:random", path, seed=seed)
        run_judge(out, "ablations", "scripted:random", tmp_path / f"abl{seed}.jsonl", seed=seed)
        path.write_text(path.read_text() + (tmp_path / f"abl{seed}.jsonl").read_text())
        runs.append(str(path))
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(oracle), "--out",
                 str(tmp_path / "o")]) == 0
    assert json.loads((tmp_path / "o" / "audit.json").read_text())["accuracy"]["overall"]["mean"] == 100.0
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", *runs[1:], "--out",
                 str(tmp_path / "r")]) == 0
    result = json.loads((tmp_path / "r" / "audit.json").read_text())
    # a random run answers the gold or "I don't know.", which no reader reads: ungraded, neither right nor wrong
    # (before: a wrong answer, and its refusal under every ablation a text dominance)
    assert result["accuracy"]["overall"]["mean"] == 100.0 and result["grading"]["samples"]["n_ungraded"] > 0
    assert result["failure_modes"]["overall"]["n_failures"] == 0


def test_a_template_id_with_two_names_is_refused(tmp_path):
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "i.png")
    base = {"template_id": "T", "category": "IC", "tier": 1, "image": "i.png", "question": "q", "answer": "a",
            "evidence_modality": "image", "generation_confidence": 3, "auditor_decision": "ACCEPT", "difficulty": 4}
    rows = [{**base, "id": "a", "template_name": "Count"}, {**base, "id": "b", "template_name": "Colour"}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="more than one template_name"):
        read_samples(tmp_path / "s.jsonl")


def test_model_runners_refuse_media_they_cannot_send(tmp_path, tiny_models):
    from omniaudit.runners import run_judge

    out = build_composition_dataset(tmp_path / "ds", n_synthetic=6)
    with pytest.raises(InputError, match="cannot send yet|takes only audio"):
        run_judge(out, "samples", f"hf:{tiny_models['audio']}", tmp_path / "p.jsonl")


def test_review_fixes_selection_difficulty_and_modes(tmp_path):
    from omniaudit.evaluation.composition.failure_modes import decompose

    many = pd.concat([fake_samples(1, 1).assign(template_id=f"T{k}", template_name=f"T{k}", id=f"s{k}")
                      for k in range(30)], ignore_index=True)
    picked = [set(select(many, target=25, seed=s)["template_id"]) for s in range(4)]
    assert len(set.union(*picked)) == 30  # no template is always left out: the order is seeded
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "i.png")
    base = {"id": "s1", "template_id": "T", "template_name": "T", "category": "IC", "tier": 1, "image": "i.png",
            "question": "q", "answer": "a", "evidence_modality": "image", "generation_confidence": 3,
            "auditor_decision": "ACCEPT", "difficulty": 2.7}
    (tmp_path / "s.jsonl").write_text(json.dumps(base) + "\n")
    with pytest.raises(InputError, match="integer difficulty"):
        read_samples(tmp_path / "s.jsonl")
    graded = pd.DataFrame({"id": ["a", "b", "c"], "template_name": "T", "prediction": ["", "four", "four"],
                           "correct": False})
    answers = pd.DataFrame({"sample_id": ["b", "c", "c"], "ablation": ["text_only", "text_only", "mute_audio"],
                            "prediction": ["x", "x", "three"]})
    expected = {k: {"text_only", "mute_audio"} for k in "abc"}
    modes = {s["id"]: s["mode"] for s in decompose(graded, answers, expected)["samples"]}
    assert modes == {"a": "unanswered", "b": "unclassified", "c": "audio_dominance"}


def test_video_with_its_own_audio_gets_a_muted_copy(tmp_path):
    from omniaudit.data_builders.interventions import media

    write_clip(tmp_path / "v.mp4", seconds=2.0, audio=noise_audio(2.0, 3))
    row = {"id": "v1", "template_id": "T", "template_name": "T", "category": "CC", "tier": 1, "video": "v.mp4",
           "question": "q", "answer": "a", "evidence_modality": "audio", "generation_confidence": 5,
           "auditor_decision": "ACCEPT", "difficulty": 6}
    (tmp_path / "s.jsonl").write_text(json.dumps(row) + "\n")
    out = build_composition_dataset(tmp_path / "ds", tmp_path / "s.jsonl")
    table = pd.read_parquet(next((out / "ablations").glob("*.parquet")))
    assert set(table["ablation"]) == {"mute_audio", "blank_video", "text_only"}
    (tmp_path / "m.mp4").write_bytes(table[table["ablation"] == "mute_audio"].iloc[0]["video"]["bytes"])
    audio, _ = media.timeline_audio(media.probe(tmp_path / "m.mp4"))
    assert np.abs(audio).max() == 0 and media.video_packets(tmp_path / "m.mp4") == media.video_packets(
        tmp_path / "v.mp4")


def test_a_run_must_answer_every_sample(tmp_path, capsys):
    out = build_composition_dataset(tmp_path / "ds", n_synthetic=6)
    first = pd.read_parquet(next((out / "samples").glob("*.parquet")), columns=["id"])["id"].iloc[0]
    path = tmp_path / "partial.jsonl"
    path.write_text(json.dumps({"id": first, "prediction": "x"}) + "\n")
    assert main(["audit", "composition", "--dataset", str(out), "--predictions", str(path), "--out",
                 str(tmp_path / "r")]) == 2
    assert "have no prediction" in capsys.readouterr().err


BASE = {"template_id": "T", "template_name": "T", "category": "IC", "question": "q", "answer": "a",
        "evidence_modality": "image", "generation_confidence": 3, "auditor_decision": "ACCEPT", "difficulty": 4}


def media_folder(folder):
    """A picture, a WAV, a 1 s video with its own soundtrack and one without, written into ``folder``."""
    Image.fromarray(np.full((8, 8, 3), 90, np.uint8)).save(folder / "i.png")
    sf.write(folder / "a.wav", noise_audio(0.5, 7)[0], 16000)
    write_clip(folder / "v.mp4", seconds=1.0, audio=noise_audio(1.0, 3))
    write_clip(folder / "mute.mp4", seconds=1.0, with_audio=False)
    return folder


def write_samples(path, rows):
    if path.suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)  # absent media: empty cells
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


MIXED = [  # id, media, tier: every mix of modalities a C3PO tier file holds
    ("ia", {"image": "i.png", "audio": "a.wav"}, 2, {"mute_audio", "drop_image", "text_only"}),
    ("i", {"image": "i.png"}, 1, {"drop_image", "text_only"}),
    ("v", {"video": "v.mp4"}, 2, {"mute_audio", "blank_video", "text_only"}),  # the video's soundtrack counts
    ("a", {"audio": "a.wav"}, 1, {"mute_audio", "text_only"}),
    ("vm", {"video": "mute.mp4", "image": "i.png"}, 2, {"blank_video", "drop_image", "text_only"}),
]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_mixed_modality_samples_build(tmp_path, suffix):
    media_folder(tmp_path)
    rows = []
    for k, (sid, media, tier, _) in enumerate(MIXED):
        row = {**BASE, "id": sid, "tier": tier, "difficulty": 2 + 2 * k, "video": None, "audio": None, "image": None}
        rows.append(row | media if suffix == ".csv" or k % 2 else {**BASE, "id": sid, "tier": tier,
                                                                   "difficulty": 2 + 2 * k, **media})
    out = build_composition_dataset(tmp_path / "ds", write_samples(tmp_path / f"s{suffix}", rows))
    samples = pd.read_parquet(next((out / "samples").glob("*.parquet"))).set_index("id")
    ablations = pd.read_parquet(next((out / "ablations").glob("*.parquet")))
    for sid, media, _, expected in MIXED:
        assert {m for m in ("video", "audio", "image") if samples.loc[sid, m] is not None} == set(media)
        assert set(ablations.loc[ablations["sample_id"] == sid, "ablation"]) == expected
    assert samples.loc["ia", "image"]["bytes"] == (tmp_path / "i.png").read_bytes()


def test_mute_audio_silences_the_audio_file_and_the_videos_own_soundtrack(tmp_path):
    from omniaudit.data_builders.interventions import media

    media_folder(tmp_path)
    row = {**BASE, "id": "va", "tier": 3, "video": "v.mp4", "audio": "a.wav", "category": "CC"}
    out = build_composition_dataset(tmp_path / "ds", write_samples(tmp_path / "s.jsonl", [row]))
    table = pd.read_parquet(next((out / "ablations").glob("*.parquet"))).set_index("ablation")
    assert set(table.index) == {"mute_audio", "blank_video", "text_only"}
    muted = table.loc["mute_audio"]
    (tmp_path / "m.mp4").write_bytes(muted["video"]["bytes"])
    soundtrack, _ = media.timeline_audio(media.probe(tmp_path / "m.mp4"))  # decoded from the ablated video
    original, _ = media.timeline_audio(media.probe(tmp_path / "v.mp4"))
    assert soundtrack.size > 0 and np.abs(soundtrack).max() == 0 and np.abs(original).max() > 0.1
    assert media.video_packets(tmp_path / "m.mp4") == media.video_packets(tmp_path / "v.mp4")  # pictures kept
    audio, _ = sf.read(__import__("io").BytesIO(muted["audio"]["bytes"]))
    assert audio.size > 0 and np.abs(audio).max() == 0
    blank = table.loc["blank_video"]  # the other ablation keeps both audios
    assert blank["audio"]["bytes"] == (tmp_path / "a.wav").read_bytes()


@pytest.mark.parametrize(("column", "file", "match"), [
    ("image", "bad.png", "not a readable image"),
    ("image", "a.wav", "not a readable image"),
    ("audio", "i.png", "not a readable audio file"),
    ("audio", "v.mp4", "not a readable audio file"),
    ("audio", "empty.wav", "holds no samples"),
    ("video", "i.png", "unusable video"),
    ("video", "a.wav", "unusable video"),
    ("video", "broken.mp4", "unusable video"),
])
def test_corrupt_or_wrong_type_media_name_row_column_and_file(tmp_path, column, file, match):
    media_folder(tmp_path)
    (tmp_path / "bad.png").write_bytes(b"not a picture")
    sf.write(tmp_path / "empty.wav", np.zeros(0, np.float32), 16000)
    (tmp_path / "broken.mp4").write_bytes((tmp_path / "v.mp4").read_bytes()[:300])
    rows = [{**BASE, "id": "ok", "tier": 1, "image": "i.png"},
            {**BASE, "id": "bad", "tier": 1, **({"image": "i.png"} if column != "image" else {}), column: file}]
    with pytest.raises(InputError, match=match) as err:
        read_samples(write_samples(tmp_path / "s.jsonl", rows))
    assert "s.jsonl:row 2" in str(err.value) and f"column '{column}'" in str(err.value) and file in str(err.value)


def test_rejected_samples_media_are_not_decoded(tmp_path):
    media_folder(tmp_path)
    (tmp_path / "bad.png").write_bytes(b"not a picture")
    rows = [{**BASE, "id": "ok", "tier": 1, "image": "i.png"},
            {**BASE, "id": "rejected", "tier": 2, "image": "bad.png", "auditor_decision": "REJECT"},
            {**BASE, "id": "ungradable", "tier": 1, "image": "bad.png", "difficulty": -1}]
    out = build_composition_dataset(tmp_path / "ds", write_samples(tmp_path / "s.jsonl", rows))
    assert pd.read_parquet(next((out / "samples").glob("*.parquet")))["id"].tolist() == ["ok"]


@pytest.mark.parametrize(("rows", "match", "where"), [
    ([{"tier": 2}], "tier 2 counts 2 grounded modalities, but the row's media give 1 \\(image\\)", "tier"),
    ([{"tier": 3, "video": "v.mp4"}], "give 3", None),  # accepted: image + video + its soundtrack
    ([{"tier": 3, "video": "mute.mp4"}], "media give 2 \\(video, image\\)", "tier"),
    ([{"tier": 0}], "expected a number in \\[1, 4\\]", "tier"),
    ([{"tier": 1.5}], "expected an integer", "tier"),
    ([{"generation_confidence": 3.5}], "expected an integer", "generation_confidence"),
    ([{"template_id": "D_T1_001", "category": "CC"}], "D_T<k>_<n>", "category"),
    ([{"template_name": "AcousticSceneMismatch"}], "AcousticSceneMismatch is a CC template", "category"),
    ([{}, {"template_id": "T2"}], "template_name is used with more than one template_id", "template_id"),
    ([{"template_name": "CountRed"}, {"template_id": "T2", "template_name": "count red"}], "only in case",
     "template_name"),
    ([{}, {"category": "CC"}], "both categories", "category"),
])
def test_tier_and_template_mismatches_name_the_row(tmp_path, rows, match, where):
    media_folder(tmp_path)
    rows = [{**BASE, "id": f"s{k}", "tier": 1, "image": "i.png", **r} for k, r in enumerate(rows)]
    path = write_samples(tmp_path / "s.jsonl", rows)
    if where is None:
        assert read_samples(path)["video_has_audio"].tolist() == [True]
        return
    with pytest.raises(InputError, match=match) as err:
        read_samples(path)
    assert "s.jsonl:row 1" in str(err.value) and f"column '{where}'" in str(err.value)


def test_a_templates_table_refuses_unknown_templates(tmp_path, capsys):
    media_folder(tmp_path)
    rows = [{**BASE, "id": "s1", "tier": 1, "image": "i.png", "template_id": "C_T1_001",
             "template_name": "DisclaimedEvidence", "category": "CC"},
            {**BASE, "id": "s2", "tier": 1, "image": "i.png", "template_id": "C_T1_009",
             "template_name": "DisclaimedEvidense", "category": "CC"}]
    samples = write_samples(tmp_path / "s.jsonl", rows)
    table = tmp_path / "templates.csv"
    table.write_text("template_id,template_name,category\nC_T1_001,DisclaimedEvidence,CC\n")
    assert len(read_samples(samples)) == 2  # without a table, a consistent unknown template is allowed
    with pytest.raises(InputError, match="unknown template_id") as err:
        read_samples(samples, table)
    assert "s.jsonl:row 2" in str(err.value)
    assert main(["build", "composition", "--samples", str(samples), "--templates", str(table), "--out",
                 str(tmp_path / "ds")]) == 2
    assert "unknown template_id" in capsys.readouterr().err and not (tmp_path / "ds").exists()
    table.write_text("template_id,template_name\nC_T1_001,DisclaimedEvidence\nC_T1_009,Disclaimed\n")
    with pytest.raises(InputError, match="differs from the templates table's name"):
        read_samples(samples, table)


def test_entropy_gaps_pair_each_model_with_its_own_correctness():
    from omniaudit.evaluation.composition.attention import entropy_gaps

    h = np.array([1.5, 1.3, 0.9, 0.7, 1.1, 1.0])
    category = np.array(["IC", "IC", "IC", "CC", "CC", "CC"])
    ok_a = np.array([1, 1, 0, 0, 1, 0], bool)
    gaps = entropy_gaps({"a": h, "b": 2 * h + 1}, {"a": ok_a, "b": ~ok_a}, category, 200, 0)
    # by hand: a: (1.5 + 1.3 + 1.1) / 3 - (0.9 + 0.7 + 1.0) / 3; b: twice the opposite, on its own scale
    assert gaps["models"]["a"]["overall"]["value"] == pytest.approx(1.3 - 2.6 / 3)
    assert gaps["models"]["b"]["overall"]["value"] == pytest.approx(-2 * (1.3 - 2.6 / 3))
    assert gaps["models"]["a"]["by_category"]["IC"]["value"] == pytest.approx(1.4 - 0.9)
    assert gaps["models"]["a"]["by_category"]["CC"]["value"] == pytest.approx(1.1 - 0.85)
    assert gaps["models"]["b"]["by_category"]["IC"]["value"] == pytest.approx(2 * (0.9 - 1.4))
    assert gaps["models"]["b"]["by_category"]["CC"]["value"] == pytest.approx(2 * (0.85 - 1.1))
    # same z-scores, opposite correctness: pooled, correct and incorrect samples are the same six z's
    assert gaps["pooled_z"]["value"] == pytest.approx(0.0, abs=1e-12)
    assert gaps["models"]["b"]["fraction_correct"] == 0.5
    shared = entropy_gaps({"a": h, "b": 2 * h + 1}, {"a": ok_a, "b": ok_a}, category, 200, 0)
    assert shared["pooled_z"]["value"] == pytest.approx(gaps["models"]["a"]["overall"]["value"] / h.std(ddof=1))


def test_attention_model_specs(tmp_path):
    from omniaudit.evaluation.composition.audit import attention_runs

    (tmp_path / "lr=1e-5").mkdir()
    for name in ("run=1.jsonl", "b.jsonl", "p.jsonl"):
        (tmp_path / name).write_text("")
    run1, b, p = tmp_path / "run=1.jsonl", tmp_path / "b.jsonl", tmp_path / "p.jsonl"
    model = tmp_path / "lr=1e-5"
    assert attention_runs([f"{model}={run1}", f"{model}={b}", "m2"], [p]) == {str(model): [run1, b], "m2": [p]}
    assert attention_runs([str(model)], [p]) == {str(model): [p]}  # an existing path with "=" is a bare model
    assert attention_runs({"m": b}, [p]) == {"m": [b]}
    with pytest.raises(InputError, match="same --predictions runs"):
        attention_runs(["m1", "m2"], [p])
    with pytest.raises(InputError, match="either as MODEL=PREDICTIONS or bare"):
        attention_runs(["m1", f"m1={b}"], [p])
