"""``omniaudit annotate`` (Thud appendix B): annotators' event times as columns, then the agreement filter."""

import json

import pyarrow.parquet as pq
import pytest
from media_clips import noise_audio, write_clip

from omniaudit.data_builders.interventions import build_interventions_dataset, read_manifest
from omniaudit.data_builders.interventions.annotate import Annotator, annotate_manifest, parse_annotator
from omniaudit.data_builders.interventions.annotation_answers import parse_annotation, parse_time
from omniaudit.errors import InputError
from omniaudit.runners.items import Answer


def gem(v, a, ve="ball hits the floor", ae="thud"):
    return json.dumps({"visual_event": ve, "visual_time": v, "audio_event": ae, "audio_time": a})


# Two scripted annotators (gem: video + audio, the whole tuple; gpt: pictures only) and a human audio column.
# Hand count at the paper's tolerances (ε_v = 0.8 s, ε_a = 0.5 s):
ROWS = [
    ("c1", gem(1.0, 1.1), '{"visual_time": 1.5}', None),  # visual spread 0.5, audio one value: kept
    ("c2", gem(1.0, 1.2), '{"visual_time": 1.9}', None),  # visual spread 0.9 > 0.8: rejected
    ("c3", gem("00:02.0", "0:02.3"), '{"visual_time": "2.4 s"}', 2.9),  # audio 2.3 vs human 2.9: 0.6 > 0.5
    ("c4", gem(1.0, None, ae="none"), '{"visual_time": 1.0}', None),  # no audible sound: discarded
    ("c5", gem(2.0, 2.1), "```json\n{\"visual_time\": 2.8}\n```", 2.55),  # spreads 0.8 and 0.45: kept (boundary)
    ("c6", gem(1.0, 1.0), "I cannot tell from these frames.", None),  # gpt gives no time: discarded
    ("c7", gem(1.0, 9.0), '{"visual_time": 1.0}', None),  # 9 s is past the end of a 4 s clip: discarded
]
KEPT = ["c1", "c5"]


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("annot")
    write_clip(d / "a.mp4", seconds=4.0, audio=noise_audio(4.0, 0))
    write_clip(d / "b.mp4", seconds=4.0, audio=noise_audio(4.0, 1))
    return d


def write_manifest(folder, rows=ROWS, name="manifest.jsonl"):
    path = folder / name
    lines = []
    for i, (cid, g, p, human) in enumerate(rows):
        rec = {"id": cid, "video": "a.mp4" if i % 2 == 0 else "b.mp4", "category": f"k{i % 2}",
               "reply_gem": g, "reply_gpt": p}
        if human is not None:
            rec["audio_time_human"] = human
        lines.append(json.dumps(rec) + "\n")
    path.write_text("".join(lines))
    return path


ANNOTATORS = ["gem=column:reply_gem", "gpt:visual=column:reply_gpt"]


