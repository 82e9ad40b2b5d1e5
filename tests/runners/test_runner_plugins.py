"""Runner plugins: a backend from outside omniaudit, registered in code or installed as an ``omniaudit.runners`` entry
point, answers through ``judge`` and the scorecard like a built-in one; its identity is recorded and compared before
its answers are reused; a plugin that breaks the contract, or claims a built-in kind, is refused in one line."""

from __future__ import annotations

import json
import sys
from importlib.metadata import EntryPoint

import pytest

from omniaudit.cli import main
from omniaudit.errors import InputError
from omniaudit.runners import plugins
from omniaudit.runners.run import make_judge

ASKED: list[int] = []  # items answered, per call
VERSION = {"toy": 1}  # the toy model's weights: a new version answers differently


class OptionRunner:
    """Answers a closed item with one of its options, by position (``toy:first`` / ``toy:last``)."""

    def __init__(self, rest: str, sampling=None, seed=None) -> None:
        self.rest, self.sampling = rest, sampling

    def answer(self, items, progress=None) -> list[str]:
        ASKED.append(len(items))
        return [(item.options[0] if self.rest == "first" else item.options[-1]) if item.options else "no idea"
                for item in items]

    def identity(self) -> dict:
        return {"kind": "toy", "model": self.rest, "version": VERSION["toy"]}


@pytest.fixture
def toy():
    plugins.register_runner("toy", OptionRunner)
    ASKED.clear()
    yield
    plugins.unregister_runner("toy")


@pytest.fixture(scope="module")
def preference(tmp_path_factory, small_spec):
    from omniaudit.data_builders.preference import build_preference_dataset

    return build_preference_dataset(tmp_path_factory.mktemp("plug") / "pref", spec=small_spec)


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_registered_runner_answers_a_judge_run_and_is_recorded_by_its_identity(toy, preference, tmp_path):
    out = tmp_path / "toy.jsonl"
    assert main(["judge", "--dataset", str(preference), "--config", "judge", "--judge", "toy:first", "--out",
                 str(out), "-q"]) == 0
    written = rows(out)
    assert written and all(r["label"] == "A" and r["answer_path"] == "free" for r in written)
    assert written[0]["provenance"]["model"] == {"kind": "toy", "model": "first", "version": 1}
    assert sum(ASKED) == len(written)


def test_an_installed_entry_point_is_found_by_its_kind(tmp_path, monkeypatch, preference):
    (tmp_path / "lab_plugin.py").write_text(
        "class Last:\n"
        "    def __init__(self, rest, sampling=None, seed=None):\n        self.rest = rest\n"
        "    def answer(self, items, progress=None):\n        return [i.options[-1] for i in items]\n"
        "    def identity(self):\n        return {'kind': 'lab', 'model': self.rest}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    point = EntryPoint(name="lab", value="lab_plugin:Last", group=plugins.GROUP)
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None, **_: [point] if group == plugins.GROUP else [])
    assert "lab" in plugins.plugin_kinds()
    out = tmp_path / "lab.jsonl"
    assert main(["judge", "--dataset", str(preference), "--config", "judge", "--judge", "lab:v1", "--out", str(out),
                 "-q"]) == 0
    assert {r["label"] for r in rows(out)} == {"B"}
    sys.modules.pop("lab_plugin", None)


def test_the_scorecard_reuses_a_plugin_s_answers_only_while_its_identity_holds(toy, preference, tmp_path):
    argv = ["scorecard", "--model", "t=toy:first", "--audits", "preference", "--data", f"preference={preference}",
            "--n-resamples", "200", "--allow-uncalibrated", "--out", str(tmp_path / "card"), "-q"]
    assert main(argv) == 0
    first = sum(ASKED)
    card = json.loads((tmp_path / "card" / "scorecard.json").read_text(encoding="utf-8"))
    assert card["models"]["t"]["shortcuts"]["position"]["status"] == "flagged"  # always "A": the slot decides
    assert first > 0 and main(argv) == 0 and sum(ASKED) == first  # reused: nothing asked again
    VERSION["toy"] = 2  # new weights behind the same spec
    try:
        assert main(argv) == 0 and sum(ASKED) == 2 * first  # asked again
    finally:
        VERSION["toy"] = 1


class NoIdentity:
    def __init__(self, rest, **_):
        pass

    def answer(self, items, progress=None):
        return ["A"] * len(items)


class WrongKind(NoIdentity):
    def identity(self):
        return {"kind": "other", "model": "x"}


def test_a_plugin_that_breaks_the_contract_or_claims_a_built_in_kind_is_refused(toy):
    with pytest.raises(InputError, match="built-in runner kind"):
        plugins.register_runner("hf", OptionRunner)
    with pytest.raises(InputError, match="lower-case identifier"):
        plugins.register_runner("My-Lab", OptionRunner)
    plugins.register_runner("broken", NoIdentity)
    plugins.register_runner("liar", WrongKind)
    try:
        with pytest.raises(InputError, match=r"without identity\(\)"):
            make_judge("broken:x")
        with pytest.raises(InputError, match="'kind' is 'liar'"):
            make_judge("liar:x")
    finally:
        plugins.unregister_runner("broken")
        plugins.unregister_runner("liar")
    with pytest.raises(InputError, match="answers free text"):
        make_judge("toy:first", answer_format="choice")
    with pytest.raises(InputError, match="unknown judge kind.*toy:"):
        make_judge("nothere:x")


@pytest.mark.slow
def test_a_plugin_without_media_is_skipped_where_items_need_audio_and_one_that_hears_is_asked(toy, preference,
                                                                                             protocol_dataset,
                                                                                             tmp_path):
    data = ["--data", f"preference={preference}", f"protocols={protocol_dataset}"]
    argv = ["scorecard", "--model", "t=toy:first", "--audits", "preference,protocols", *data, "--n-resamples", "200",
            "--allow-uncalibrated", "-q"]
    assert main([*argv, "--out", str(tmp_path / "deaf")]) == 0
    audits = json.loads((tmp_path / "deaf" / "scorecard.json").read_text(encoding="utf-8"))["models"]["t"]["audits"]
    assert audits["preference"]["status"] == "ran" and audits["protocols"]["status"] == "skipped"
    assert "audio" in audits["protocols"]["reason"]

    class Hearing(OptionRunner):
        accepts = {"audio"}

    plugins.register_runner("toy", Hearing)
    assert main([*argv, "--out", str(tmp_path / "hears")]) == 0
    audits = json.loads((tmp_path / "hears" / "scorecard.json").read_text(encoding="utf-8"))["models"]["t"]["audits"]
    assert audits["protocols"]["status"] == "ran"
