"""The shortcut scorecard: the planted-shortcut reference models are flagged for exactly their shortcut,
modalities a model cannot take are skipped up front, degenerate models are not findings, a rerun reuses its work."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

import omniaudit.cli as cli
from omniaudit.cli import scorecard as scorecard_cli
from omniaudit.errors import InputError
from omniaudit.evaluation.scorecard import SHORTCUTS, ScorecardOptions, parse_models, run_scorecard
from omniaudit.runners.items import JudgeItem, MediaPart
from omniaudit.runners.scripted import ScriptedJudge

HEADLINE = ["oracle=scripted:oracle", "pos=scripted:position-locked", "label=scripted:label-follower",
            "deaf=scripted:deaf", "verbose=scripted:verbose", "dominant=scripted:audio-dominant"]
EXPECTED = {"oracle": [], "pos": ["position"], "label": ["label_following"], "deaf": ["visual_inference"],
            "verbose": ["style"], "dominant": ["modality_dominance"]}


def main(argv: list[str], monkeypatch) -> int:
    """``omniaudit ARGV``, with the scorecard command registered whether or not the CLI package lists it yet."""
    if scorecard_cli not in cli.MODULES:
        monkeypatch.setattr(cli, "MODULES", (scorecard_cli, *cli.MODULES))
    return cli.main(argv)


@pytest.fixture(scope="module")
def headline(tmp_path_factory, small_defaults) -> tuple[Path, float]:
    """The issue's headline command, run once (datasets built, five models, four audits); (folder, seconds)."""
    mp = pytest.MonkeyPatch()
    out = tmp_path_factory.mktemp("scorecard") / "card"
    start = time.perf_counter()
    try:
        assert main(["scorecard", "--model", *HEADLINE, "--size", "small", "--out", str(out)], mp) == 0
    finally:
        mp.undo()
    return out, time.perf_counter() - start


