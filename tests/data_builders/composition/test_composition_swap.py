"""The swap_audio / swap_image ablations: a donor of the same template, seeded, and how the audit reads them."""

import json

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from PIL import Image

from omniaudit.cli import main
from omniaudit.data_builders.composition.swap import check_swap, choose_donors
from omniaudit.errors import InputError


def test_donors_are_seeded_same_template_other_bytes_and_prefer_another_answer(tmp_path):
    rows = []
    for k in range(8):
        value = 30 * k if k < 6 else 200  # template B's two images are the same picture
        Image.fromarray(np.full((4, 4, 3), value, np.uint8)).save(tmp_path / f"{k}.png")
        rows.append({"id": f"s{k}", "template_id": "A" if k < 6 else "B", "image": str(tmp_path / f"{k}.png"),
                     "audio": None, "answer": "two" if k in (0, 1) else "2" if k == 2 else f"x{k}"})
    chosen = pd.DataFrame(rows)
    donors = choose_donors(chosen, ("image",), seed=3)
    assert donors == choose_donors(chosen.iloc[::-1].reset_index(drop=True), ("image",), seed=3)  # order-free
    template = dict(zip(chosen["id"], chosen["template_id"], strict=True))
    assert all(template[d] == template[s] and d != s for (s, _), d in donors.items())
    # s0's answer "two" = "2" (s2) = "two" (s1) after normalisation: its donor is one with another answer
    assert donors[("s0", "image")] in {"s3", "s4", "s5"}
    assert ("s6", "image") not in donors and ("s7", "image") not in donors  # template B: two identical images
    draws = {tuple(sorted(choose_donors(chosen, ("image",), seed=s).items())) for s in range(6)}
    assert len(draws) > 1  # the seed matters
    with pytest.raises(InputError, match="cannot swap video"):
        check_swap(["video"])


def test_a_modality_s_donors_do_not_depend_on_the_other_modalities_swapped(tmp_path):
    rows = []
    for k in range(8):
        sf.write(tmp_path / f"{k}.wav", np.full(80, k / 10, np.float32), 16000)
        Image.fromarray(np.full((4, 4, 3), 30 * k, np.uint8)).save(tmp_path / f"{k}.png")
        rows.append({"id": f"s{k}", "template_id": "A", "answer": str(k), "audio": str(tmp_path / f"{k}.wav"),
                     "image": str(tmp_path / f"{k}.png")})
    chosen = pd.DataFrame(rows)
    both = choose_donors(chosen, ("audio", "image"), seed=0)
    for m in ("audio", "image"):
        alone = choose_donors(chosen, (m,), seed=0)
        assert alone == {key: d for key, d in both.items() if key[1] == m} and len(alone) == 8


@pytest.fixture(scope="module")
def swapped(tmp_path_factory):
    out = tmp_path_factory.mktemp("swap") / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--swap", "image", "audio", "--out", str(out)]) == 0
    return out


def test_swap_copies_hold_the_donors_media(swapped):
    samples = pd.read_parquet(next((swapped / "samples").glob("*.parquet"))).set_index("id")
    ablations = pd.read_parquet(next((swapped / "ablations").glob("*.parquet")))
    swaps = ablations[ablations["ablation"].str.startswith("swap_")]
    assert set(swaps["ablation"]) == {"swap_audio", "swap_image"} and len(swaps) == 2 * len(samples)
    for r in swaps.itertuples():
        m, other = ("audio", "image") if r.ablation == "swap_audio" else ("image", "audio")
        donor, own = samples.loc[r.donor_id], samples.loc[r.sample_id]
        assert donor["template_id"] == own["template_id"] and r.donor_id != r.sample_id
        assert getattr(r, m)["bytes"] == donor[m]["bytes"] != own[m]["bytes"]
        assert getattr(r, other)["bytes"] == own[other]["bytes"] and r.gold == own["answer"]
    assert ablations.loc[~ablations["ablation"].str.startswith("swap_"), "donor_id"].isna().all()
    info = json.loads((swapped / "build_info.json").read_text())
    assert info["swap_without_donor"] == {"swap_audio": 0, "swap_image": 0}


def test_audit_grades_swaps_and_uses_them_to_corroborate_the_modes(swapped, tmp_path):
    from omniaudit.runners import run_judge

    files = {c: tmp_path / f"{c}.jsonl" for c in ("samples", "ablations")}
    for config, path in files.items():  # wrong while it hears its own audio, right when the audio is gone or swapped
        run_judge(swapped, config, "scripted:audio-dominant", path)
    assert main(["audit", "composition", "--dataset", str(swapped), "--predictions",
                 *[f"ad={p}" for p in files.values()], "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    n = result["n_samples"]
    assert result["failure_modes"]["overall"]["rates"] == {"audio_dominance": 1.0}
    agree = result["models"]["ad"]["swap_agreement"]
    assert agree["swap_audio"]["n_agree"] == agree["swap_audio"]["n"] == n  # swapping the audio moves each answer
    assert agree["swap_image"]["n_agree"] == agree["swap_image"]["n"] == n  # swapping the image moves none
    acc = result["ablation_accuracy"]["ad"]
    assert acc["swap_audio"]["accuracy"] == 100.0 and acc["swap_image"]["accuracy"] == 0.0
    assert set(result["models"]["ad"]["floor_check"]["clears_floor"]) == {"mute_audio", "drop_image", "text_only"}
    assert "Swaps corroborate" in (tmp_path / "rep" / "report.md").read_text()
    # a run without its swap answers is classified all the same: swaps corroborate, they are never required
    rows = [json.loads(line) for line in files["ablations"].read_text().splitlines()]
    files["ablations"].write_text("".join(json.dumps(r) + "\n" for r in rows if "/swap_" not in r["id"]))
    assert main(["audit", "composition", "--dataset", str(swapped), "--predictions",
                 *[f"ad={p}" for p in files.values()], "--partial", "--out", str(tmp_path / "rep2")]) == 0
    again = json.loads((tmp_path / "rep2" / "audit.json").read_text())
    assert again["failure_modes"]["overall"]["rates"] == {"audio_dominance": 1.0}
    assert again["models"]["ad"]["swap_agreement"] == {}
    unanswered = again["ablation_accuracy"]["ad"]["swap_audio"]  # listed, with its count, never graded
    assert (unanswered["n_copies"], unanswered["accuracy"], unanswered["n_unanswered"]) == (0, None, n)


def test_a_swap_needs_an_audio_file(tmp_path):
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "i.png")
    sf.write(tmp_path / "a.wav", np.zeros(800, np.float32), 16000)
    base = {"template_id": "T", "template_name": "T", "category": "IC", "tier": 1, "question": "q",
            "evidence_modality": "image", "generation_confidence": 3, "auditor_decision": "ACCEPT", "difficulty": 4}
    rows = [{**base, "id": "a", "image": "i.png", "answer": "x"}, {**base, "id": "b", "image": "i.png", "answer": "y"}]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["build", "composition", "--samples", str(tmp_path / "s.jsonl"), "--swap", "audio", "image",
                 "--out", str(tmp_path / "ds")]) == 0
    info = json.loads((tmp_path / "ds" / "build_info.json").read_text())
    # no audio to swap; the two images are the same file: no donor
    assert info["swap_without_donor"] == {"swap_audio": 0, "swap_image": 2}
    assert "swap_image" not in info["per_ablation"]
