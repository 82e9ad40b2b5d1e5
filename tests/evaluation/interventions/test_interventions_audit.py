"""The intervention audit: paper arithmetic, hand-computed metrics, cluster bootstrap, extractor, predictions, CLI."""

import json

import numpy as np
import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.data_builders.interventions import answers
from omniaudit.data_builders.interventions.diagnostic_answers import read_predictions
from omniaudit.data_builders.interventions.extract import extract_consistency, extract_existence, extract_sync
from omniaudit.errors import InputError
from omniaudit.evaluation import stats
from omniaudit.evaluation.interventions.audit import InterventionAuditConfig, audit_interventions, load_diagnostic
from omniaudit.evaluation.interventions.report import PAPER_TABLE1, avg_gap

PAPER_AVG_GAP = {"Gemini": 56.8, "MiniCPM-o-4.5": 80.7, "Nemotron-3-Omni": 46.6, "Qwen3-Omni": 77.3,
                 "Ming-Omni-2.0": 49.8, "MiMo-V2.5": 78.4}


@pytest.mark.parametrize("model", list(PAPER_TABLE1))
def test_avg_gap_reproduces_table_1(model):
    assert avg_gap(PAPER_TABLE1[model][:6]) == pytest.approx(PAPER_AVG_GAP[model], abs=0.05)
    assert PAPER_TABLE1[model][6] == PAPER_AVG_GAP[model]


def diagnostic(n_clips: int, shifts=(2.0,)) -> pd.DataFrame:
    """Diagnostic rows as the builder writes them: per clip 3 originals, the shifts, mute, swap."""
    rows = []
    for c in range(n_clips):
        variants = [("original", 0.0)] + [("shift", s) for s in shifts] + [("mute", 0.0), ("swap", 0.0)]
        for iv, off in variants:
            dims = answers.DIMENSIONS if iv == "original" else (answers.INTERVENTION_DIMENSION[iv],)
            for d in dims:
                name = f"shift{off:+.2f}" if iv == "shift" else iv
                rows.append({"id": f"c{c}/{name}/{d}", "source_id": f"c{c}", "intervention": iv, "offset_s": off,
                             "dimension": d, **answers.target(iv, d, off)})
    return pd.DataFrame(rows)


def structured(diag: pd.DataFrame, rule) -> pd.DataFrame:
    """Predictions (as read_predictions returns them) from ``rule(row) -> dict of fields``."""
    recs = [{"id": r["id"], "synced": None, "direction": None, "offset_s": None, "audio_state": None, "match": None,
             **rule(r), "answered": True} for _, r in diag.iterrows()]
    return pd.DataFrame(recs)


def test_paper_gemini_row_through_the_metric_code():
    """1000 clips answered so that each cell hits Gemini's Table 1 accuracy exactly: Avg Gap must be 56.77."""
    diag = diagnostic(1000)
    cells = {("sync", "original"): 549, ("sync", "shift"): 465, ("existence", "original"): 1000,
             ("existence", "mute"): 134, ("consistency", "original"): 936, ("consistency", "swap"): 183}

    def rule(r):
        k = int(r["source_id"][1:])
        ok = k < cells[(r["dimension"], r["intervention"])]
        if r["dimension"] == "sync":
            truth = bool(r["target_synced"])
            return {"synced": truth if ok else not truth, "direction": r["target_direction"] if ok else "none"}
        if r["dimension"] == "existence":
            want = "audio_described" if r["target_sound_present"] else "muted"
            return {"audio_state": want if ok else ("muted" if want == "audio_described" else "audio_described")}
        want = "match" if r["target_match"] else "mismatch"
        return {"match": want if ok else ("mismatch" if want == "match" else "match")}

    result = audit_interventions(diag, structured(diag, rule))
    dims = result["dimensions"]
    got = [dims[d][c] for d in ("sync", "existence", "consistency") for c in ("orig", "interv")]
    assert got == pytest.approx([54.9, 46.5, 100.0, 13.4, 93.6, 18.3])
    assert result["avg_gap"] == pytest.approx(avg_gap(PAPER_TABLE1["Gemini"][:6]))
    lo, hi = result["avg_gap_ci"]
    assert lo < result["avg_gap"] < hi
    lo, hi = dims["sync"]["ci"]["gap"]
    assert dims["sync"]["gap"] == pytest.approx(54.9 - 46.5) and lo < dims["sync"]["gap"] < hi


