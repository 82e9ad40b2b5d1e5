"""The preference ``judge`` config (zero-shot EmoPrefer judging items) and `audit preference --judges` reading what
`omniaudit judge --config judge` writes, with no glue in between."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.data_builders.preference import SyntheticSpec, build_preference_dataset, synthesize
from omniaudit.data_builders.preference.read import COLUMNS
from omniaudit.errors import InputError
from omniaudit.evaluation.preference.audit import PreferenceAuditConfig, audit_preference
from omniaudit.evaluation.stats import decide_with_ties, waf
from omniaudit.runners.items import load_items

SPEC = SyntheticSpec(n_pairs=120, seed=5)
FAST = ["--n-resamples", "50", "--no-source-classifier", "--no-controls"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build_preference_dataset(tmp_path_factory.mktemp("pref") / "ds", spec=SPEC)


@pytest.fixture(scope="module")
def pairs(built):
    from omniaudit.data_builders.hub import load_config

    return load_config(built, "pairs")


def _binary(pairs: pd.DataFrame) -> pd.DataFrame:
    return pairs[pairs["is_binary"]].reset_index(drop=True)


def _audit(pairs, *judges, **kwargs):
    config = PreferenceAuditConfig(n_resamples=0, source_classifier=False, controls=False, judges=list(judges),
                                   **kwargs)
    return audit_preference(pairs, config)


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _runner_rows(binary, pick, probs=None, runs=1):
    """Rows as `omniaudit judge` writes them: ``pick(pair, order, shown_a, shown_b, run)`` -> "A" / "B" / None."""
    rows = []
    for run in range(runs):
        for _, pair in binary.iterrows():
            for order in ("ab", "ba"):
                a, b = (pair["a1"], pair["a2"]) if order == "ab" else (pair["a2"], pair["a1"])
                label = pick(pair, order, a, b, run)
                rows.append({"id": f"{pair['id']}/{order}", "order": order, "run": run, "raw": label or "Hmm.",
                             "label": label, "parsed": label is not None,
                             "option_probs": probs(a, b) if probs else None, "temperature": 0.7, "top_p": None,
                             "seed": run})
    return rows


# ------------------------------------------------------------------------------------------------------ the items
def test_judge_config_holds_both_orders_of_every_binary_pair_as_items(built, pairs):
    binary = _binary(pairs)
    items = load_items(built, "judge")
    assert len(items) == 2 * len(binary) and len({i.id for i in items}) == len(items)
    by_id = {i.id: i for i in items}
    for _, pair in binary.iterrows():
        ab, ba = by_id[f"{pair['id']}/ab"], by_id[f"{pair['id']}/ba"]
        assert ab.order == "ab" and ba.order == "ba" and ab.options == ba.options == ["A", "B"]
        assert ab.closed and not ab.media and ab.system is None
        # ab shows a1 as Description A, ba swaps the descriptions
        assert f"Description A: {pair['a1']}\n\nDescription B: {pair['a2']}\n" in ab.prompt
        assert f"Description A: {pair['a2']}\n\nDescription B: {pair['a1']}\n" in ba.prompt
        assert ab.prompt.endswith("Answer with a single letter: A or B.")
        assert ab.gold == ("A" if pair["preference"] == "a1" else "B")
        assert ba.gold == ("B" if pair["preference"] == "a1" else "A")
    # generator names and labels never reach the prompt
    assert not any(g in i.prompt for i in items for g in set(pairs["model1"]))
    import datasets

    meta = datasets.load_dataset(str(built), "judge", split="train").to_pandas()
    assert set(meta["pair_id"]) == set(binary["id"]) and (meta["id"] == meta["pair_id"] + "/" + meta["order"]).all()
    assert ((meta["order"] == "ab") == (meta["shown_first"] == "a1")).all()
    card = (built / "README.md").read_text()
    assert "config_name: judge" in card and f"({2 * len(binary)} items)" in card


# ------------------------------------------------------------------------------------ runner output -> audit, CLI
def test_position_locked_judge_from_the_cli_is_all_ties(tmp_path, built, pairs, capsys):
    binary = _binary(pairs)
    pred = tmp_path / "locked.jsonl"
    assert main(["judge", "--dataset", str(built), "--config", "judge", "--judge", "scripted:always-a",
                 "--out", str(pred)]) == 0
    rows = [json.loads(line) for line in pred.read_text().splitlines()]
    assert {r["label"] for r in rows} == {"A"} and len(rows) == 2 * len(binary)
    out = tmp_path / "audit"
    assert main(["audit", "preference", "--data", str(built), "--judges", f"locked={pred}", *FAST,
                 "--out", str(out)]) == 0, capsys.readouterr().err
    audit = json.loads((out / "audit.json").read_text())
    judge, full = audit["judges"]["locked"], audit["predictors"]["locked"]["full"]
    # slot A is a1 in order ab and a2 in order ba: every pair averages to P(a1) = 0.5, a tie
    assert judge["n_two_orders"] == judge["n_ties"] == full["ties"] == len(binary)
    assert judge["order_agreement"] == 0.0 and full["accuracy"] == 0.5
    assert judge["predictions"] == "items" and judge["p_a1_from"] == {"label": 2 * len(binary)}
    table = pd.read_csv(out / "predictions.csv")
    assert (table["p_a1__locked"] == 0.5).all() and (table["pred__locked"] == "tie").all()
    report = (out / "report.md").read_text()
    assert "`locked`: item predictions of `omniaudit judge --config judge`" in report
    # the oracle (the item's gold letter) recovers every label through the same mapping
    oracle = tmp_path / "oracle.jsonl"
    assert main(["judge", "--dataset", str(built), "--config", "judge", "--judge", "scripted:oracle",
                 "--out", str(oracle)]) == 0
    audit, _ = _audit(pairs, f"oracle={oracle}")
    assert audit["predictors"]["oracle"]["full"]["waf"] == 100.0 and audit["judges"]["oracle"]["order_agreement"] == 1


def test_a_judge_preferring_the_longer_description_scores_as_the_length_rule(tmp_path, pairs):
    binary = _binary(pairs)
    longer = _write(tmp_path / "longer.jsonl",
                    _runner_rows(binary, lambda pair, order, a, b, run: "A" if len(a) > len(b) else "B"))
    audit, table = _audit(pairs, f"longer={longer}")
    y = (binary["preference"] == "a1").to_numpy(int)
    rule = np.where(binary["len1"] > binary["len2"], 1.0, 0.0)
    rule[binary["len1"] == binary["len2"]] = 0.5  # equal lengths: B in both orders, a tie
    full = audit["predictors"]["longer"]["full"]
    assert table["p_a1__longer"].tolist() == rule.tolist()
    decided = rule != 0.5
    assert full["ties"] == int((~decided).sum())
    if decided.all():
        assert full["waf"] == pytest.approx(waf(y, rule.astype(int)))
    assert audit["judges"]["longer"]["order_agreement"] == pytest.approx(decided.mean())
    counter = binary["counter_stereotypical"].to_numpy()
    prior = binary["prior_choice"].map({"a1": 1, "a2": 0, "abstain": -1}).to_numpy()
    assert audit["predictors"]["longer"]["counter_stereotypical"]["n"] == counter.sum()
    from omniaudit.evaluation.stats import prior_following

    assert audit["predictors"]["longer"]["counter_stereotypical"]["prior_following"] == pytest.approx(
        prior_following(rule[counter], prior[counter]))
    # option probabilities, where the runner has them, win over the label and map by order: P(a1) = P(A) in ab,
    # P(B) in ba; a sigmoid of the length gap (in the shown order) gives the same P(a1) from both orders
    sig = lambda d: 1 / (1 + np.exp(-d / 40))  # noqa: E731
    probs = _write(tmp_path / "probs.jsonl", _runner_rows(
        binary, lambda *_: "A", probs=lambda a, b: {"A": float(sig(len(a) - len(b))),
                                                    "B": float(1 - sig(len(a) - len(b)))}))
    audit, table = _audit(pairs, f"soft={probs}")
    expected = sig((binary["len1"] - binary["len2"]).to_numpy())
    assert table["p_a1__soft"].to_numpy() == pytest.approx(expected, abs=1e-12)
    assert audit["judges"]["soft"]["p_a1_from"] == {"probs": 2 * len(binary)}
    assert (table["pred__soft"].to_numpy() == np.select([decide_with_ties(expected) == 1,
                                                         decide_with_ties(expected) == 0], ["a1", "a2"], "tie")).all()


def test_runs_are_averaged_and_unparsed_answers_are_no_preference(tmp_path, pairs):
    binary = _binary(pairs)

    def pick(pair, order, a, b, run):  # runs 0, 1 name a1; run 2 names a2; pair 0 order ab always unparsed
        if pair["id"] == binary["id"][0] and order == "ab":
            return None
        first = "A" if order == "ab" else "B"
        return first if run < 2 else ("B" if first == "A" else "A")

    path = _write(tmp_path / "runs.jsonl", _runner_rows(binary, pick, runs=3))
    audit, table = _audit(pairs, f"sampled={path}")
    meta = audit["judges"]["sampled"]
    assert meta["runs"] == {"min": 3, "max": 3} and meta["n_unparsed"] == 3
    assert meta["sampling"]["temperature"] == 0.7 and meta["sampling"]["seed"] == [0, 1, 2]
    assert "3 runs per item and order, averaged" in meta["note"] and "3 answers named no option" in meta["note"]
    p = table["p_a1__sampled"].to_numpy()
    assert p[0] == pytest.approx((0.5 + 2 / 3) / 2) and p[1:] == pytest.approx(2 / 3)  # majority: a1
    assert (table["pred__sampled"] == "a1").all()


def test_item_predictions_from_another_config_or_malformed_are_refused(tmp_path, pairs):
    binary = _binary(pairs)
    good = _runner_rows(binary, lambda *_: "A")
    cases = {
        "another_config": ([{**good[0], "id": "clip_x/question"}], "row 1", "<pair id>/ab"),
        "bad_probs": ([good[0], {**good[1], "option_probs": {"yes": 1.0}}], "row 2", "option_probs"),
        "negative_probs": ([{**good[0], "option_probs": {"A": -1, "B": 2}}], "row 1", "non-negative"),
        "infinite_probs": ([{**good[0], "option_probs": {"A": "inf", "B": 0.1}}], "row 1", "finite"),
        # no text to settle it: greedy probabilities that favour the other option than the label are refused
        "contradicting_probs": ([{**{k: v for k, v in good[0].items() if k != "raw"}, "temperature": 0.0,
                                  "option_probs": {"A": 0.2, "B": 0.8}}], "row 1", "favour B but the label is A"),
        "twice": ([good[0], good[2], good[0]], "row 1", "more than one row and run 0 (again in row 3)"),
        "bad_label": ([{**good[0], "label": "C"}], "row 1", "expected label A or B"),
    }
    for name, (rows, where, what) in cases.items():
        path = _write(tmp_path / f"{name}.jsonl", rows)
        with pytest.raises(InputError) as err:
            _audit(pairs, f"j={path}", judged_only=True)
        assert str(path) in str(err.value) and where in str(err.value) and what in str(err.value), name
    # an item id that is not in the dataset
    path = _write(tmp_path / "unknown.jsonl", [{**good[0], "id": "nope/ab"}])
    with pytest.raises(InputError, match=r"not in the dataset, e.g. \['nope'\]"):
        _audit(pairs, f"j={path}", judged_only=True)


# --------------------------------------------------------------------------------------------------------- media
@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """The pairs of a 12-pair benchmark and a folder with a clip for each: videos with a soundtrack, one video
    without one (.MKV, upper case) and one audio-only file (.wav); distinct bytes per clip."""
    import soundfile as sf
    from media_clips import noise_audio, write_av, write_clip

    root = tmp_path_factory.mktemp("clips")
    raw = synthesize(SyntheticSpec(n_pairs=12, seed=1, same_rate=0.2))[list(COLUMNS)]
    csv = root / "pairs.csv"
    raw.to_csv(csv, index=False)
    media = root / "media"
    media.mkdir()
    kinds = {}
    for i, name in enumerate(raw["name"]):
        if i == 1:
            write_av(media / f"{name}.MKV", seconds=0.4, fps=10, size=(32, 32), audio_codec=None)
            kinds[name] = ("video", False)
        elif i == 2:
            sf.write(media / f"{name}.wav", noise_audio(0.4, seed=i)[0], 16000)
            kinds[name] = ("audio", False)
        else:
            write_clip(media / f"{name}.mp4", seconds=0.4, fps=10, size=(32, 32), audio=noise_audio(0.4, seed=i))
            kinds[name] = ("video", True)
    return raw, csv, media, kinds


def test_media_attaches_each_pairs_own_clip_to_both_orders(tmp_path, clips, capsys):
    raw, csv, media, kinds = clips
    out = tmp_path / "ds"
    assert main(["build", "preference", "--data", str(csv), "--media", str(media), "--out", str(out)]) == 0
    items = load_items(out, "judge")
    binary = raw[raw["preference"] != "same"]
    assert len(items) == 2 * len(binary)
    files = {p.name.rsplit(".", 1)[0]: p for p in media.iterdir()}
    for item in items:
        name = item.id.rsplit("/", 1)[0]
        kind, with_audio = kinds[name]
        assert len(item.media) == 1 and item.media[0].kind == kind and item.media[0].column == kind
        assert item.media[0].data == files[name].read_bytes()  # the pair's own clip, byte for byte
        assert item.media[0].with_audio == with_audio
        assert item.media[0].modality == ("video+audio" if with_audio else kind)
        assert ("listen to its audio" in item.prompt) == with_audio
    keys = {}
    for item in items:
        keys.setdefault(item.id.rsplit("/", 1)[0], set()).add(item.media[0].key)
    assert all(len(k) == 1 for k in keys.values()) and len(set().union(*keys.values())) == len(binary)
    card = (out / "README.md").read_text()
    assert "video+audio" in card and "Watch the video and listen to its audio." in card


def test_a_missing_clip_fails_naming_the_pair_row_and_expected_path(tmp_path, clips, capsys):
    import shutil

    raw, csv, media, _ = clips
    partial = tmp_path / "partial"
    shutil.copytree(media, partial)
    binary_rows = np.flatnonzero(raw["preference"] != "same")
    victim = raw["name"][binary_rows[-1]]
    next(partial.glob(f"{victim}.*")).unlink()
    same = raw["name"][raw["preference"] == "same"]
    for name in same:  # "same" pairs are not judged: their clips are not needed
        for f in partial.glob(f"{name}.*"):
            f.unlink()
    out = tmp_path / "ds"
    assert main(["build", "preference", "--data", str(csv), "--media", str(partial), "--out", str(out)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{csv}:row {binary_rows[-1] + 1}:" in err and f"{partial / victim}.<ext>" in err and "mp4" in err
    assert not out.exists()  # nothing written
    # two videos for one name, and a name leading outside the folder, are refused too
    doubled = raw["name"][binary_rows[0]]
    src = next(partial.glob(f"{doubled}.*"))
    shutil.copy(src, partial / f"{doubled}.webm")
    with pytest.raises(InputError, match="several clips"):
        from omniaudit.data_builders.preference.judge import find_clips

        frame = pd.DataFrame({"id": [doubled], "name": [doubled], "is_binary": [True]})
        find_clips(frame, partial)
    frame = pd.DataFrame({"id": ["x"], "name": ["../media/x"], "is_binary": [True]})
    with pytest.raises(InputError, match="outside the media folder"):
        find_clips(frame, partial)
    with pytest.raises(InputError, match="media folder not found"):
        find_clips(frame, tmp_path / "nope")


def test_tiny_omni_model_judges_the_clips_and_the_audit_reads_its_probabilities(tmp_path, clips, capsys):
    """A real (tiny, random) Qwen2.5-Omni thinker through `hf:` on video+audio items; no file edited in between."""
    from omniaudit.tiny_models import tiny_omni

    raw, csv, media, kinds = clips
    with_sound = tmp_path / "media"
    with_sound.mkdir()
    for name, (kind, audio) in kinds.items():
        if kind == "video" and audio:
            (with_sound / f"{name}.mp4").write_bytes((media / f"{name}.mp4").read_bytes())
    keep = raw[raw["name"].isin([n for n, (k, a) in kinds.items() if k == "video" and a])]
    keep.to_csv(tmp_path / "pairs.csv", index=False)
    ds, pred, out = tmp_path / "ds", tmp_path / "omni.jsonl", tmp_path / "audit"
    assert main(["build", "preference", "--data", str(tmp_path / "pairs.csv"), "--media", str(with_sound),
                 "--out", str(ds)]) == 0
    model = tiny_omni(tmp_path / "omni")
    assert main(["judge", "--dataset", str(ds), "--config", "judge", "--judge", f"hf:{model}", "--out", str(pred),
                 "--fps", "2", "--max-frames", "2"]) == 0, capsys.readouterr().err
    rows = pd.read_json(pred, lines=True)
    assert rows["option_probs"].notna().all()
    assert main(["audit", "preference", "--data", str(ds), "--judges", f"omni={pred}", *FAST,
                 "--out", str(out)]) == 0, capsys.readouterr().err
    audit = json.loads((out / "audit.json").read_text())
    table = pd.read_csv(out / "predictions.csv").set_index("id")
    assert audit["judges"]["omni"]["p_a1_from"] == {"probs": len(rows)}
    p = {(r.id.rsplit("/", 1)[0], r.order): r.option_probs["A" if r.order == "ab" else "B"] for r in rows.itertuples()}
    for pair_id, value in table["p_a1__omni"].items():
        assert value == pytest.approx((p[pair_id, "ab"] + p[pair_id, "ba"]) / 2, abs=1e-9)


def test_an_unread_answer_is_no_pick_of_either_slot_but_a_declared_tie_is_half_of_each(tmp_path, pairs):
    """A correct judge whose answers with the gold in slot B go unread read, with unread answers as half a pick each,
    as slot-A biased (0.75); per order they are left out, so its slot-A rate is the correct judge's. A declared tie
    ("unread": "tie") stays half a pick: a judge that ties whenever the gold is in B is slot-A biased."""
    binary = _binary(pairs)
    gold_first = {pid: pref == "a1" for pid, pref in zip(binary["id"], binary["preference"], strict=True)}

    def rows(unread_reason):
        out = _runner_rows(binary, lambda pair, order, *_: "A" if gold_first[pair["id"]] == (order == "ab") else None)
        return [{**r, "unread": unread_reason} if r["label"] is None else r for r in out]

    for reason, slot_a in (("none", 1.0), ("tie", 0.75)):
        path = _write(tmp_path / f"{reason}.jsonl", rows(reason))
        audit, table = _audit(pairs, f"judge={path}")
        ab, ba = table["p_a1_ab__judge"].to_numpy(float), table["p_a1_ba__judge"].to_numpy(float)
        both = np.isfinite(ab) & np.isfinite(ba)
        picks_a = np.where(np.isfinite(ab), ab, np.nan), np.where(np.isfinite(ba), 1 - ba, np.nan)
        if reason == "none":  # only the answered order of each pair is kept: every one picks slot A, the gold
            assert not both.any() and np.nansum(np.isfinite(ab)) + np.nansum(np.isfinite(ba)) == len(binary)
            assert audit["judges"]["judge"]["n_unparsed"] == len(binary)
        else:
            assert both.all() and np.mean((picks_a[0] + picks_a[1]) / 2) == pytest.approx(slot_a)
            assert audit["judges"]["judge"]["p_a1_from"]["tie"] == len(binary)
