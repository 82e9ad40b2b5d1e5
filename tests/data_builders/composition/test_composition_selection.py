"""C3PO benchmark construction: the auditor pass (paper's rubric through a runner; scripted auditors), the generator's
self-audit flags and the --min-confidence filter, from generated samples to the selected benchmark."""

import json

import pandas as pd
import pytest

from omniaudit.cli import main
from omniaudit.data_builders.composition import read_samples, select
from omniaudit.data_builders.composition.auditor import AUDITOR_PROMPT, parse_audit
from omniaudit.errors import InputError


@pytest.mark.parametrize(("raw", "expected"), [
    ('{"template_id": "T", "decision": "ACCEPT", "failure_pillar": null, "rationale": "ok", '
     '"generation_confidence_score": "4", "difficulty_score": 7}', ("ACCEPT", 7, None)),
    ('<think>{"decision": "ACCEPT", "difficulty_score": 2}</think>```json\n{"decision": "reject", '
     '"failure_pillar": "Query Sanitization", "difficulty_score": "-1"}\n```', ("REJECT", -1, "Query Sanitization")),
    ('{"decision": "ACCEPT", "difficulty_score": 11}', None),  # outside 1-10
    ('{"decision": "ACCEPT", "difficulty_score": 0}', None),
    ('{"decision": "ACCEPT", "difficulty_score": 6.5}', None),
    ('{"decision": "MAYBE", "difficulty_score": 6}', None),
    ("ACCEPT, difficulty 6", None),  # no JSON object
    (None, None),
])
def test_the_auditor_answer_is_read_as_the_papers_json(raw, expected):
    parsed = parse_audit(raw)
    assert (parsed and (parsed["decision"], parsed["difficulty"], parsed["failure_pillar"])) == (expected or None)


def test_the_prompt_is_the_papers_auditor_prompt():
    text = AUDITOR_PROMPT.format(SCORE=4, TEMPLATE_LOGIC="LOGIC", SAMPLE_DATA="DATA")
    assert text.startswith("You are the **Multimodal Benchmark Auditor**.")
    assert "**THE 4-PILLAR EVALUATION RUBRIC**" in text and '"decision": "ACCEPT" or "REJECT"' in text
    assert text.endswith("**Generation Confidence Score:** 4 / 5 **Generation Logic:** LOGIC **Sample Information:** "
                         "DATA Evaluate this sample against the 4 Pillars. Output the strict JSON decision.")


def _samples(**overrides):
    base = {"template_id": "T", "template_name": "T", "category": "IC", "tier": 1, "question": "q", "answer": "a",
            "evidence_modality": "image", "auditor_decision": "ACCEPT", "difficulty": 3, "video": None,
            "audio": None, "image": "x"}
    rows = [{**base, "id": f"s{k}", "generation_confidence": 1 + k % 5, "self_audit_passed": k != 7}
            for k in range(10)]
    return pd.DataFrame(rows).assign(**overrides)


def test_min_confidence_and_self_audit_filter_the_selection_by_hand():
    chosen = select(_samples(), target=25, seed=0, min_confidence=4)
    # confidence 1 + k % 5 >= 4: k in {3, 4, 8, 9}; k = 7 failed its self-audit (and has confidence 3 anyway)
    assert sorted(chosen["id"]) == ["s3", "s4", "s8", "s9"]
    assert sorted(select(_samples(), target=25, seed=0)["id"]) == [f"s{k}" for k in range(10) if k != 7]
    with pytest.raises(InputError, match="minimum generation confidence"):
        select(_samples(), min_confidence=6)