def test_failure_modes_and_temporal_metrics_by_hand():
    diag = diagnostic(4, shifts=(2.0, -1.0))
    answers_by_id = {
        # sync originals: c0 alarm (desync), rest synced -> false sync alarm 1/4
        "c0/original/sync": {"synced": False, "direction": "delay", "offset_s": 1.0},
        # shifts (8 rows): c0 both synced (blind); c1 +2 right, -1 wrong direction; c2 +2 right with 3 s, -1 no
        # direction; c3 +2 wrong direction, -1 right
        "c0/shift+2.00/sync": {"synced": True}, "c0/shift-1.00/sync": {"synced": True},
        "c1/shift+2.00/sync": {"synced": False, "direction": "delay", "offset_s": 2.0},
        "c1/shift-1.00/sync": {"synced": False, "direction": "delay", "offset_s": 1.0},
        "c2/shift+2.00/sync": {"synced": False, "direction": "delay", "offset_s": 3.0},
        "c2/shift-1.00/sync": {"synced": False, "direction": "none"},
        "c3/shift+2.00/sync": {"synced": False, "direction": "early", "offset_s": -2.0},
        "c3/shift-1.00/sync": {"synced": False, "direction": "early", "offset_s": -1.0},
        # existence: mute -> described on c0, c1 (hallucination 2/4), visual-only on c2; originals: c3 muted
        "c0/mute/existence": {"audio_state": "audio_described"},
        "c1/mute/existence": {"audio_state": "audio_described"},
        "c2/mute/existence": {"audio_state": "visual_only"}, "c3/mute/existence": {"audio_state": "muted"},
        "c3/original/existence": {"audio_state": "muted"},
        # consistency: swap accepted on c0 (false match 1/4); original c1 mismatch (1/4)
        "c0/swap/consistency": {"match": "match"}, "c1/original/consistency": {"match": "mismatch"},
    }

    def rule(r):
        if r["id"] in answers_by_id:
            return answers_by_id[r["id"]]
        if r["dimension"] == "sync":
            return {"synced": True, "direction": "none", "offset_s": 0.0}
        if r["dimension"] == "existence":
            return {"audio_state": "audio_described"}
        return {"match": "mismatch" if r["intervention"] == "swap" else "match"}

    res = audit_interventions(diag, structured(diag, rule))
    fm = res["failure_modes"]
    assert fm["false_sync_alarm"] == 1 / 4
    assert fm["offset_blindness"] == 2 / 8
    assert fm["direction_confusion"] == 2 / 6  # c1/-1 and c3/+2 flipped; c2/-1 "none" is not a confusion
    assert fm["mute_hallucination"] == 2 / 4 and fm["false_silence"] == 1 / 4
    assert fm["audio_dodge"] == (1 / 4 + 0 / 4) / 2
    assert fm["swap_false_match"] == 1 / 4 and fm["swap_false_mismatch"] == 1 / 4
    assert res["dimensions"]["sync"]["orig"] == 75.0
    # Shift as Table 1 scores it: not synced AND the right direction -> c1/+2, c2/+2, c3/-1 only
    assert res["dimensions"]["sync"]["interv"] == 100 * 3 / 8
    assert res["shift_yes_no"]["value"] == 100 * 6 / 8 and res["shift_yes_no"]["n"] == 8
    # Fig. 6a over the 4 originals + 8 shifts: binary 3 + 6 right, three-way 3 + 3 right
    assert res["sync_binary_accuracy"]["value"] == 100 * 9 / 12 and res["sync_binary_accuracy"]["n"] == 12
    assert res["sync_three_way_accuracy"]["value"] == 100 * 6 / 12
    # Fig. 6b, +-0.5 s: c1/+2 (2.0) and c3/-1 (-1.0) are within; c2/+2 (3.0) is 1 s off, c1/-1 (+1.0) 2 s off
    assert res["offset_within_tolerance"]["value"] == 100 * 2 / 8
    assert res["offset_within_tolerance"]["tolerance_s"] == 0.5 and res["offset_within_tolerance"]["n"] == 8
    assert res["direction_accuracy"]["value"] == pytest.approx(100 * 3 / 6)
    # MAE over flagged shifts with a stated offset: |2-2|, |1-(-1)|, |3-2|, |-2-2|, |-1-(-1)| -> (0+2+1+4+0)/5
    assert res["offset_mae"]["value"] == pytest.approx(7 / 5) and res["offset_mae"]["n"] == 5
    assert list(res["sync_by_offset"]) == ["(0.5, 1]", "(1, 2]"]
    assert res["sync_by_offset"]["(1, 2]"]["value"] == 50.0  # c1, c2 right; c0 blind, c3 wrong direction
    assert res["sync_by_offset"]["(0.5, 1]"]["value"] == 25.0  # only c3
    wide = audit_interventions(diag, structured(diag, rule), InterventionAuditConfig(offset_tolerance_s=1.0))
    assert wide["offset_within_tolerance"]["value"] == 100 * 3 / 8  # c2/+2 is exactly 1 s off: inclusive
    for bad in (float("nan"), -0.1, float("inf")):
        with pytest.raises(InputError, match="offset_tolerance_s"):
            audit_interventions(diag, structured(diag, rule), InterventionAuditConfig(offset_tolerance_s=bad))