def test_two_scripted_annotators_at_the_paper_thresholds(clip_dir, tmp_path):
    out = tmp_path / "annotated.jsonl"
    result = annotate_manifest(write_manifest(clip_dir), out, ANNOTATORS)
    assert result.rows == 7 and result.annotators == ["gem", "gpt"] and result.discarded == 3
    assert result.problems == {"gem": 0, "gpt": 1}
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["c3"]["visual_time_gem"] == 2.0 and rows["c3"]["audio_time_gem"] == 2.3
    assert rows["c3"]["visual_time_gpt"] == 2.4 and "audio_time_gpt" not in rows["c3"]  # visual-only annotator
    assert rows["c1"]["visual_time"] == 1.0 and rows["c1"]["audio_time"] == 1.1  # filled from the primary (gem)
    assert rows["c1"]["visual_event"] == "ball hits the floor" and rows["c1"]["audio_event"] == "thud"
    assert rows["c6"]["annotation_gpt"] == "I cannot tell from these frames." and rows["c6"]["visual_time_gpt"] is None
    assert rows["c4"]["discard"] == "gem: no audible sound" and rows["c4"]["audio_time_gem"] is None
    assert rows["c6"]["discard"].startswith("gpt: no usable visual time")
    assert rows["c7"]["discard"] == "gem: audio time 9 s is past the end of the clip (4.00 s)"
    assert rows["c1"]["discard"] == "" and rows["c3"]["audio_time_human"] == 2.9  # the input's columns are kept
    m = read_manifest(out)
    assert list(m.clips["id"]) == KEPT
    reasons = {r["id"]: r["reason"] for r in m.rejected}
    assert reasons["c2"] == "visual timestamps disagree: spread 0.90 s > 0.8 s"
    assert reasons["c3"] == "audio timestamps disagree: spread 0.60 s > 0.5 s"
    assert {k: reasons[k].split(":")[0] for k in ("c4", "c6", "c7")} == dict.fromkeys(("c4", "c6", "c7"), "discarded")
    assert result.agreement == m.summary() == {
        "rows": 7, "passed_agreement": 2, "rejected": 5,
        "rejected_by_reason": {"discarded": 3, "visual timestamps disagree": 1, "audio timestamps disagree": 1},
        "ignored_columns": ["reply_gem", "reply_gpt"]}  # the answer columns: not read by the builder
    # consensus time: the primary's (gem); c5's audio spread 0.45 (2.1 vs human 2.55) is within 0.5
    assert m.clips.set_index("id").loc["c5", ["visual_time", "audio_time"]].tolist() == [2.0, 2.1]
    # stricter tolerances reject c5 too
    assert list(read_manifest(out, eps_visual=0.7).clips["id"]) == ["c1"]


class RecordingRunner:
    """Stands in for a runner from ``make_judge``: records the items and answers with richer objects."""

    def __init__(self, replies):
        self.replies, self.items = replies, []

    def answer(self, items, progress=None):
        self.items.extend(items)
        out = []
        for item in items:
            text = self.replies[item.id]
            out.append(Answer(text) if item.id.endswith("1") else type("Reply", (), {"raw": text})())
        return out


def test_annotators_go_through_the_runner_factory_with_video_items(clip_dir, tmp_path, monkeypatch):
    import omniaudit.runners.factory as factory

    rows = [("c1", gem(1.0, 1.1), '{"visual_time": 1.4}', None), ("c2", gem(2.0, 2.2), "visual_time: 00:02.5", None)]
    runners, calls = {}, []

    def fake_make_judge(spec, **options):
        calls.append((spec, options))
        runners[spec] = RecordingRunner({r[0]: (r[1] if spec == "openai:gem@http://x/v1" else r[2]) for r in rows})
        return runners[spec]

    monkeypatch.setattr(factory, "make_judge", fake_make_judge)
    out = tmp_path / "a.jsonl"
    result = annotate_manifest(write_manifest(clip_dir, rows), out, [
        Annotator("gpt", "openai:gpt@http://x/v1", "visual"), Annotator("gem", "openai:gem@http://x/v1")],
        max_tokens=300)
    assert [c[0] for c in calls] == ["openai:gem@http://x/v1", "openai:gpt@http://x/v1"]  # full annotators first
    assert calls[0][1] == {"max_tokens": 300}
    for spec, with_audio in (("openai:gem@http://x/v1", True), ("openai:gpt@http://x/v1", False)):
        items = runners[spec].items
        assert [i.id for i in items] == ["c1", "c2"]
        for i, video in zip(items, ["a.mp4", "b.mp4"], strict=True):
            assert i.options == [] and not i.closed and i.system is None
            assert [(m.kind, m.column, m.with_audio) for m in i.media] == [("video", "video", with_audio)]
            assert i.media[0].data == (clip_dir / video).read_bytes()
            assert "4.0-second video" in i.prompt
    assert "listen to its audio track" in runners["openai:gem@http://x/v1"].items[0].prompt
    assert 'Locate this visual event: "ball hits the floor"' in runners["openai:gpt@http://x/v1"].items[0].prompt
    got = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert got["c2"]["visual_time_gpt"] == 2.5 and got["c1"]["visual_time_gpt"] == 1.4
    assert result.agreement["passed_agreement"] == 2


