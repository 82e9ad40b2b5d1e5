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


def _build(tmp_path, media, rows, *extra):
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps(rows))
    return gen, main(["build", "composition", "--from-generator", str(gen), "--media", str(media), *extra, "--out",
                      str(tmp_path / "ds")])


def test_a_build_error_names_the_generator_row_not_a_temporary_file(tmp_path, media, capsys):
    rows = samples()
    rows[1]["tier"] = 4  # an image and a speech: two grounded modalities, found by the build's media check
    gen, rc = _build(tmp_path, media, rows)
    err = capsys.readouterr().err
    assert rc == 2 and f"{gen}:row 2: column 'tier': tier 4 counts 4 grounded modalities" in err
    assert "omniaudit-generator-" not in err
    for field, value in (("tier", 9), ("tier", "two"), ("tier", True), ("category", "xyz"), ("category", 1)):
        rows = samples()
        rows[2][field] = value
        with pytest.raises(InputError, match=f"expected {field}") as exc:
            import_generator(_build(tmp_path, media, rows)[0], media)
        assert (exc.value.file, exc.value.row, exc.value.column) == (tmp_path / "gen.json", 3, field)


@pytest.mark.parametrize(("field", "value"), [
    ("generated_components.text.content", {"q": "x"}), ("generated_components.text.content", 5),
    ("ground_truth.answer", ["a", "b"]), ("ground_truth.answer", 2), ("sample_id", {"a": 1}),
    ("generated_components.audio", "Count the red ones."), ("generated_components.image", ["a caption"]),
])
def test_a_field_of_the_wrong_type_is_refused_not_turned_into_text(tmp_path, media, field, value):
    rows = samples()
    target = rows[1]
    *parents, key = field.split(".")
    for k in parents:
        target = target[k]
    target[key] = value
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps(rows))
    with pytest.raises(InputError, match="expected") as exc:
        import_generator(gen, media)
    assert (exc.value.row, exc.value.column, exc.value.value) == (2, field, value)


def test_imported_never_overwrites_an_input_or_goes_inside_out(tmp_path, media, capsys):
    gen = tmp_path / "gen.jsonl"
    gen.write_text("".join(json.dumps(s) + "\n" for s in samples(auditor=False)))
    answers = tmp_path / "auditor.jsonl"
    answers.write_text("".join(json.dumps({"sample_id": s["sample_id"], "decision": "ACCEPT", "difficulty_score": 3})
                               + "\n" for s in samples()))
    before = {p: p.read_text() for p in (gen, answers)}
    for imported, says in ((gen, "the generator file"), (answers, "the auditor results"),
                           (tmp_path / "ds" / "imported.jsonl", "inside --out")):
        assert main(["build", "composition", "--from-generator", str(gen), "--media", str(media),
                     "--auditor-results", str(answers), "--imported", str(imported), "--out",
                     str(tmp_path / "ds")]) == 2
        assert says in capsys.readouterr().err
    assert {p: p.read_text() for p in (gen, answers)} == before and not (tmp_path / "ds").exists()


def test_auditor_answers_are_refused_when_duplicated_unknown_or_malformed(tmp_path, media):
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps(samples(auditor=False)))
    ids = [s["sample_id"] for s in samples()]
    answers = tmp_path / "auditor.jsonl"

    def refused(entries, match, row):
        answers.write_text("".join(json.dumps(e) + "\n" for e in entries))
        with pytest.raises(InputError, match=match) as exc:
            import_generator(gen, media, answers)
        assert (exc.value.file, exc.value.row) == (answers, row)

    ok = [{"sample_id": i, "decision": "ACCEPT", "difficulty_score": 3} for i in ids]
    refused([*ok, {**ok[0], "decision": "REJECT"}], "duplicate sample_id \\(also at row 1\\)", 5)
    refused([*ok, {**ok[0], "sample_id": "D_T2_001_9"}], "does not have", 5)
    # the malformed answer is on row 1 of the auditor file (the generator's row 4): its own file and row are named
    refused([{**ok[3], "difficulty_score": 99}, *ok[:3]], "not the paper's auditor JSON", 1)
    rows = samples(auditor=False)
    rows[0].update(auditor_decision="ACCEPTED", difficulty=99)  # a top-level pair that does not parse
    gen.write_text(json.dumps(rows))
    with pytest.raises(InputError, match="auditor_decision / difficulty pair") as exc:
        import_generator(gen, media)
    assert (exc.value.row, exc.value.column) == (1, "auditor_decision")
    rows[0].update(auditor_decision="accept", difficulty=7)
    gen.write_text(json.dumps(rows))
    assert import_generator(gen, media)[0]["difficulty"] == 7


@pytest.mark.parametrize(("action", "removed"), [
    ("Trim to 10s, remove watermark, keep original audio", False), ("original audio retained", False),
    ("Mute original audio", True), ("Remove the original audio track", True), ("Crop; the audio is removed", True),
    ("Retain original audio", False), ("Drop the first 2 seconds", None), ("Crop", None),
])
def test_processing_action_mutes_only_when_it_acts_on_the_audio(action, removed):
    from omniaudit.data_builders.composition.generator import audio_removed

    assert audio_removed(action) is removed


def test_a_kept_soundtrack_is_checked_as_kept(tmp_path, media):
    rows = samples()
    rows[3]["base_modality"]["processing_action"] = "Trim to 10s, remove watermark, keep original audio"
    assert _build(tmp_path, media, rows)[1] == 0  # clip.mp4 has its soundtrack, as the action says
    write_clip(media / "clip.mp4", seconds=1.0, with_audio=False)
    rows[3]["base_modality"]["processing_action"] = "Crop, original audio retained"
    gen = tmp_path / "gen.json"
    gen.write_text(json.dumps(rows))
    with pytest.raises(InputError, match="has no audio stream"):
        import_generator(gen, media)