def test_paired_builds_keep_the_paired_rule_and_ood_sets_score_every_source():
    """A `build interventions` set where c0's Shifts and c1's Mute were skipped: the paired rule leaves c0's sync
    Original and c1's existence Original out (numbers by hand, as before) and now says so; the same rows marked as an
    OOD sync set keep every row, decided per source."""
    diag = diagnostic(5, shifts=(2.0, -1.0))
    diag = diag[~diag["id"].isin(["c0/shift+2.00/sync", "c0/shift-1.00/sync", "c1/mute/existence"])]
    diag = diag.reset_index(drop=True).assign(category="ball")
    right = np.random.default_rng(3).random(len(diag)) < 0.6
    wrong_of = {"sync": {"synced": None}, "existence": {"audio_state": None}, "consistency": {"match": None}}

    def rule(r):
        if not right[r.name]:
            return wrong_of[r["dimension"]]
        if r["dimension"] == "sync":
            return {"synced": bool(r["target_synced"]), "direction": r["target_direction"]}
        if r["dimension"] == "existence":
            return {"audio_state": "audio_described" if r["target_sound_present"] else "muted"}
        return {"match": "match" if r["target_match"] else "mismatch"}

    pred = structured(diag, rule)
    res = audit_interventions(diag, pred)
    ok = pd.Series(right, index=diag["id"])
    for d, iv, left_out in (("sync", "shift", "c0"), ("existence", "mute", "c1"), ("consistency", "swap", None)):
        rows = diag[(diag["dimension"] == d) & (diag["source_id"] != left_out)]
        for cond, key in (("original", "orig"), (iv, "interv")):
            assert res["dimensions"][d][key] == pytest.approx(100 * ok[rows.loc[rows["intervention"] == cond,
                                                                               "id"]].mean())
        n_rows = len(rows)
        assert res["dimensions"][d]["paired"] is True
        assert res["dimensions"][d]["rows"] == {"paired": n_rows, "unpaired": 0, "left_out": int(left_out is not None)}
    without = audit_interventions(diag.drop(columns="category"), pred)
    assert json.dumps(without, sort_keys=True, default=str) == json.dumps(res, sort_keys=True, default=str)

    ood = audit_interventions(diag.assign(category="ood-sync"), pred)["dimensions"]["sync"]
    every = diag[diag["dimension"] == "sync"]
    assert ood["orig"] == pytest.approx(100 * ok[every.loc[every["intervention"] == "original", "id"]].mean())
    assert ood["n"]["orig"] == 5 and ood["paired"] is False
    assert ood["rows"] == {"paired": len(every) - 1, "unpaired": 1, "left_out": 0}


