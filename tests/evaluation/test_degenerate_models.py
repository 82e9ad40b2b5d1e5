"""Degenerate models (a constant word, empty replies, the question echoed back, byte noise) through every audit that
reads free answers: each reads as no answer, never as a finding."""

import json

import pytest

from omniaudit.cli import main
from omniaudit.runners.items import load_items


def _noise(item) -> str:
    """What a random tiny model writes: undecodable bytes and fragments, different for every item."""
    import hashlib

    seed = hashlib.sha256(item.id.encode()).digest()
    return "\ufffd" + "".join(chr(97 + b % 26) if b % 5 else " " for b in seed[:10]) + "\x01\ufffd"


REPLIES = {"constant": lambda item: "Audio", "empty": lambda item: "", "echo": lambda item: item.prompt,
           "noise": _noise}


def _write(path, items, reply):
    path.write_text("".join(json.dumps({"id": it.id, "order": it.order, "raw": reply(it), "label": None,
                                        "parsed": False if it.options else None}) + "\n" for it in items))
    return path


@pytest.fixture(scope="module")
def composition_dataset(tmp_path_factory):
    from omniaudit.data_builders.composition import build_composition_dataset

    return build_composition_dataset(tmp_path_factory.mktemp("comp") / "ds", n_synthetic=12)


@pytest.mark.parametrize("kind", list(REPLIES))
def test_interventions_no_gap_no_failure_mode(kind, intervention_dataset, tmp_path):
    preds = _write(tmp_path / "p.jsonl", load_items(intervention_dataset, "diagnostic"), REPLIES[kind])
    assert main(["audit", "interventions", "--dataset", str(intervention_dataset), "--predictions", str(preds),
                 "--n-resamples", "20", "--out", str(tmp_path / "r")]) == 0
    audit = json.loads((tmp_path / "r" / "audit.json").read_text())
    assert audit["avg_gap"] in (0.0, None)
    assert not any(audit["failure_modes"].values())  # no audio dodge, no false alarm: nothing was read


@pytest.mark.parametrize("kind", list(REPLIES))
def test_composition_failures_are_unanswered_not_dominance(kind, composition_dataset, tmp_path):
    files = [_write(tmp_path / f"{c}.jsonl", load_items(composition_dataset, c), REPLIES[kind])
             for c in ("samples", "ablations")]
    assert main(["audit", "composition", "--dataset", str(composition_dataset), "--predictions",
                 *(f"m={f}" for f in files), "--out", str(tmp_path / "r")]) == 0
    audit = json.loads((tmp_path / "r" / "audit.json").read_text())
    overall = audit["failure_decomposition"]["models"]["m"]["overall"]
    assert overall["n_classified"] == 0 and overall["dominance_share"] is None


@pytest.mark.parametrize("kind", list(REPLIES))
def test_protocol_judge_modes_say_not_answering(kind, protocol_dataset, tmp_path):
    files = [_write(tmp_path / f"{c}.jsonl", load_items(protocol_dataset, c), REPLIES[kind])
             for c in ("blueprint", "reference", "pairwise", "cue_conflict")]
    assert main(["audit", "protocols", "--dataset", str(protocol_dataset), "--predictions",
                 *(f"j={f}" for f in files), "--n-resamples", "20", "--out", str(tmp_path / "r")]) == 0
    text = (tmp_path / "r" / "report.md").read_text()
    assert "not answering" in text
    modes = json.dumps(json.loads((tmp_path / "r" / "audit.json").read_text()).get("modes", {}))
    assert "engaged" not in modes and "label-following" not in modes and "locked" not in modes


def test_noise_is_no_answer_but_short_answers_are():
    from omniaudit.answer_language import unreadable
    from omniaudit.runners.run import usable

    noise = ["\ufffdis hi\x01 s\ufffd pitz", "xq zzk pwt", "???", "bcd fgh jkl mno"]
    answers = ["TV", "5", "红色", "red", "Four red squares.", "rhythm and blues", "sí, dos", "hmm", "I see 3 dogs",
               "No.", "Sí", "42", "B", "Nyx", "ok", "C'est ça", "Ja", "是的", "bounces at 2 s, 4 s, 6 s",
               "Shift: -2 s, +2 s, 0 s", "在 2 s、4 s 和 6 s", "The answer: B, C, D", "B and C", "It's B's",
               "TV, CD, DVD", "👍", "✓", "声音和画面是同步的，说话的人很开\ufffd"]  # the last: cut mid-character
    assert [unreadable(t) for t in noise] == [True] * 4
    assert [unreadable(t) for t in answers] == [False] * len(answers)
    row = {"parsed": None, "option_probs": None}
    assert not any(usable({**row, "raw": t}) for t in noise) and all(usable({**row, "raw": t}) for t in answers)