def _write_samples(folder, rows):
    (folder / "x.png").write_bytes(__import__("base64").b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"))
    path = folder / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_self_audit_flags_are_read_from_an_object_or_columns(tmp_path):
    base = {"template_id": "T", "template_name": "T", "category": "IC", "tier": 1, "question": "q", "answer": "a",
            "evidence_modality": "image", "generation_confidence": 4, "auditor_decision": "ACCEPT",
            "difficulty": 3, "image": "x.png"}
    audit = {"mute_test_passed": True, "blind_test_passed": True, "prior_test_passed": True,
             "ambiguity_check_passed": True, "notes": "fine"}
    rows = [{**base, "id": "ok", "self_audit": audit},
            {**base, "id": "prior", "self_audit": {**audit, "prior_test_passed": False}},
            {**base, "id": "flat", "blind_test_passed": "false"},
            {**base, "id": "none"}]
    table = read_samples(_write_samples(tmp_path, rows))
    assert dict(zip(table["id"], table["self_audit_passed"], strict=True)) == {
        "ok": True, "prior": False, "flat": False, "none": True}
    bad = _write_samples(tmp_path, [{**base, "id": "x", "self_audit": {**audit, "mute_test_passed": "perhaps"}}])
    with pytest.raises(InputError, match="self-audit flag") as err:
        read_samples(bad)
    assert "s.jsonl:row 1" in str(err.value) and "mute_test_passed" in str(err.value)


class ScriptedAuditor:
    """Answers from the sample's id in the prompt: even samples ACCEPT with difficulty 1 + k % 10, odd ones REJECT;
    sample 5 gets an unreadable answer. Records what it was sent."""

    def __init__(self):
        self.items = []

    def answer(self, items):
        self.items += items
        out = []
        for item in items:
            k = int(item.id[1:])
            if k == 5:
                out.append("I think this one is fine.")
                continue
            decision = "ACCEPT" if k % 2 == 0 else "REJECT"
            out.append(json.dumps({"template_id": "x", "decision": decision, "failure_pillar": None,
                                   "rationale": f"r{k}", "difficulty_score": 1 + k % 10}))
        return out


def test_generated_samples_to_selected_benchmark_without_hand_scoring(tmp_path, monkeypatch):
    from omniaudit.data_builders.composition.synthetic import synthesize_samples

    generated = synthesize_samples(tmp_path / "gen", n=12, seed=1)
    rows = [json.loads(line) for line in generated.read_text().splitlines()]
    for k, r in enumerate(rows):  # as a generator writes them: no auditor columns yet, a self-audit object
        r.pop("auditor_decision"), r.pop("difficulty")
        r["generation_confidence"] = 1 + k % 5
        r["self_audit"] = {"mute_test_passed": k != 4, "blind_test_passed": True}
    generated.write_text("".join(json.dumps(r) + "\n" for r in rows))
    auditor = ScriptedAuditor()
    import omniaudit.runners as judges

    monkeypatch.setattr(judges, "make_judge", lambda spec, **kw: auditor)
    audited = tmp_path / "audited.jsonl"
    assert main(["composition-auditor", "--samples", str(generated), "--auditor", "scripted:auditor", "--out",
                 str(audited)]) == 0
    prompt = auditor.items[3].prompt
    assert "**Generation Confidence Score:** 4 / 5" in prompt  # sample 3: confidence 1 + 3 % 5
    assert json.loads(prompt.split("**Sample Information:** ")[1].split(" Evaluate this sample")[0])["question"] \
        == rows[3]["question"]
    assert [p.kind for p in auditor.items[0].media] == ["image", "audio"]  # the sample's media, in prompt order
    out = [json.loads(line) for line in audited.read_text().splitlines()]
    assert [r["auditor_decision"] for r in out] == ["ACCEPT" if k % 2 == 0 and k != 5 else "REJECT"
                                                    for k in range(12)]
    assert (out[5]["difficulty"], out[5]["auditor_parsed"]) == (-1, False) and out[6]["difficulty"] == 7
    assert main(["build", "composition", "--samples", str(audited), "--min-confidence", "3", "--out",
                 str(tmp_path / "ds")]) == 0
    selected = pd.read_parquet(next((tmp_path / "ds" / "samples").glob("*.parquet")))
    # by hand: ACCEPT (even k), confidence 1 + k % 5 >= 3, self-audit passed (k != 4)
    expected = [rows[k]["id"] for k in range(12) if k % 2 == 0 and 1 + k % 5 >= 3 and k != 4]
    assert sorted(selected["id"]) == sorted(expected)
    assert dict(zip(selected["id"], selected["difficulty"], strict=True)) == {
        rows[k]["id"]: 1 + k % 10 for k in range(12) if rows[k]["id"] in expected}
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "below generation confidence 3" in card


def test_a_build_says_when_the_bucket_target_left_eligible_samples_out(tmp_path, capsys):
    """A larger input does not make a larger set past --target per bucket: the build says how many it left out."""
    assert main(["build", "composition", "--synthetic", "24", "--target", "2", "--out", str(tmp_path / "capped")]) == 0
    info = json.loads((tmp_path / "capped" / "build_info.json").read_text())
    assert info["selected"] < info["eligible"] <= info["read"] == 24 and info["target"] == 2
    said = capsys.readouterr().out
    assert (f"note: {info['selected']} of {info['eligible']} eligible samples selected: --target 2 per category x "
            f"difficulty bucket left {info['eligible'] - info['selected']} out") in said
    assert main(["build", "composition", "--synthetic", "24", "--target", "50", "--out", str(tmp_path / "all")]) == 0
    info = json.loads((tmp_path / "all" / "build_info.json").read_text())
    assert info["selected"] == info["eligible"] and "note:" not in capsys.readouterr().out