def test_a_model_that_calls_every_shift_delayed_gets_half_of_them(tmp_path):
    """Yes/no scoring gave this model 100% on Shift; with the direction required it gets 50%."""
    diag = diagnostic(6, shifts=(2.0, -2.0))
    path = tmp_path / "p.jsonl"
    rows = [{"id": r.id, "response": "The audio is not synchronized: it is delayed." if r.intervention == "shift"
             else "The audio is synchronized with the video."} for r in diag[diag["dimension"] == "sync"].itertuples()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = audit_interventions(diag, read_predictions(path, diag), InterventionAuditConfig(n_resamples=300))
    assert res["dimensions"]["sync"]["orig"] == 100.0
    assert res["dimensions"]["sync"]["interv"] == 50.0 and res["dimensions"]["sync"]["gap"] == 50.0
    assert res["shift_yes_no"]["value"] == 100.0
    assert res["sync_binary_accuracy"]["value"] == 100.0
    assert res["sync_three_way_accuracy"]["value"] == pytest.approx(100 * (6 + 6) / 18)  # 6 originals + 6 of 12
    assert res["direction_accuracy"]["value"] == 50.0 and res["failure_modes"]["direction_confusion"] == 0.5
    assert res["offset_within_tolerance"]["value"] == 0.0  # no offset stated
    lo, hi = res["dimensions"]["sync"]["ci"]["interv"]
    assert lo == hi == 50.0  # every clip has one right and one wrong shift: the cluster bootstrap cannot move it


def test_the_builders_wrong_direction_shortcut_answer_is_a_wrong_shift_answer(tmp_path):
    """The DPO 'rejected' answer with the right offset in the wrong direction used to score as a correct Shift."""
    diag = diagnostic(3, shifts=(2.0, -1.5))
    ev = answers.Event("a ball hits the floor", 2.0, "a bounce", 2.0)
    path = tmp_path / "p.jsonl"
    rows = [{"id": r.id, "response": answers.shortcut_answer(ev, "shift", r.offset_s, wrong_direction=True)}
            for r in diag[(diag["dimension"] == "sync") & (diag["intervention"] == "shift")].itertuples()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = audit_interventions(diag, read_predictions(path, diag), InterventionAuditConfig(n_resamples=200))
    assert res["dimensions"]["sync"]["interv"] == 0.0 and res["shift_yes_no"]["value"] == 100.0
    assert res["failure_modes"]["direction_confusion"] == 1.0 and res["offset_within_tolerance"]["value"] == 0.0


def test_paper_minicpm_shift_arithmetic():
    """Thud §3.2: MiniCPM misses ~3/4 of the offsets and gets the sign wrong about half the time it flags one.
    Direction-aware scoring gives ~12.5% (Table 1 prints 13.7%); yes/no scoring would give 25%."""
    diag = diagnostic(400, shifts=(2.0, -2.0))

    def rule(r):
        k = int(r["source_id"][1:])
        if r["intervention"] != "shift":
            return {"synced": True, "direction": "none"}
        if k % 4:  # 3 clips in 4: offset missed
            return {"synced": True, "direction": "none"}
        return {"synced": False, "direction": "delay"}  # flagged, always "delay": right on +2, wrong on -2

    res = audit_interventions(diag, structured(diag, rule), InterventionAuditConfig(n_resamples=300))
    shift, yes_no = res["dimensions"]["sync"]["interv"], res["shift_yes_no"]["value"]
    assert shift == 12.5 and yes_no == 25.0
    printed = PAPER_TABLE1["MiniCPM-o-4.5"][1]
    assert abs(shift - printed) < 1.5 < 10 < abs(yes_no - printed)


def test_unparsed_shift_answers_are_wrong_in_the_offset_bands_too(tmp_path):
    diag = diagnostic(2)
    path = tmp_path / "p.jsonl"
    rows = [{"id": "c0/shift+2.00/sync", "response": "The audio is delayed by about 2 s."},
            {"id": "c1/shift+2.00/sync", "response": "Hard to tell."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = audit_interventions(diag, read_predictions(path, diag), InterventionAuditConfig(n_resamples=200))
    assert res["dimensions"]["sync"]["interv"] == 50.0
    assert res["sync_by_offset"]["(1, 2]"]["value"] == 50.0 and res["sync_by_offset"]["(1, 2]"]["n"] == 2
    assert res["offset_within_tolerance"]["value"] == 50.0


def test_structured_sync_fields_direction_offset_and_contradictions(tmp_path):
    diag = diagnostic(2, shifts=(2.0, -1.0))
    path = tmp_path / "p.csv"
    pd.DataFrame({"id": ["c0/shift+2.00/sync", "c0/shift-1.00/sync", "c1/shift+2.00/sync"],
                  "synced": ["false", "", "false"], "direction": ["", "early", ""], "offset_s": ["2", "", ""]}
                 ).to_csv(path, index=False)
    pred = read_predictions(path, diag).set_index("id")
    # no direction: the signed offset gives it; a direction alone is a "not synchronized" answer
    assert pred.loc["c0/shift+2.00/sync", "direction"] == "delay"
    assert pred.loc["c0/shift-1.00/sync", "synced"] is False and pred.loc["c0/shift-1.00/sync", "direction"] == "early"
    assert pred.loc["c1/shift+2.00/sync", "direction"] == "none"  # flagged without direction: wrong on Shift
    res = audit_interventions(diag, read_predictions(path, diag), InterventionAuditConfig(n_resamples=200))
    assert res["dimensions"]["sync"]["interv"] == 100 * 2 / 4
    for row, match in [({"synced": "true", "direction": "delay"}, "synced is true but direction"),
                       ({"synced": "false", "offset_s": "nan"}, "finite"),
                       ({"synced": "false", "direction": "sideways"}, "expected delay, early or none")]:
        pd.DataFrame([{"id": "c0/shift+2.00/sync", **row}]).to_csv(path, index=False)
        with pytest.raises(InputError, match=match) as err:
            read_predictions(path, diag)
        assert err.value.row == 1


def test_missing_and_unparseable_answers_count_as_wrong_and_are_reported(tmp_path):
    diag = diagnostic(3)
    path = tmp_path / "p.jsonl"
    rows = [{"id": "c0/original/sync", "response": "The sound is perfectly synchronized."},
            {"id": "c1/original/sync", "response": "I like this video."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pred = read_predictions(path, diag)
    res = audit_interventions(diag, pred)
    assert res["dimensions"]["sync"]["orig"] == pytest.approx(100 / 3)
    assert res["coverage"]["sync"]["answered"]["value"] == pytest.approx(2 / 6)
    assert res["coverage"]["sync"]["parsed"]["value"] == pytest.approx(1 / 6)
    assert res["coverage"]["existence"]["answered"]["value"] == 0.0


def test_a_dimension_without_predictions_is_not_available_and_empty_answers_are_unparsed(tmp_path):
    diag = diagnostic(3)
    rows = [{"id": r.id, "response": ("I hear a thud." if r.target_sound_present is not False else "It is silent.")
             if r.dimension == "existence" else "It matches." if r.target_match else "It does not match."}
            for r in diag[diag["dimension"] != "sync"].itertuples()]
    rows[0]["response"] = "  "  # c0/original/existence: empty, so unparsed (a miss), not a visual-only dodge
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = audit_interventions(diag, read_predictions(path, diag))
    assert res["dimensions"]["sync"]["orig"] is None and res["dimensions"]["sync"]["gap"] is None
    assert res["dimensions"]["sync"]["ci"]["gap"] == [None, None]
    assert res["avg_gap"] is None and res["avg_gap_ci"] == [None, None]  # eq. 10 needs all three dimensions
    assert res["failure_modes"]["offset_blindness"] is None and res["failure_modes"]["false_sync_alarm"] is None
    for key in ("shift_yes_no", "sync_binary_accuracy", "sync_three_way_accuracy", "offset_within_tolerance"):
        assert res[key]["value"] is None, key  # no sync answers: not available, not 0%
    assert all(v["value"] is None for v in res["sync_by_offset"].values())
    assert res["coverage"]["sync"]["answered"]["value"] == 0.0
    assert res["coverage"]["existence"]["parsed"]["value"] == pytest.approx(5 / 6)
    assert res["dimensions"]["existence"]["orig"] == pytest.approx(200 / 3)
    assert res["failure_modes"]["audio_dodge"] == 0.0 and res["failure_modes_n"]["audio_dodge"] == 5
    assert res["dimensions"]["consistency"]["gap"] == 0.0


def test_structured_offset_takes_its_sign_from_the_direction(tmp_path):
    diag = diagnostic(1, shifts=(-2.0,))
    path = tmp_path / "p.csv"
    pd.DataFrame({"id": ["c0/shift-2.00/sync"], "synced": ["0.0"], "direction": ["early"], "offset_s": [2]}).to_csv(
        path, index=False)
    pred = read_predictions(path, diag).set_index("id")
    assert pred.loc["c0/shift-2.00/sync", "offset_s"] == -2.0
    assert audit_interventions(diag, read_predictions(path, diag))["offset_mae"]["value"] == 0.0


def test_cluster_bootstrap_matches_a_naive_loop():
    rng = np.random.default_rng(5)
    num = rng.integers(0, 4, size=(3, 40)).astype(float)
    den = num + rng.integers(0, 3, size=(3, 40))
    point, samples = stats.cluster_ratio_resamples(num, den, n_resamples=200, seed=7)
    idx = stats.resample_indices(40, 200, 7)
    naive = np.array([[num[k, i].sum() / den[k, i].sum() for k in range(3)] for i in idx])
    np.testing.assert_allclose(samples, naive)
    np.testing.assert_allclose(point, num.sum(1) / den.sum(1))
    lo, hi = stats.percentile_ci(samples)
    np.testing.assert_allclose(lo, np.percentile(naive, 2.5, axis=0))


@pytest.mark.parametrize(("text", "expected"), [
    ("Yes, the audio is synchronized with the video.", (True, "none", 0.0)),
    ("It's in sync; there is no noticeable delay.", (True, "none", 0.0)),
    ("The audio is not synchronized: it lags the picture by about two seconds.", (False, "delay", 2.0)),
    ("Out of sync - the sound comes too soon, roughly 1.5 s before the impact.", (False, "early", -1.5)),
    ("The audio is delayed by half a second.", (False, "delay", 0.5)),
    ("The clip is misaligned.", (False, "none", None)),
    ("The sound is not delayed; it is in sync.", (True, "none", 0.0)),
    ("The audio is synchronized, neither early nor late.", (True, "none", 0.0)),
    ("Synchronized: it does not lag behind.", (True, "none", 0.0)),
    ("A cat jumps onto a table.", (None, None, None)),
])
def test_sync_extractor(text, expected):
    got = extract_sync(text)
    assert (got["synced"], got["direction"], got["offset_s"]) == expected


@pytest.mark.parametrize(("text", "state"), [
    ("The video is completely silent.", "muted"),
    ("There is no audible sound at all.", "muted"),
    ("I can't hear anything.", "muted"),
    ("The audio is muted.", "muted"),
    ("I hear a muted thud.", "audio_described"),
    ("I hear a loud thud followed by laughter.", "audio_described"),
    ("Background music plays while a man speaks.", "audio_described"),
    ("A man rides a bike down a hill and falls.", "visual_only"),
])
def test_existence_extractor(text, state):
    assert extract_existence(text)["audio_state"] == state


@pytest.mark.parametrize(("text", "match"), [
    ("The sound does not match the visuals; it seems dubbed from another clip.", "mismatch"),
    ("A glass shatters and I hear glass breaking, consistent with the scene.", "match"),
    ("I see a ball bounce and I hear a bounce.", "match"),
    ("A ball falls to the floor.", "none"),
])
def test_consistency_extractor(text, match):
    assert extract_consistency(text)["match"] == match


def test_generated_reference_answers_extract_to_their_targets():
    ev = answers.Event("a ball hits the floor", 2.0, "a bounce", 2.0)
    for off in (0.0, 2.0, -1.5):
        got = extract_sync(answers.sync_answer(ev, off))
        assert got["synced"] == (off == 0) and (got["offset_s"] == pytest.approx(off))
    assert extract_existence(answers.existence_answer(ev, False))["audio_state"] == "muted"
    assert extract_existence(answers.existence_answer(ev, True))["audio_state"] == "audio_described"
    assert extract_consistency(answers.consistency_answer(ev, "glass shattering", False))["match"] == "mismatch"
    assert extract_consistency(answers.consistency_answer(ev, None, True))["match"] == "match"


@pytest.mark.parametrize(("rows", "match"), [
    ([{"id": "nope", "response": "x"}], "id not in the dataset"),
    ([{"id": "c0/original/sync", "response": "x"}, {"id": "c0/original/sync", "response": "y"}], "duplicate id"),
    ([{"id": "c0/original/sync", "synced": "maybe"}], "expected true/false"),
    ([{"id": "c0/mute/existence", "audio_state": "loud"}], "expected muted"),
    ([{"id": "c0/original/sync", "answer": "x"}], "expected a 'response' column"),
])
def test_prediction_errors_name_row_and_id(tmp_path, rows, match):
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=match):
        read_predictions(path, diagnostic(2))


def test_csv_structured_predictions(tmp_path):
    diag = diagnostic(2)
    pd.DataFrame({"id": ["c0/original/sync", "c0/mute/existence", "c0/swap/consistency"],
                  "synced": ["true", "", ""], "sound_present": ["", "false", ""], "match": ["", "", "false"]}
                 ).to_csv(tmp_path / "p.csv", index=False)
    pred = read_predictions(tmp_path / "p.csv", diag).set_index("id")
    assert pred.loc["c0/original/sync", "synced"] is True
    assert pred.loc["c0/mute/existence", "audio_state"] == "muted"
    assert pred.loc["c0/swap/consistency", "match"] == "mismatch"


def test_cli_end_to_end_on_a_built_dataset(intervention_dataset, tmp_path, capsys):
    diag = load_diagnostic(intervention_dataset)
    full = pd.read_parquet(next((intervention_dataset / "diagnostic").glob("*.parquet")), columns=["id", "target"])
    with open(tmp_path / "oracle.jsonl", "w") as f:
        for r in full.itertuples():
            f.write(json.dumps({"id": r.id, "response": r.target}) + "\n")
    rc = main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions",
               str(tmp_path / "oracle.jsonl"), "--out", str(tmp_path / "rep"), "--n-resamples", "200",
               "--offset-tolerance", "0.25"])
    assert rc == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert set(result["dimensions"]) == {"sync", "existence", "consistency"}
    assert all(result["dimensions"][d][c] == 100.0 for d in result["dimensions"] for c in ("orig", "interv"))
    assert result["avg_gap"] == 0.0 and result["offset_mae"]["value"] == 0.0
    assert all(v == 0.0 for v in result["failure_modes"].values())
    for key in ("shift_yes_no", "sync_binary_accuracy", "sync_three_way_accuracy", "offset_within_tolerance"):
        assert result[key]["value"] == 100.0, key
    assert result["offset_within_tolerance"]["tolerance_s"] == 0.25
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "Table 1 layout" in report and "Qwen3-Omni (paper)" in report
    assert "Shift, yes/no only" in report and "Sync three-way (Fig. 6a)" in report
    assert "Offset within ±0.25 s (Fig. 6b)" in report
    assert "| \\|Δ\\| band (s) |" in report  # escaped: a bare | in a header splits the column
    assert (tmp_path / "rep" / "failure_modes.png").stat().st_size > 1000
    assert len(diag) == 42
    rc = main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions",
               str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "rep2")])
    assert rc == 2 and "file not found" in capsys.readouterr().err
    rc = main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions",
               str(tmp_path / "oracle.jsonl"), "--out", str(tmp_path / "rep3"), "--offset-tolerance", "nan"])
    assert rc == 2 and "offset_tolerance_s" in capsys.readouterr().err and not (tmp_path / "rep3").exists()