def _card(out: Path) -> dict:
    return json.loads((out / "scorecard.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_headline_flags_exactly_the_planted_shortcuts(headline):
    out, seconds = headline
    card = _card(out)
    assert card["flagged"] == EXPECTED
    assert seconds < 180, f"the headline scorecard took {seconds:.0f} s"
    dominance = card["models"]["dominant"]["shortcuts"]["modality_dominance"]["evidence"][0]
    assert "mostly audio" in dominance["note"], dominance  # the cell names the modality that decides
    for name, model in card["models"].items():
        assert set(model["audits"]) == {"preference", "interventions", "protocols", "composition"}
        for audit, entry in model["audits"].items():
            assert entry["status"] == "ran", (name, audit, entry)
            assert entry["parse_rate"] == 1.0 and entry["n_items"] > 0
            assert (out / entry["folder"] / "audit.json").is_file()
        for shortcut in SHORTCUTS:
            verdict = model["shortcuts"][shortcut]
            assert {"flagged", "value", "ci", "threshold", "evidence", "audit", "rule", "reference"} <= set(verdict)
            assert verdict["reference"]["oracle"] == card["models"]["oracle"]["shortcuts"][shortcut]["value"]
            for e in verdict["evidence"]:  # a flag always comes from a CI that excludes the null
                if e["flagged"]:
                    assert e["ci"][0] > e["null"] or e["ci"][1] < e["null"]
    # the oracle is clear where it is measured; composition has no failure to decompose
    assert card["models"]["oracle"]["shortcuts"]["position"]["status"] == "clear"
    assert card["models"]["oracle"]["shortcuts"]["modality_dominance"]["status"] == "not measured"
    assert card["audits"]["protocols"]["items"] == {"blueprint": 224, "reference": 256, "pairwise": 92,
                                                    "cue_conflict": 128}


def test_card_files_are_self_contained(headline):
    out, _ = headline
    page = (out / "scorecard.html").read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") > len(list((out / "figures").glob("*.png"))) >= 2  # + audits' own
    assert not re.search(r"(src|href)=\"(https?:)?//", page), "the page loads something from the network"
    assert "<script" not in page and "<link" not in page and "@import" not in page
    text = (out / "scorecard.md").read_text(encoding="utf-8")
    assert re.search(r"\| pos \(reference\) \| FLAGGED \(slot A\) 1\.00 \[0\.\d\d, 1\.00\] "
                     r"\(null 0\.50, MDE 0\.\d\d\) \|", text)
    assert "embedded default" in text and "blueprint 224" in text
    for href in re.findall(r"\]\((models/[^)]+)\)", text):  # links to the full audit folders resolve
        assert (out / href).is_file(), href


def test_every_estimate_has_a_unit_and_proportions_share_one_scale(headline):
    """Typed estimates put every proportion on 0-1, whichever scale its audit.json keeps (points for WAF and the
    Thud accuracies), and say the unit of the rest."""
    from omniaudit.results import AuditResult, estimates

    out, _ = headline
    for folder in sorted(f.parent for f in out.glob("models/*/*/audit.json")):
        result = AuditResult.read(folder.name, folder)
        typed = result.estimates()
        assert typed and all(e.unit in ("proportion", "seconds") for e in typed), folder
        written = {path: entry for path, entry in estimates(result.data)}
        for e in typed:
            if e.unit == "proportion" and e.value is not None:
                assert -1 <= e.value <= 1 and all(x is None or -1 <= x <= 1 for x in e.ci), (folder, e)
                in_points = {"preference": True, "interventions": e.path[0] != "coverage",
                             "composition": e.path[0] == "ablation_accuracy"}.get(folder.name, False)
                scale = 100 if in_points else 1
                assert e.value * scale == pytest.approx(written[e.path]["value"])


def test_every_audit_json_validates_against_the_shipped_schema(headline):
    jsonschema = pytest.importorskip("jsonschema")
    from omniaudit.evaluation.audit_outputs import read_audit, schema_path

    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    out, _ = headline
    found = sorted(out.glob("models/*/*/audit.json"))
    assert {f.parent.name for f in found} == {"preference", "interventions", "protocols", "composition"}
    for path in found:
        jsonschema.validate(read_audit(path.parent), schema)
    broken = read_audit(found[0].parent)
    broken["schema"]["inputs"]["dataset"] = "/home/someone/data"  # an absolute local path is never recorded
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_rerun_reuses_datasets_predictions_and_audits(headline, monkeypatch):
    out, _ = headline
    before = _card(out)
    files = sorted(out.glob("models/*/*.jsonl")) + sorted(out.glob("datasets/*/README.md"))
    stamps = {f: f.stat().st_mtime_ns for f in files}
    audit_stamp = (out / "models/pos/protocols/audit.json").stat().st_mtime_ns
    # a killed run: one predictions file and one audit folder gone, the card not written
    (out / "models/label/reference.jsonl").unlink()
    (out / "scorecard.json").unlink()

    import omniaudit.runners.run as run_module

    asked = []
    real = run_module.run_judge
    monkeypatch.setattr(run_module, "run_judge", lambda *a, **k: asked.append((a[1], a[2])) or real(*a, **k))
    assert main(["scorecard", "--model", *HEADLINE, "--size", "small", "--out", str(out)], monkeypatch) == 0
    assert asked == [("reference", "scripted:label-follower")]  # only the missing file was asked again
    kept = [f for f in files if f.name != "reference.jsonl" or f.parent.name != "label"]
    assert {f: f.stat().st_mtime_ns for f in kept} == {f: stamps[f] for f in kept}
    assert not list(out.glob("models/*/.*journal*"))  # the rewritten file's journal is gone
    assert (out / "models/pos/protocols/audit.json").stat().st_mtime_ns == audit_stamp
    after = _card(out)
    assert after["flagged"] == before["flagged"] == EXPECTED
    assert after["models"]["label"]["shortcuts"] == before["models"]["label"]["shortcuts"]


def test_modality_skip_before_any_model_call(headline, monkeypatch, tmp_path):
    out, _ = headline
    import omniaudit.evaluation.scorecard.runner as runner
    import omniaudit.runners.run as run_module

    text_only = frozenset({"text"})
    monkeypatch.setattr(runner, "model_accepts", lambda spec, options: text_only if spec == "scripted:random"
                        else frozenset({"text", "audio", "image", "video", "video+audio"}))
    asked = []
    real = run_module.run_judge
    monkeypatch.setattr(run_module, "run_judge", lambda *a, **k: asked.append((a[1], a[2])) or real(*a, **k))
    data = {a: str(out / "datasets" / a) for a in ("preference", "interventions")}
    card = tmp_path / "card"
    run_scorecard(card, ["txt=scripted:random"], ScorecardOptions(audits=("preference", "interventions"), data=data))
    entry = _card(card)["models"]["txt"]["audits"]["interventions"]
    assert entry["status"] == "skipped" and "takes no video+audio input" in entry["reason"]
    assert ("diagnostic", "scripted:random") not in asked and ("judge", "scripted:random") in asked
    assert not (card / "models/txt/diagnostic.jsonl").exists()
    assert _card(card)["models"]["txt"]["shortcuts"]["visual_inference"]["status"] == "not measured"


@pytest.mark.slow
def test_degenerate_models_are_not_findings(headline, monkeypatch, tmp_path):
    """A constant answer shows position (it is locked) and nothing else; "not answering" is never a finding."""
    out, _ = headline
    import omniaudit.runners.run as run_module

    real = run_module.run_judge

    def refuse_some(dataset, config, spec, *args, **kwargs):  # a model whose protocol answers are unusable
        if spec == "scripted:random" and config == "blueprint":
            raise run_module.UnusableRun(f"{spec} gave 3 usable answers of 224 (at least 20% needed): ...",
                                         usable=3, total=224)
        return real(dataset, config, spec, *args, **kwargs)

    monkeypatch.setattr(run_module, "run_judge", refuse_some)
    data = {a: str(out / "datasets" / a) for a in ("preference", "interventions", "protocols", "composition")}
    argv = ["scorecard", "--model", "const=scripted:always-a", "mute=scripted:random", "--out", str(tmp_path / "c")]
    assert main([*argv, "--data", *(f"{a}={p}" for a, p in data.items())], monkeypatch) == 0
    card = _card(tmp_path / "c")
    const = card["models"]["const"]
    assert card["flagged"]["const"] == ["position"]
    assert const["audits"]["interventions"]["status"] == const["audits"]["composition"]["status"] == "not answering"
    assert "free-form" in const["audits"]["interventions"]["reason"]
    assert const["shortcuts"]["visual_inference"] == {**const["shortcuts"]["visual_inference"], "flagged": False,
                                                      "status": "not answering"}
    assert const["shortcuts"]["label_following"]["status"] == "clear"  # answers the cue as often with it as without
    assert const["shortcuts"]["style"]["status"] == "clear"  # a tie on every pair
    mute = card["models"]["mute"]
    assert mute["audits"]["protocols"]["status"] == "not answering"
    assert mute["audits"]["protocols"]["parse_rate"] == pytest.approx(3 / 224)
    assert "label_following" not in card["flagged"]["mute"]
    assert mute["shortcuts"]["label_following"]["status"] == "not answering"
    assert "not answering" in (tmp_path / "c" / "scorecard.md").read_text(encoding="utf-8")


def test_refusals_up_front(tmp_path, monkeypatch):
    assert main(["scorecard", "--model", "x=scripted:nope", "--out", str(tmp_path / "a")], monkeypatch) == 2
    assert main(["scorecard", "--model", "scripted:oracle", "--out", str(tmp_path / "b")], monkeypatch) == 2
    assert main(["scorecard", "--model", "x=scripted:oracle", "--audits", "nope", "--out", str(tmp_path / "c")],
                monkeypatch) == 2
    assert not any((tmp_path / n).exists() for n in "abc")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert main(["scorecard", "--model", "x=scripted:oracle", "--audits", "preference", "--out", str(mine)],
                monkeypatch) == 2  # a folder omniaudit did not write
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_models_always_include_the_oracle():
    assert parse_models(["m=hf:x"]) == {"m": "hf:x", "oracle": "scripted:oracle"}
    assert parse_models(["oracle=hf:x"]) == {"oracle": "hf:x", "oracle-reference": "scripted:oracle"}
    assert list(parse_models(["ref=scripted:oracle"], references=True)) == ["ref", "pos", "label", "deaf",
                                                                            "dominant", "verbose"]
    with pytest.raises(InputError, match="same name"):
        parse_models(["a=scripted:oracle", "a=scripted:random"])
    with pytest.raises(InputError, match="folder"):
        parse_models(["../a=scripted:oracle"])


# --------------------------------------------------------------------------------------- the reference models
def _item(**kw) -> JudgeItem:
    return JudgeItem(**{"id": "x", "prompt": "p", **kw})


def test_planted_models_take_one_shortcut_each():
    pair = _item(prompt="Description A: short.\n\nDescription B: a much longer description.\n\nWhich?",
                 options=["A", "B"], order="ab", gold="A")
    labelled = _item(options=["angry", "sad"], gold="sad", reference="angry")
    av = [MediaPart("video", b"v", "video", with_audio=True)]
    from omniaudit.data_builders.interventions.answers import QUESTIONS
    from omniaudit.data_builders.interventions.extract import extract

    sound = {d: _item(id=f"c/mute/{d}", prompt=q, media=av, gold="gold answer") for d, q in QUESTIONS.items()}
    answers = {name: [ScriptedJudge(name).answer([x])[0] for x in (pair, labelled, *sound.values())]
               for name in ("oracle", "position-locked", "label-follower", "deaf", "verbose")}
    oracle = answers["oracle"]
    assert oracle == ["A", "sad", "gold answer", "gold answer", "gold answer"]
    assert answers["position-locked"] == ["A", *oracle[1:]]
    assert answers["label-follower"] == ["A", "angry", *oracle[2:]]
    assert answers["verbose"] == ["B", *oracle[1:]]
    deaf = answers["deaf"]
    assert deaf[:2] == oracle[:2]
    assert extract("sync", deaf[2])["synced"] is True
    assert extract("existence", deaf[3])["audio_state"] == "audio_described"
    assert extract("consistency", deaf[4])["match"] == "match"
    # where the shortcut has nothing to act on, the planted models are the oracle
    plain = _item(options=["A", "B"], gold="B")
    names = ("position-locked", "label-follower", "verbose", "audio-dominant")
    assert {ScriptedJudge(n).answer([plain])[0] for n in names} == {"B"}
    assert ScriptedJudge("audio-dominant").answer([pair, labelled, *sound.values()]) == oracle


def test_audio_dominant_moves_only_without_the_audio():
    """A composition sample: wrong while its audio is there (the same wrong answer with the image dropped), the gold
    answer when the audio is muted or gone: every failure is audio dominance."""
    from omniaudit.evaluation.composition.failure_modes import classify

    media = [MediaPart("image", b"i", "image"), MediaPart("audio", b"a", "audio")]
    judge = ScriptedJudge("audio-dominant")
    for sample, gold in (("s000", "five"), ("s001", "green"), ("clip/7", "red")):
        full = _item(id=sample, prompt="How many?", media=media, gold=gold)
        ablated = {"mute_audio": media, "drop_image": media[1:], "text_only": []}
        answers = judge.answer([full, *(_item(id=f"{sample}/{k}", prompt="How many?", media=m, gold=gold)
                                        for k, m in ablated.items())])
        assert answers[0] != gold and answers[2] == answers[0] and answers[1] == answers[3] == gold
        assert classify(answers[0], dict(zip(ablated, answers[1:], strict=True))) == "audio_dominance"
    assert judge.answer([_item(id="t", prompt="How many?", gold="two")]) == ["two"]  # no sound: the oracle


def test_a_changed_default_is_rebuilt_not_reused(headline, monkeypatch, tmp_path):
    """The embedded default a folder holds is stamped; another default (its size changed) is rebuilt."""
    import omniaudit.evaluation.scorecard.runner as runner
    from omniaudit.evaluation.preference.entry import PARAMS

    out = tmp_path / "card"
    argv = ["scorecard", "--model", "x=scripted:oracle", "--audits", "preference", "--size", "small"]
    assert main([*argv, "--out", str(out)], monkeypatch) == 0
    first = (out / "datasets/preference/pairs/train-00000-of-00001.parquet")
    stamp = json.loads((out / "datasets/preference.default.json").read_text())
    assert stamp["key"] == runner.default_key("preference", "small") and "120 synthetic" in stamp["default"]
    built = first.stat().st_mtime_ns
    assert main([*argv, "--out", str(out)], monkeypatch) == 0
    assert first.stat().st_mtime_ns == built  # the same default: reused
    monkeypatch.setitem(PARAMS, "small", {"n_pairs": 60})
    assert main([*argv, "--out", str(out)], monkeypatch) == 0
    assert "60 synthetic" in json.loads((out / "datasets/preference.default.json").read_text())["default"]
    assert first.stat().st_mtime_ns != built


@pytest.mark.slow
def test_shards_merge_into_the_unsharded_card(headline, monkeypatch, tmp_path):
    """--shard I/N on two "machines", then --from-shards: the merged answers are byte for byte the unsharded run's and
    the card is the same; a missing shard is refused with the folder named, and no card is written."""
    out, _ = headline
    data = ["--data", *(f"{a}={out / 'datasets' / a}" for a in ("protocols", "composition"))]
    models = ["pos=scripted:position-locked", "dominant=scripted:audio-dominant"]
    base = ["scorecard", "--model", *models, "--audits", "protocols,composition", *data, "--n-resamples", "200"]
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, folder in enumerate(shards):
        assert main([*base, "--shard", f"{i}/2", "--out", str(folder)], monkeypatch) == 0
        assert json.loads((folder / "shard.json").read_text())["shard"] == {"index": i, "count": 2}
        assert not (folder / "scorecard.json").exists() and not (folder / "models/pos/protocols").exists()
    sizes = [len((f / "models/pos/pairwise.jsonl").read_text().splitlines()) for f in shards]
    assert all(sizes) and sum(sizes) == 92
    assert main([*base, "--from-shards", str(shards[0]), "--out", str(tmp_path / "half")], monkeypatch) == 2
    assert not (tmp_path / "half" / "scorecard.json").exists()
    assert main([*base, "--from-shards", *map(str, shards), "--out", str(tmp_path / "merged")], monkeypatch) == 0
    assert main([*base, "--out", str(tmp_path / "whole")], monkeypatch) == 0
    merged, whole = tmp_path / "merged", tmp_path / "whole"
    for file in sorted(whole.glob("models/*/*.jsonl")):
        assert (merged / file.relative_to(whole)).read_bytes() == file.read_bytes(), file.name
    a, b = _card(merged), _card(whole)
    assert a["flagged"] == b["flagged"] == {"pos": ["position"], "dominant": ["modality_dominance"], "oracle": []}
    assert a["models"] == b["models"]


# ------------------------------------------------------------------------------------------ local models (torch)
@pytest.mark.slow
def test_text_only_model_is_skipped_for_audio_audits(headline, tmp_path, monkeypatch):
    """A real text-only model (tiny causal LM): its modalities are read before any call, audio audits skipped."""
    pytest.importorskip("torch")
    from omniaudit.tiny_models import tiny_causal_lm

    out, _ = headline
    model = tiny_causal_lm(tmp_path / "lm")
    data = [f"{a}={out / 'datasets' / a}" for a in ("preference", "protocols")]
    argv = ["scorecard", "--model", f"lm=hf:{model}", "--audits", "preference,protocols", "--data", *data]
    assert main([*argv, "--out", str(tmp_path / "card")], monkeypatch) == 0
    lm = _card(tmp_path / "card")["models"]["lm"]
    assert lm["audits"]["preference"]["status"] == "ran"
    assert lm["audits"]["protocols"]["status"] == "skipped"
    assert "takes no audio input" in lm["audits"]["protocols"]["reason"]
    assert not list((tmp_path / "card" / "models" / "lm").glob("blueprint*"))


@pytest.mark.slow
def test_tiny_omni_through_every_audit(headline, tmp_path, monkeypatch):
    """The tiny random omni thinker answers all four audits in one command on CPU; what it cannot answer (free text
    the interventions extractor cannot read, byte noise for composition) is "not answering", never a finding."""
    pytest.importorskip("torch")
    from omniaudit.tiny_models import tiny_omni

    out, _ = headline
    model = tiny_omni(tmp_path / "omni")
    data = [f"{a}={out / 'datasets' / a}" for a in ("preference", "interventions", "protocols", "composition")]
    start = time.perf_counter()
    assert main(["scorecard", "--model", f"omni=hf:{model}", "--data", *data, "--out", str(tmp_path / "card")],
                monkeypatch) == 0
    assert time.perf_counter() - start < 300
    omni = _card(tmp_path / "card")["models"]["omni"]
    assert {a: e["status"] for a, e in omni["audits"].items()} == {
        "preference": "ran", "interventions": "not answering", "protocols": "ran", "composition": "not answering"}
    for shortcut in ("visual_inference", "modality_dominance"):  # its free text is byte noise: no answer
        assert omni["shortcuts"][shortcut]["status"] == "not answering"
        assert not omni["shortcuts"][shortcut]["flagged"]


def test_a_merge_takes_every_shard_folder_once_and_a_bad_count_is_no_model_s_fault(headline, monkeypatch, tmp_path,
                                                                                    capsys):
    """--from-shards needs the N shard runs of one sharding, each once (checked before any work); a shard count the
    items cannot fill is refused up front, never read as the models "not answering"."""
    out, _ = headline
    base = ["scorecard", "--model", "pos=scripted:position-locked", "--audits", "composition", "--data",
            f"composition={out / 'datasets' / 'composition'}", "--n-resamples", "200"]
    assert main([*base, "--shard", "0/20", "--out", str(tmp_path / "s20")], monkeypatch) == 2
    assert "composition samples" in capsys.readouterr().err and not (tmp_path / "s20" / "shard.json").exists()
    assert main([*base, "--shard", "0/3", "--out", str(tmp_path / "s0")], monkeypatch) == 0
    assert main([*base, "--from-shards", str(tmp_path / "s0"), "--out", str(tmp_path / "m")], monkeypatch) == 2
    assert "lacks shard(s) 1/3, 2/3" in capsys.readouterr().err and not (tmp_path / "m" / "scorecard.json").exists()
    assert main([*base, "--from-shards", str(tmp_path / "s0"), str(tmp_path / "s0"), "--out", str(tmp_path / "m2")],
                monkeypatch) == 2
    assert "given twice" in capsys.readouterr().err


def test_a_rerun_with_other_runner_settings_asks_again(headline, monkeypatch, tmp_path):
    """A "not answering" status, and predictions, are this run's only: another --max-tokens (the hint of a cut
    reply) or input setting asks the model again."""
    import omniaudit.runners.run as run_module

    out, _ = headline
    asked = []

    def short_replies(dataset, config, spec, *args, max_tokens=32, **kwargs):
        asked.append(max_tokens)
        if max_tokens < 16:
            raise run_module.UnusableRun(f"{spec} gave 0 usable answers of 180 (at least 20% needed): cut",
                                         usable=0, total=180)
        return real(dataset, config, spec, *args, max_tokens=max_tokens, **kwargs)

    real = run_module.run_judge
    monkeypatch.setattr(run_module, "run_judge", short_replies)
    base = ["scorecard", "--model", "pos=scripted:position-locked", "--audits", "preference", "--data",
            f"preference={out / 'datasets' / 'preference'}", "--n-resamples", "200", "--out", str(tmp_path / "c")]
    assert main([*base, "--max-tokens", "4"], monkeypatch) == 0
    assert _card(tmp_path / "c")["models"]["pos"]["audits"]["preference"]["status"] == "not answering"
    assert main([*base, "--max-tokens", "4"], monkeypatch) == 0
    assert asked.count(4) == 2  # the oracle and pos, once each: the rerun reused the status
    assert main([*base, "--max-tokens", "64"], monkeypatch) == 0
    assert asked.count(64) == 2 and _card(tmp_path / "c")["flagged"]["pos"] == ["position"]


def test_input_settings_are_part_of_a_run_s_provenance():
    from omniaudit.predictions import run_provenance
    from omniaudit.runners.run import input_settings

    assert input_settings("hf:m", {"fps": 1.0}) == {"mode": "logits", "fps": 1.0, "max_frames": 32}
    assert input_settings("openai:m@http://h/v1", {"dialect": "frames"}) == {
        "dialect": "frames", "fps": 2.0, "max_frames": 32, "top_logprobs": 10}
    assert input_settings("scripted:oracle", {"fps": 1.0}) == {}
    record = run_provenance("ds", "judge", None, "hf:m", {}, {}, {}, input_settings("hf:m", {"mode": "generate"}))
    assert record["runner"]["mode"] == "generate"
    assert "runner" not in run_provenance("ds", "judge", None, "scripted:oracle", {}, {}, {}, {})


def _entry(**statuses) -> dict:
    shortcuts = {s: {"status": statuses.get(s, "not measured"), "stratum": "all"} for s in SHORTCUTS}
    return {"shortcuts": shortcuts}


def test_a_model_that_answered_nothing_ranks_below_a_measured_clear_one():
    from omniaudit.evaluation.scorecard.card import rank_key, summary

    silent = _entry(**{s: "not answering" for s in SHORTCUTS})
    measured = _entry(position="clear", style="inconclusive")
    clear = _entry(**{s: "clear" for s in SHORTCUTS})
    models = {"silent": silent, "measured": measured, "clear": clear}
    board = sorted(models.items(), key=lambda kv: rank_key(kv[1], kv[0]))
    assert [name for name, _ in board] == ["clear", "measured", "silent"]
    assert summary(clear) == "no shortcut found (clear on all 5)"
    assert summary(silent).startswith("nothing measured")
    assert summary(measured).startswith("no flag; clear on 1 of 5")


def test_calibration_fails_when_the_oracle_is_flagged_or_a_measured_plant_is_not():
    from omniaudit.evaluation.scorecard.card import calibration, uncalibrated

    models = {"oracle": "scripted:oracle", "pos": "scripted:position-locked", "me": "hf:x"}
    verdicts = {"oracle": _entry(style="flagged")["shortcuts"], "pos": _entry(position="inconclusive")["shortcuts"],
                "me": _entry(position="flagged", style="clear", label_following="clear")["shortcuts"]}
    checks = calibration(models, verdicts)
    assert not checks["style"]["ok"] and not checks["position"]["ok"] and checks["label_following"]["ok"]
    uncalibrated(verdicts, models, checks)
    assert verdicts["me"]["position"]["status"] == verdicts["me"]["style"]["status"] == "inconclusive"
    assert verdicts["me"]["label_following"]["status"] == "clear"
    verdicts["pos"]["position"]["status"] = "not answering"  # unchecked, not failed
    assert calibration(models, verdicts)["position"]["ok"]


def test_a_cell_says_clear_small_for_a_real_effect_below_the_minimum_of_interest():
    from omniaudit.evaluation.scorecard.card import _cell

    v = {"status": "clear", "value": 0.53, "ci": [0.51, 0.54], "null": 0.5, "mde": 0.07, "stratum": "all",
         "delta": 0.1, "equivalence_bound": [0.515, 0.545]}
    assert _cell({**v, "significant": True}).startswith("clear, small 0.53, 95% bounds [0.52, 0.55] within 0.40 "
                                                        "to 0.60")
    assert _cell({**v, "ci": [0.49, 0.57], "significant": False}).startswith("clear 0.53")
    assert _cell({**v, "status": "flagged", "significant": True}).startswith("FLAGGED 0.53 [0.51, 0.54] (null 0.50")


def test_a_cell_shows_the_bound_that_decided_it():
    """A clear cell shows its one-sided bound against null + minimum effect (the interval shown before was the
    simultaneous one, which may hold the minimum effect: "clear 0.57 [0.46, 0.69]" with a minimum of 0.65); an
    inconclusive one the MDE and about how many clusters would decide."""
    from omniaudit.evaluation.scorecard.card import _cell

    v = {"status": "clear", "value": 0.57, "ci": [0.46, 0.69], "null": 0.5, "mde": 0.15, "stratum": "all",
         "delta": 0.15, "equivalence_bound": [None, 0.63], "significant": False}
    assert _cell(v) == "clear 0.57, 95% bound 0.63 < 0.65 (null 0.50 + minimum effect 0.15)"
    cell = _cell({**v, "status": "inconclusive", "mde": 0.3, "clusters": 40})
    assert cell.endswith("(null 0.50, MDE 0.30 > 0.15: about 160 clusters would decide)")


def test_the_card_says_why_closed_answers_were_left_unread():
    from omniaudit.evaluation.scorecard.card import _status

    entry = {"status": "ran", "parse_rate": 0.9, "unread": {"negated": 3, "reversed": 1}}
    assert _status(entry) == "ran, parsed 90% (unread: 3 negated, 1 reversed)"
    assert _status({"status": "ran", "parse_rate": 1.0}) == "ran, parsed 100%"


@pytest.mark.slow
def test_a_correct_judge_that_writes_scores_traces_or_russian_is_flagged_for_nothing(headline, monkeypatch, tmp_path):
    """The oracle answering every closed item as a score line, as a reasoning trace that leans the other way then
    its answer, or in Russian (a third of the items each): every shortcut measured and none flagged. Read as the
    first option named, each phrasing would look locked to slot A."""
    import hashlib

    from omniaudit.runners.scripted import ScriptedJudge

    real = ScriptedJudge._one

    def phrased(self, item):
        answer = real(self, item)
        if not item.closed:
            return answer
        other = next(o for o in item.options if o != answer)
        style = int(hashlib.sha256(item.id.encode()).hexdigest(), 16) % 3
        if style == 0:
            return ", ".join(f"{o}: {9 if o == answer else 4}/10" for o in item.options)
        if style == 1:
            return f"<think>At first {other} seemed right, so the answer is {other}... let me listen again.</think>" \
                   f"\n\nAnswer: {answer}"
        if sorted(item.options) == ["A", "B"]:
            return f"Я выбираю {'первый' if answer == 'A' else 'второй'} вариант."
        return f"Ответ: {answer}."

    monkeypatch.setattr(ScriptedJudge, "_one", phrased)
    out, _ = headline
    data = {a: str(out / "datasets" / a) for a in ("preference", "interventions", "protocols", "composition")}
    argv = ["scorecard", "--model", "oracle=scripted:oracle", "--out", str(tmp_path / "c")]
    assert main([*argv, "--data", *(f"{a}={p}" for a, p in data.items())], monkeypatch) == 0
    card = _card(tmp_path / "c")
    assert card["flagged"]["oracle"] == []
    shortcuts = card["models"]["oracle"]["shortcuts"]
    assert {shortcuts[s]["status"] for s in ("position", "style", "label_following")} == {"clear"}
