"""Issue 24: planted policies behind an OpenAI-compatible server answer the scorecard's own default items, end to end
through ``omniaudit scorecard``, and every verdict is as planted.

One fake server (tests/chat_server.py) serves every planted model, routing on the request's ``model``; each policy
(tests/planted_policies.py) decides from the request body alone. ``--dialect vllm`` sends audio as ``input_audio``
and a video with its soundtrack as ``video_url``, so all four audits (preference, interventions, protocols,
composition) run for every served model: none is skipped.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from chat_server import ChatServer
from planted_policies import (
    REFUSAL,
    answers,
    concat_lock,
    is_concat_pairwise,
    label_follower,
    longer_in_self_correcting_prose,
    no_audio_fixed,
    random_guesser,
    refuser,
    router,
    supplied_label,
)

from omniaudit.cli import main
from omniaudit.evaluation.scorecard import SHORTCUTS
from omniaudit.evaluation.scorecard.card import rank_key
from omniaudit.evaluation.scorecard.inference import ALPHA
from omniaudit.evaluation.scorecard.runner import MIN_RESAMPLES

AUDITS = ("preference", "interventions", "protocols", "composition")
# content-blind guessers: shortcut-free, so a flag among them is a false positive (the family-wise control allows 5%
# per model). These seeds were checked to give no flag on the small defaults (a guess hashes the request, clip bytes
# included: when x264 went to plain C, seed 3 drew a false visual_inference flag, a 1-in-20 event per model, and was
# replaced); the calibration of the statistics itself is simulated in test_scorecard_calibration.py, here the point
# is the plumbing end to end.
GUESSERS = {f"guess-{seed}": random_guesser(seed) for seed in (1, 2, 4)}
POLICIES = {**GUESSERS, "concat-lock": concat_lock(11), "label-copy": label_follower(12),
            "no-audio-fixed": no_audio_fixed(13), "longer-corrects-itself": longer_in_self_correcting_prose(14),
            "refuser": refuser}
# what each planted model must be flagged for (the guessers and the confounded one: nothing)
# a self-correcting answer names the other slot first: read right, the longer pick is style and never position
PLANTED = {**{name: [] for name in GUESSERS}, "concat-lock": ["position"], "label-copy": ["label_following"],
           "no-audio-fixed": [], "longer-corrects-itself": ["style"], "refuser": []}


@pytest.fixture(scope="module")
def run(tmp_path_factory, small_defaults) -> dict:
    """One scorecard run of every planted model (and the oracle): {out, rc, card, seconds, models asked}."""
    out = tmp_path_factory.mktemp("planted") / "card"
    with ChatServer(answer=router(POLICIES), models=[{"id": name, "object": "model"} for name in POLICIES]) as server:
        # the default --concurrency (4): ChatServer listens with a backlog of 5, more connections wait on SYN retries
        argv = ["scorecard", "--model", *(f"{name}=openai:{name}@{server.url}" for name in POLICIES),
                "--size", "small", "--audits", ",".join(AUDITS), "--dialect", "vllm", "--no-cache",
                "--n-resamples", str(MIN_RESAMPLES), "--out", str(out)]
        start = time.perf_counter()
        try:
            rc = main(argv)
        except SystemExit as exc:  # calibration failed: the card is written, the exit is 3
            rc = exc.code
        seconds = time.perf_counter() - start
        asked = {body["model"] for body in server.bodies}
    card = json.loads((out / "scorecard.json").read_text(encoding="utf-8"))
    return {"out": out, "rc": rc, "card": card, "seconds": seconds, "asked": asked}


def _status(card: dict, name: str) -> dict[str, str]:
    return {s: card["models"][name]["shortcuts"][s]["status"] for s in SHORTCUTS}


def _body(text: str, system: str | None = None, audio: int = 1) -> dict:
    parts = [{"type": "input_audio", "input_audio": {"data": f"clip{i}", "format": "wav"}} for i in range(audio)]
    messages = [{"role": "system", "content": system}] if system else []
    user = {"role": "user", "content": [*parts, {"type": "text", "text": text}]}
    return {"model": "m", "messages": [*messages, user]}


def test_the_policies_read_the_builders_own_prompts():
    """Every way a protocols item supplies a label (prompts.py), the pairwise formats and the free-form answers."""
    from omniaudit.data_builders.interventions.answers import QUESTIONS
    from omniaudit.data_builders.protocols import prompts

    labels = ["angry", "happy", "neutral", "sad"]
    listen, read = prompts.question("emotion", labels, True), prompts.question("emotion", labels, False)
    for placement in prompts.PLACEMENTS:
        system, text = prompts.with_reference(listen, "sad", placement)
        assert supplied_label(_body(text, system)) == "sad", placement
    for framed in (True, False):
        blueprint = prompts.blueprint("Hello.", "spk_1", 2.0, "pitch is low", "emotion", "happy", framed)
        assert supplied_label(_body(f"{blueprint}\n\n{read}", audio=0)) == "happy"
    said = prompts.specialist_says("emotion", "angry")
    assert supplied_label(_body(f"{said[0].upper() + said[1:]}\n{listen}")) == "angry"
    assert supplied_label(_body(listen)) is None
    assert supplied_label(_body(f"{prompts.blueprint('Hi.', 'spk_1', 2.0, None, 'emotion', None)}\n\n{read}")) is None
    for fmt, audio in (("concat", 1), ("native", 2)):
        body = _body(prompts.pairwise_text("cleanness", None, fmt, False), audio=audio)
        assert answers(body) == ("A", "B") and is_concat_pairwise(body) == (fmt == "concat")
    assert all(len(answers(_body(q, audio=0))) == (3 if d == "sync" else 2) for d, q in QUESTIONS.items())
    assert refuser(_body(listen)) == REFUSAL


@pytest.mark.slow
def test_the_run_is_calibrated_and_every_model_is_summarised(run):
    card = run["card"]
    assert run["rc"] == 0, card["calibration"]
    assert card["calibrated"] and all(c["ok"] for c in card["calibration"].values())
    assert run["asked"] == set(POLICIES)  # every served model was asked, through the one server
    assert set(card["models"]) == {*POLICIES, "oracle"}
    for name, model in card["models"].items():
        assert isinstance(model["summary"], str) and model["summary"], name
        assert model["summary"] in (run["out"] / "scorecard.md").read_text(encoding="utf-8")
        expected = "not answering" if name == "refuser" else "ran"
        assert {a: e["status"] for a, e in model["audits"].items()} == dict.fromkeys(AUDITS, expected), name
    assert {m: card["flagged"][m] for m in PLANTED} == PLANTED
    assert run["seconds"] < 180, f"the planted scorecard took {run['seconds']:.0f} s"


@pytest.mark.slow
def test_content_blind_guessers_are_not_flagged_under_the_family_wise_control(run):
    card = run["card"]
    flags = [(name, s) for name in GUESSERS for s in SHORTCUTS if _status(card, name)[s] == "flagged"]
    assert not flags, flags  # an occasional false positive is allowed by the statistics; these seeds give none
    for name in GUESSERS:
        model = card["models"][name]
        counted = [e for v in model["shortcuts"].values() for e in v["evidence"] if e["counts"] and e["measured"]]
        m = len(counted)
        assert m >= 5 and model["family_size"] == m, (name, m, model["family_size"])
        for e in counted:  # one Bonferroni family per model: simultaneous intervals, adjusted p-values
            assert e["family_size"] == m
            assert e["ci_level"] == pytest.approx(1 - (2 if e["side"] == "above" else 1) * ALPHA / m)
            assert e["p_adjusted"] == pytest.approx(min(1.0, e["p"] * m))
        assert _status(card, name)["position"] in ("clear", "inconclusive")
        assert "not answering" not in _status(card, name).values()


@pytest.mark.slow
def test_a_lock_on_the_concatenated_format_is_flagged_there_only(run):
    card = run["card"]
    position = card["models"]["concat-lock"]["shortcuts"]["position"]
    assert position["status"] == "flagged" and position["stratum"] == "concat"
    lock = {e["stratum"]: e for e in position["evidence"] if e.get("key") == "lock"}
    assert lock["concat"]["flagged"] and lock["concat"]["value"] == 1.0  # the same slot in AB and BA, every trial
    assert not lock["native"]["flagged"] and lock["native"]["value"] < 1.0
    slot_a = next(e for e in position["evidence"] if e.get("key") == "slot_a")
    assert not slot_a["flagged"]  # the preference pairs are guessed
    assert card["flagged"]["concat-lock"] == ["position"]
    assert card["models"]["concat-lock"]["summary"] == "flags position (concat)"


@pytest.mark.slow
def test_copying_the_supplied_label_is_label_following(run):
    card = run["card"]
    label = card["models"]["label-copy"]["shortcuts"]["label_following"]
    assert label["status"] == "flagged"
    cue = {e["stratum"]: e for e in label["evidence"] if e.get("key") == "cue"}
    assert set(cue) == {"all", "blueprint", "reference", "cue_conflict"}
    for protocol, e in cue.items():  # the wrong label always when shown, a 1/k guess when not
        assert e["flagged"] and e["value"] > 0.5 and e["ci"][0] > e["null"], (protocol, e)
    assert card["flagged"]["label-copy"] == ["label_following"]


@pytest.mark.slow
def test_answering_otherwise_without_audio_is_not_label_following(run):
    """The first option whenever no audio is sent (label shown or not), a guess with audio: its answers change with
    the media, never with the label, and the matched contrast (same clip, same media) sees no label following."""
    card = run["card"]
    label = card["models"]["no-audio-fixed"]["shortcuts"]["label_following"]
    assert label["status"] in ("clear", "inconclusive"), label
    cue = {e["stratum"]: e for e in label["evidence"] if e.get("key") == "cue"}
    for protocol, e in cue.items():
        assert not e["flagged"] and e["ci"][0] <= e["null"] <= e["ci"][1], (protocol, e)
    assert card["flagged"]["no-audio-fixed"] == []


@pytest.mark.slow
def test_a_model_that_answers_nothing_is_not_answering_and_ranks_below_a_measured_one(run):
    card = run["card"]
    assert _status(card, "refuser") == dict.fromkeys(SHORTCUTS, "not answering")
    assert card["models"]["refuser"]["summary"] == "nothing measured (not answering)"
    for entry in card["models"]["refuser"]["audits"].values():
        assert entry["parse_rate"] is not None and entry["parse_rate"] < 0.5 and entry["reason"]
    # the leaderboard of scorecard.md (models under test, best first), in rank_key's order
    page = (run["out"] / "scorecard.md").read_text(encoding="utf-8")
    board = page.split("### Leaderboard", 1)[1].split("\n## ", 1)[0]
    ranked = [m.group(1) for m in re.finditer(r"^\| \d+ \| ([\w.-]+) \|", board, re.MULTILINE)]
    assert sorted(ranked) == sorted(POLICIES)
    assert ranked == sorted(POLICIES, key=lambda m: rank_key(card["models"][m], m))
    # every measured model without a flag that rules some shortcut out ranks above the one that answered nothing
    measured = [m for m in POLICIES if "clear" in _status(card, m).values() and not card["flagged"][m]]
    assert len(measured) >= 2, {m: _status(card, m) for m in POLICIES}
    for name in measured:
        assert ranked.index(name) < ranked.index("refuser"), (name, ranked)


def test_a_model_that_answers_nothing_ranks_below_every_measured_one():
    flagged = {"shortcuts": {s: {"status": "flagged"} for s in SHORTCUTS}}
    silent = {"shortcuts": {s: {"status": "not answering"} for s in SHORTCUTS}}
    unsure = {"shortcuts": {s: {"status": "inconclusive"} for s in SHORTCUTS}}
    assert rank_key(unsure, "unsure") < rank_key(silent, "silent")
    assert rank_key(flagged, "flagged") < rank_key(silent, "silent")


@pytest.mark.slow  # the planted server's scorecard run, shared by the module: about a minute
def test_the_card_prescribes_the_remedy_of_each_shortcut_flagged_for_a_served_model(run):
    """Each flagged shortcut of a model under test gets its remedy from the shortcut table, with the commands that
    build its training set and train it; shortcuts flagged for nobody get none."""
    remedies = run["card"]["remedies"]
    flagged = {s for name, found in PLANTED.items() for s in found}
    assert set(remedies) == flagged
    assert remedies["position"]["models"] == ["concat-lock"]
    position = remedies["position"]["commands"]  # pairwise_judge.py trains both orders; single order is the control
    assert any("pairwise_judge.py" in c and "single_order" not in c for c in position)
    assert any("pairwise_judge_single_order.yaml" in c for c in position)
    assert any(c.startswith("omniaudit remedy label_following") for c in remedies["label_following"]["commands"])
    assert any("reward_odin.py" in c for c in remedies["style"]["commands"])
    card = (run["out"] / "scorecard.md").read_text(encoding="utf-8")
    assert "## Remedies" in card and "label_following (flagged for label-copy)" in card