@pytest.mark.parametrize(("value", "seconds"), [
    (1.5, 1.5), (2, 2.0), ("1.5", 1.5), ("1.5 s", 1.5), ("1.5 seconds", 1.5), ("0:01.5", 1.5), ("00:02", 2.0),
    ("1:02:03.5", 3723.5), ("1m 2.5s", 62.5), (".5", 0.5), ("at 3.2s", 3.2), ("~0.8 sec", 0.8),
])
def test_times_are_read_as_seconds(value, seconds):
    assert parse_time(value).seconds == pytest.approx(seconds)


@pytest.mark.parametrize("value", [None, "none", "None", "N/A", "null", "no sound", "not audible", "-"])
def test_none_means_the_event_is_not_there(value):
    r = parse_time(value)
    assert r.none and r.seconds is None and r.problem is None


@pytest.mark.parametrize("value", ["soon", "-1", -0.5, "0:75", True, float("nan"), "1.2.3"])
def test_unreadable_times_are_problems_not_guesses(value):
    r = parse_time(value)
    assert r.seconds is None and not r.none and r.problem


def test_answers_are_read_from_json_fences_prose_and_key_value_lines():
    assert parse_annotation('Here: {"Visual Time": "0:03", "audio_time": 3.4, "audio_event": "crash"} done') == {
        "visual_time": "0:03", "audio_time": 3.4, "audio_event": "crash"}
    assert parse_annotation("{'visual_time': 1.2, 'audio_time': 1.4,}") == {"visual_time": "1.2", "audio_time": "1.4"}
    assert parse_annotation("- **Visual time**: 00:02.25\n- Audio event: none\n- audio_time: null") == {
        "visual_time": "00:02.25", "audio_event": "none", "audio_time": None}
    assert parse_annotation("nothing useful") == {}


def test_annotate_refuses_bad_requests(clip_dir, tmp_path):
    m = write_manifest(clip_dir)
    with pytest.raises(InputError, match="overwrite the input manifest"):
        annotate_manifest(m, m, ANNOTATORS)
    with pytest.raises(InputError, match="NAME=SPEC"):
        parse_annotator("column:reply_gem")
    with pytest.raises(InputError, match="role must be one of"):
        parse_annotator("gem:audio=column:x")
    with pytest.raises(InputError, match="distinct"):
        annotate_manifest(m, tmp_path / "o.jsonl", ["a=column:reply_gem", "a=column:reply_gpt"])
    with pytest.raises(InputError, match="lacks") as err:
        annotate_manifest(m, tmp_path / "o.jsonl", ["a=column:nope"])
    assert "column 'nope'" in str(err.value)
    with pytest.raises(InputError, match="--primary must name"):
        annotate_manifest(m, tmp_path / "o.jsonl", ANNOTATORS, primary="gpt")
    with pytest.raises(InputError, match="JSONL"):
        annotate_manifest(m, tmp_path / "o.csv", ANNOTATORS)
    with pytest.raises(InputError, match=r"already has column\(s\) \['audio_time_human'\]"):
        annotate_manifest(m, tmp_path / "o.jsonl", ["human=column:reply_gem"])
    foreign = tmp_path / "mine.jsonl"
    foreign.write_text('{"note": "my own file"}\n')
    with pytest.raises(InputError, match="not written by omniaudit"):
        annotate_manifest(m, foreign, ANNOTATORS)
    assert foreign.read_text() == '{"note": "my own file"}\n' and not (tmp_path / "o.jsonl").exists()


def test_video_paths_stay_valid_wherever_the_output_goes(clip_dir, tmp_path):
    m = write_manifest(clip_dir, ROWS[:2], name="two.jsonl")
    beside = clip_dir / "two_annotated.jsonl"
    annotate_manifest(m, beside, ANNOTATORS)
    assert [json.loads(x)["video"] for x in beside.read_text().splitlines()] == ["a.mp4", "b.mp4"]
    elsewhere = tmp_path / "sub" / "two_annotated.jsonl"
    annotate_manifest(m, elsewhere, ANNOTATORS)
    assert [json.loads(x)["video"] for x in elsewhere.read_text().splitlines()] == [
        str(clip_dir / "a.mp4"), str(clip_dir / "b.mp4")]
    assert len(read_manifest(elsewhere).clips) == 1  # c1 kept, c2 rejected, read from the new folder
    annotate_manifest(m, elsewhere, ANNOTATORS)  # our own earlier output may be replaced


