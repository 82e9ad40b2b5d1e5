"""The scorecard's reference tiers: scripted rules and learned tiny models, each planted with one shortcut and checked
by the card's calibration; the shipped learned models are the files their manifest says."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard import parse_models
from omniaudit.evaluation.scorecard.card import calibration
from omniaudit.evaluation.scorecard.references import LEARNED, MANIFEST, learned, planted, reference_models, tiers_of


def test_a_bare_references_flag_is_the_scripted_tier_and_all_is_both():
    assert tiers_of(True) == tiers_of("scripted") == ("scripted",)
    assert tiers_of("all") == ("scripted", "learned")
    assert tiers_of(None) == tiers_of(False) == ()
    with pytest.raises(InputError, match="no tier bogus"):
        tiers_of("bogus")


def _manifest(folder: Path, models: list[dict]) -> Path:
    for m in models:
        for key in ("path", "base_path"):
            if key in m:
                (folder / m[key]).mkdir(exist_ok=True)
                (folder / m[key] / "config.json").write_text("{}")
    (folder / MANIFEST).write_text(json.dumps({"models": models}))
    return folder


def test_a_learned_manifest_gives_hf_and_reward_specs_named_for_their_shortcut(tmp_path):
    folder = _manifest(tmp_path, [{"shortcut": "position", "runner": "hf", "path": "pos"},
                                  {"shortcut": "style", "runner": "reward", "path": "rm", "base_path": "base"}])
    refs = learned(folder)
    assert [(r.name, r.shortcut, r.tier) for r in refs] == [("learned-pos", "position", "learned"),
                                                           ("learned-verbose", "style", "learned")]
    assert refs[0].spec == f"hf:{folder / 'pos'}"
    assert refs[1].spec == f"reward:{folder / 'rm'}@{folder / 'base'}"
    assert learned(tmp_path / "nowhere") == ()


@pytest.mark.parametrize("entry, match", [
    ({"shortcut": "loudness", "runner": "hf", "path": "m"}, "shortcut 'loudness'"),
    ({"shortcut": "position", "runner": "vllm", "path": "m"}, "runner 'vllm'"),
])
def test_a_manifest_naming_an_unknown_shortcut_or_runner_is_refused(tmp_path, entry, match):
    with pytest.raises(InputError, match=match):
        learned(_manifest(tmp_path, [entry]))


def test_a_manifest_whose_model_folder_is_empty_is_refused(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / MANIFEST).write_text(json.dumps({"models": [{"shortcut": "position", "runner": "hf", "path": "m"}]}))
    with pytest.raises(InputError, match="holds no model"):
        learned(tmp_path)


def test_the_shipped_learned_models_are_the_files_their_manifest_names():
    manifest = json.loads((LEARNED / MANIFEST).read_text(encoding="utf-8"))
    assert {m["shortcut"] for m in manifest["models"]} >= {"position", "style", "label_following"}
    for m in manifest["models"]:
        assert m["benchmark_card"]["status"] == "flagged"  # it showed its shortcut on the card it was built with
        for key, sums in (("path", "sha256"), ("base_path", "base_sha256")):
            if key not in m or sums not in m:
                continue
            files = {f.name for f in (LEARNED / m[key]).iterdir() if not f.name.startswith(".")}
            assert files == set(m[sums])
            for name, digest in m[sums].items():
                assert hashlib.sha256((LEARNED / m[key] / name).read_bytes()).hexdigest() == digest
    assert sum(f.stat().st_size for f in LEARNED.rglob("*") if f.is_file()) < 20e6  # a few MB, shipped as data


def test_references_learned_adds_one_model_per_learned_shortcut_beside_the_oracle():
    models = parse_models(["me=scripted:random"], references="learned")
    names = [r.name for r in learned()]
    assert list(models) == ["me", "oracle", *names]
    assert {planted(models[n]) for n in names} >= {"position", "style", "label_following"}
    assert len(parse_models(["me=scripted:random"], references="all")) == 2 + 5 + len(names)
    assert [r.name for r in reference_models(("scripted",))][:2] == ["oracle", "pos"]


def test_a_learned_reference_not_flagged_for_its_shortcut_fails_the_calibration():
    ref = next(r for r in learned() if r.shortcut == "position")
    clear = {"status": "clear"}
    verdicts = {"oracle": {s: clear for s in ("position", "style", "label_following", "visual_inference",
                                             "modality_dominance")}}
    verdicts[ref.name] = {**verdicts["oracle"], "position": {"status": "inconclusive"}}
    checks = calibration({"oracle": "scripted:oracle", ref.name: ref.spec}, verdicts)
    assert not checks["position"]["ok"] and ref.name in checks["position"]["why"][0]
    assert checks["style"]["ok"]  # flagged for nothing else is no failure: it is planted with position only


@pytest.mark.slow  # three tiny trained models through the preference and protocols quick sets: about a minute
def test_each_learned_reference_is_flagged_for_the_shortcut_it_learned_and_the_card_is_calibrated(tmp_path,
                                                                                                  small_defaults):
    import omniaudit.cli as cli

    out = tmp_path / "card"
    assert cli.main(["scorecard", "--model", "guess=scripted:random", "--references", "learned", "--size", "small",
                     "--audits", "preference,protocols", "--out", str(out), "-q"]) == 0
    card = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    assert card["calibrated"] is True
    for ref in learned():
        assert card["models"][ref.name]["reference"]
        assert ref.shortcut in card["flagged"][ref.name], (ref.name, card["models"][ref.name]["summary"])
    assert "learned-pos" in (out / "scorecard.md").read_text(encoding="utf-8")
