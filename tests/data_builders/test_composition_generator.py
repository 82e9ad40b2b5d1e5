"""Importing C3PO's generator JSON (the paper's appendix format) into the samples schema; the user makes the media."""

import json

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from media_clips import noise_audio, write_clip
from PIL import Image

from omniaudit.cli import main
from omniaudit.data_builders.composition.generator import import_generator
from omniaudit.errors import InputError


def generated(sid, template_id, name, base_type, source, answer, *, audio=True, image=None, action="Crop",
              score=None, rationale="Fits well. #### 4 ####", auditor=None):
    obj = {"sample_id": sid, "template_selection_rationale": rationale, "template_id": template_id,
           "template_name": name,
           "base_modality": {"type": base_type, "source_file": source, "content_summary": "s",
                             "processing_action": action},
           "generated_components": {
               "audio": {"transcript": "Count the red ones.", "voice_style_prompt": "calm male voice",
                         "logic_check": "x"} if audio else None,
               "text": {"role": "user_query", "content": "How many are there?", "reasoning_required": "r"},
               "image": image},
           "ground_truth": {"answer": answer, "evidence_modality": "audio_visual_fusion", "timestamp_evidence": None},
           "self_audit": {"mute_test_passed": True, "blind_test_passed": True, "prior_test_passed": True,
                          "ambiguity_check_passed": True, "notes": "ok"}}
    if score is not None:
        obj["generation_confidence_score"] = score
    if auditor is not None:
        obj["auditor"] = auditor
    return obj


@pytest.fixture
def media(tmp_path):
    folder = tmp_path / "media"
    folder.mkdir()
    for k in range(3):
        Image.fromarray(np.full((16, 16, 3), 60 * k, np.uint8)).save(folder / f"base{k}.png")
        sf.write(folder / f"D_T2_001_{k}.wav", noise_audio(0.4, k)[0], 16000)
    write_clip(folder / "clip.mp4", seconds=1.0, audio=noise_audio(1.0, 3))
    Image.fromarray(np.full((16, 16, 3), 200, np.uint8)).save(folder / "C_T3_002_0_image.png")
    return folder


def samples(auditor=True):
    accept = {"template_id": "x", "decision": "ACCEPT", "failure_pillar": None, "rationale": "ok",
              "difficulty_score": 6} if auditor else None
    rows = [generated(f"D_T2_001_{k}", "D_T2_001", "SpokenSelectorCount", "image", f"base{k}.png", str(k + 2),
                      auditor=accept) for k in range(3)]
    rows.append(generated("C_T3_002_0", "C_T3_002", "AcousticSceneMismatch", "video", "clip.mp4", "rain",
                          image="A rainy street", action="Retain original audio", audio=False, score="5",
                          auditor=accept))
    return rows


def test_generator_json_builds_a_dataset_from_the_cli(tmp_path, media):
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps(samples()))
    assert main(["build", "composition", "--from-generator", str(gen), "--media", str(media), "--swap", "audio",
                 "--out", str(tmp_path / "ds")]) == 0
    built = pd.read_parquet(next((tmp_path / "ds" / "samples").glob("*.parquet"))).set_index("id")
    assert set(built.index) == {"D_T2_001_0", "D_T2_001_1", "D_T2_001_2", "C_T3_002_0"}
    row = built.loc["D_T2_001_1"]
    assert (row["category"], row["tier"], row["answer"], row["question"]) == ("IC", 2, "3", "How many are there?")
    assert row["generation_confidence"] == 4 and row["difficulty"] == 6  # the rationale's #### 4 #### marker
    assert row["audio"]["bytes"] == (media / "D_T2_001_1.wav").read_bytes()
    cc = built.loc["C_T3_002_0"]
    assert (cc["category"], cc["tier"], cc["generation_confidence"]) == ("CC", 3, 5)  # video + soundtrack + image
    assert cc["image"]["bytes"] == (media / "C_T3_002_0_image.png").read_bytes() and cc["video_audio"]
    ablations = pd.read_parquet(next((tmp_path / "ds" / "ablations").glob("*.parquet")), columns=["ablation"])
    assert (ablations["ablation"] == "swap_audio").sum() == 3