def test_a_discard_column_rejects_rows_at_build_time(clip_dir):
    path = clip_dir / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "x", "video": "a.mp4", "discard": "occluded event"}, {"id": "y", "video": "b.mp4", "discard": False},
        {"id": "z", "video": "a.mp4", "discard": ""}]))
    m = read_manifest(path)
    assert list(m.clips["id"]) == ["y", "z"]
    assert m.rejected == [{"id": "x", "row": 1, "reason": "discarded: occluded event"}]


def test_cli_annotate_then_build_keeps_the_agreeing_clips(clip_dir, tmp_path, capsys):
    from omniaudit.cli import main

    out = tmp_path / "annotated.jsonl"
    args = ["annotate", "--manifest", str(write_manifest(clip_dir)), "--out", str(out)]
    assert main(args + sum((["--annotator", a] for a in ANNOTATORS), [])) == 0
    printed = capsys.readouterr().out
    assert "7 clips annotated by gem, gpt; 3 marked discard" in printed
    assert "2 kept, 5 rejected (1 visual timestamps disagree; 1 audio timestamps disagree; 3 discarded)" in printed
    assert main(["build", "interventions", "--manifest", str(out), "--out", str(tmp_path / "ds"), "--shift", "-1",
                 "1"]) == 0
    assert "clips: 2 used, 5 rejected" in capsys.readouterr().out
    d = pq.read_table(sorted((tmp_path / "ds" / "diagnostic").glob("*.parquet")),
                      columns=["source_id", "audio_time", "visual_event"]).to_pandas()
    assert sorted(d["source_id"].unique()) == KEPT
    assert d.groupby("source_id")["audio_time"].first().to_dict() == {"c1": 1.1, "c5": 2.1}
    assert set(d["visual_event"]) == {"ball hits the floor"}
    assert main(args + ["--annotator", "bad"]) == 2
    assert "NAME=SPEC" in capsys.readouterr().err


def test_build_from_the_python_api(clip_dir, tmp_path):
    out = tmp_path / "annotated.jsonl"
    annotate_manifest(write_manifest(clip_dir), out, ANNOTATORS)
    ds = build_interventions_dataset(tmp_path / "ds", out)
    info = json.loads((ds / "build_info.json").read_text())["manifest"]
    assert info["used"] == 2 and info["rejected_by_reason"]["discarded"] == 3
    assert "| discarded | 3 |" in (ds / "README.md").read_text()


@pytest.mark.parametrize("dialect", ["vllm", "frames"])
def test_a_real_openai_runner_annotates_through_a_chat_server(clip_dir, tmp_path, dialect):
    """The openai: runner end to end (a local OpenAI-compatible server): one request per clip and annotator, the
    answers parsed into the columns."""
    from chat_server import ChatServer, prompt_text

    def reply(body):
        text = prompt_text(body)
        return gem(1.0, "0:01.2") if "listen to its audio" in text else "Answer: {\"visual_time\": \"1.5 s\"}"

    rows = [("c1", "", "", None), ("c2", "", "", None)]
    with ChatServer(answer=reply) as server:
        out = tmp_path / "a.jsonl"
        result = annotate_manifest(write_manifest(clip_dir, rows), out,
                                   [f"gem=openai:m@{server.url}", f"gpt:visual=openai:m@{server.url}"],
                                   dialect=dialect, use_cache=False)
        assert server.requests == 4
        assert sum("listen to its audio" in prompt_text(b) for b in server.bodies) == 2
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["visual_time_gem"], r["audio_time_gem"], r["visual_time_gpt"]) for r in got] == [(1.0, 1.2, 1.5)] * 2
    assert result.agreement["passed_agreement"] == 2 and result.discarded == 0