def test_llm_extractor_through_the_judge_runners(tmp_path):
    from omniaudit.data_builders.interventions.extract_llm import llm_fields

    assert llm_fields("sync", "audio early", "It comes about 1.5 seconds too soon.") == {
        "synced": False, "direction": "early", "offset_s": -1.5}
    assert llm_fields("sync", "unclear", "hmm") == {} and llm_fields("existence", None, "x") == {}
    diag = diagnostic(3)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": i, "response": "free text"}) + "\n" for i in diag["id"]))
    # scripted:always-a picks the first option: synchronized / audio_described / match, the visual shortcut
    shortcut = audit_interventions(diag, read_predictions(path, diag, "scripted:always-a"))
    assert shortcut["avg_gap"] == 100.0 and shortcut["failure_modes"]["mute_hallucination"] == 1.0
    # scripted:always-b picks the second: audio delayed / muted / mismatch
    denial = audit_interventions(diag, read_predictions(path, diag, "scripted:always-b"))
    assert denial["failure_modes"]["false_silence"] == 1.0 and denial["failure_modes"]["false_sync_alarm"] == 1.0
    rules = read_predictions(path, diag)  # the rule-based extractor cannot read "free text"
    assert rules["synced"].isna().all()


def test_answers_none_of_which_are_read_are_not_measured_not_a_gap_of_zero(tmp_path):
    """Every answer given but none read (27 of 27 unparsed once headlined Avg Gap 0.0 [0.0, 0.0])."""
    from omniaudit.evaluation.interventions.audit import scored_table
    from omniaudit.evaluation.scorecard.rules import gap_measures

    diag = diagnostic(3)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": r.id, "response": "Lorem ipsum dolor sit amet."}) + "\n"
                            for r in diag.itertuples()))
    pred = read_predictions(path, diag)
    res = audit_interventions(diag, pred)
    assert res["avg_gap"] is None and res["avg_gap_ci"] == [None, None]
    assert all(res["dimensions"][d]["gap"] is None for d in ("sync", "existence", "consistency"))
    scored = scored_table(diag, pred)
    assert not scored["parsed"].any()
    assert all(t.contrast is None for t in gap_measures(scored))  # the scorecard: not measured, never "clear"


def test_the_answers_as_read_go_into_scored_csv_for_a_readings_sample(tmp_path):
    """Each Thud answer's class in words beside its text and what read it, so `omniaudit readings sample` can put
    the interventions readings to a person too."""
    from omniaudit.evaluation.interventions.audit import scored_table
    from omniaudit.evaluation.readings import sample_readings

    replies = {"sync": "The audio is delayed by about 1.5 seconds.", "existence": "There is no sound at all.",
               "consistency": "The sound does not match what is shown."}
    diag = diagnostic(3)
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": r.id, "response": replies[r.dimension] if i % 4 else "Lorem ipsum."})
                            + "\n" for i, r in enumerate(diag.itertuples())))
    scored = scored_table(diag, read_predictions(path, diag))
    read = scored[scored["read_by"] == "rule"]
    assert set(read["reading"]) == {"audio late by 1.5 s", "muted", "mismatch"}
    assert (scored.loc[scored["read_by"].isna(), "reading"] == "none").all()
    scored.to_csv(tmp_path / "scored.csv", index=False)
    sample = sample_readings(tmp_path / "scored.csv", n=12)
    assert set(sample["reason"]) == {"rule", ""} and sample["raw"].str.startswith("dimension: ").all()