def test_imported_samples_without_auditor_go_to_the_auditor(tmp_path, media, capsys):
    gen = tmp_path / "gen.jsonl"
    gen.write_text("".join(json.dumps(s) + "\n" for s in samples(auditor=False)))
    assert main(["build", "composition", "--from-generator", str(gen), "--media", str(media), "--out",
                 str(tmp_path / "ds")]) == 2
    assert "no auditor decision" in capsys.readouterr().err
    imported = tmp_path / "imported.jsonl"
    assert main(["build", "composition", "--from-generator", str(gen), "--media", str(media), "--imported",
                 str(imported), "--out", str(tmp_path / "ds")]) == 0
    assert "composition-auditor" in capsys.readouterr().out and not (tmp_path / "ds").exists()
    rows = [json.loads(line) for line in imported.read_text().splitlines()]
    assert rows[0]["auditor_decision"] is None and rows[0]["transcript"] == "Count the red ones."
    assert rows[3]["image_description"] == "A rainy street" and rows[0]["audio_kind"] == "speech"
    # the auditor's answers, keyed by sample_id, complete the import
    answers = tmp_path / "auditor.jsonl"
    answers.write_text("".join(json.dumps({"sample_id": r["id"], "decision": "ACCEPT", "difficulty_score": 3})
                               + "\n" for r in rows))
    records = import_generator(gen, media, answers)
    assert {r["auditor_decision"] for r in records} == {"ACCEPT"} and {r["difficulty"] for r in records} == {3}
    # or the imported file goes through the auditor pass, then the build
    from omniaudit.data_builders.composition.auditor import audit_samples

    class Auditor:
        def answer(self, items):
            assert all("Count the red ones." in i.prompt for i in items[:3])  # the transcript reaches the auditor
            return ['{"decision": "ACCEPT", "difficulty_score": 8}'] * len(items)

    audited = audit_samples(imported, Auditor(), tmp_path / "audited.jsonl").out
    assert main(["build", "composition", "--samples", str(audited), "--out", str(tmp_path / "ds2")]) == 0
    assert json.loads((tmp_path / "ds2" / "build_info.json").read_text())["selected"] == 4


def test_missing_media_name_the_sample_field_and_step(tmp_path, media):
    gen = tmp_path / "gen.json"
    (media / "D_T2_001_2.wav").unlink()
    gen.write_text(json.dumps(samples()))
    with pytest.raises(InputError, match="Qwen3-TTS") as exc:
        import_generator(gen, media)
    assert exc.value.row == 3 and exc.value.column == "generated_components.audio"
    (media / "C_T3_002_0_image.png").unlink()
    gen.write_text(json.dumps(samples()[3:]))
    with pytest.raises(InputError, match="text-to-image") as exc:
        import_generator(gen, media)
    gen.write_text(json.dumps([generated("D_T1_9", "D_T1_9", "X", "image", "nowhere.png", "a")]))
    with pytest.raises(InputError, match="prepared base media") as exc:
        import_generator(gen, media)
    assert exc.value.column == "base_modality.source_file"


@pytest.mark.parametrize(("change", "match"), [
    (lambda o: o["base_modality"].update(processing_action="Mute original audio"), "still has a soundtrack"),
    (lambda o: o.pop("ground_truth"), "no ground_truth.answer"),
    (lambda o: o.update(template_selection_rationale="no score", generation_confidence_score=None),
     "generation_confidence_score 1-5"),
    (lambda o: o.update(template_id="T9", template_name="Unknown"), "IC\\) or counterfactual"),
    (lambda o: o.update(self_audit="passed"), "self_audit"),
])
def test_invalid_generator_json_is_refused(tmp_path, media, change, match):
    obj = samples()[3]
    change(obj)
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps(obj))  # a single object is one sample
    with pytest.raises(InputError, match=match):
        import_generator(gen, media)


def test_a_misfit_rationale_and_a_failed_self_audit_are_never_selected(tmp_path, media):
    rows = samples()
    rows[0]["template_selection_rationale"] = "#### 2 #### THIS BASE MEDIA DOES NOT FIT THE GIVEN LOGIC"
    rows[1]["self_audit"]["blind_test_passed"] = False
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps({"samples": rows}))
    assert main(["build", "composition", "--from-generator", str(gen), "--media", str(media), "--out",
                 str(tmp_path / "ds")]) == 0
    info = json.loads((tmp_path / "ds" / "build_info.json").read_text())
    assert (info["base_media_misfit"], info["self_audit_failed"], info["selected"]) == (1, 1, 2)
