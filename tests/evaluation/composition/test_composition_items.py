"""Composition samples and ablations as free-form model items, end to end: build -> `omniaudit judge` -> `audit
composition` reading the runner's files as written (several files, NAME=FILE runs, a `run` column)."""

import json

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from media_clips import noise_audio, write_clip
from PIL import Image

from omniaudit.answer_match import normalize
from omniaudit.cli import main
from omniaudit.data_builders.composition import build_composition_dataset
from omniaudit.data_builders.composition.build import ANSWER_INSTRUCTION, EVALUATION_PROMPT
from omniaudit.errors import InputError
from omniaudit.evaluation.composition.audit import read_runs, run_specs
from omniaudit.runners.items import check_modalities, load_items

BASE = {"template_id": "T", "template_name": "T", "category": "IC", "evidence_modality": "image",
        "generation_confidence": 3, "auditor_decision": "ACCEPT"}
# id -> media, tier; answers differ per sample so the template's vocabulary has several entries
MIXED = {
    "ia": ({"image": "i.png", "audio": "a.wav"}, 2),
    "va": ({"video": "v.mp4", "audio": "a.wav"}, 3),  # a video with its own soundtrack and a separate audio file
    "vi": ({"video": "mute.mp4", "image": "i.png"}, 2),  # a video without a soundtrack
    "a": ({"audio": "a.wav"}, 1),
}
# id/ablation -> the media parts a runner gets, in prompt order: (kind, column, with_audio)
EXPECTED_PARTS = {
    "ia": [("image", "image", False), ("audio", "audio", False)],
    "ia/mute_audio": [("image", "image", False), ("audio", "audio", False)],  # silence of the same length
    "ia/drop_image": [("audio", "audio", False)],
    "va": [("video", "video", True), ("audio", "audio", False)],
    "va/mute_audio": [("video", "video", True), ("audio", "audio", False)],  # both audios silenced, still sent
    "va/blank_video": [("video", "video", True), ("audio", "audio", False)],  # black frames, soundtrack kept
    "vi": [("video", "video", False), ("image", "image", False)],
    "vi/blank_video": [("video", "video", False), ("image", "image", False)],
    "vi/drop_image": [("video", "video", False)],
    "a": [("audio", "audio", False)],
    "a/mute_audio": [("audio", "audio", False)],
    **{f"{s}/text_only": [] for s in MIXED},
}


@pytest.fixture(scope="module")
def composition_mixed(tmp_path_factory):
    """Every mix of media a C3PO sample holds, built once."""
    folder = tmp_path_factory.mktemp("mixed")
    Image.fromarray(np.full((8, 8, 3), 90, np.uint8)).save(folder / "i.png")
    sf.write(folder / "a.wav", noise_audio(0.5, 7)[0], 16000)
    write_clip(folder / "v.mp4", seconds=1.0, audio=noise_audio(1.0, 3))
    write_clip(folder / "mute.mp4", seconds=1.0, with_audio=False)
    rows = [{**BASE, "id": sid, "tier": tier, "difficulty": 2 + 2 * k, "question": f"What is {sid}?",
             "answer": f"answer {sid}", **media} for k, (sid, (media, tier)) in enumerate(MIXED.items())]
    (folder / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return build_composition_dataset(folder / "ds", folder / "s.jsonl")


@pytest.fixture(scope="module")
def synthetic_dataset(tmp_path_factory):
    """The embedded default, built by the CLI as a user would."""
    out = tmp_path_factory.mktemp("synthetic") / "ds"
    assert main(["build", "composition", "--synthetic", "12", "--out", str(out)]) == 0
    return out


def test_samples_and_ablations_are_free_form_items_with_their_media_in_prompt_order(composition_mixed):
    source = composition_mixed.parent
    raw = {"image": (source / "i.png").read_bytes(), "audio": (source / "a.wav").read_bytes(),
           "video": (source / "v.mp4").read_bytes()}
    items = {it.id: it for config in ("samples", "ablations") for it in load_items(composition_mixed, config)}
    assert sorted(items) == sorted(EXPECTED_PARTS)
    for item_id, parts in EXPECTED_PARTS.items():
        item = items[item_id]
        sample = item_id.split("/")[0]
        assert item.options == [] and not item.closed, item_id  # free-form: generated, never picked from a list
        assert item.system == EVALUATION_PROMPT
        assert item.prompt == f"What is {sample}?\n{ANSWER_INSTRUCTION}" and item.gold == f"answer {sample}"
        assert [(p.kind, p.column, p.with_audio) for p in item.media] == parts, item_id
    # the sample's own media reach the runner unchanged; ablations change only the removed modality's content
    assert items["ia"].media[0].data == raw["image"] and items["ia"].media[1].data == raw["audio"]
    assert items["va"].media[0].data == raw["video"]
    assert items["ia/drop_image"].media[0].data == raw["audio"]
    for ablated, kept, changed in (("va/mute_audio", (), (0, 1)), ("va/blank_video", (1,), (0,))):
        for k in kept:
            assert items[ablated].media[k].key == items["va"].media[k].key
        for k in changed:
            assert items[ablated].media[k].key != items["va"].media[k].key
    silent, _ = sf.read(__import__("io").BytesIO(items["ia/mute_audio"].media[1].data))
    assert silent.size > 0 and np.abs(silent).max() == 0


def test_the_answer_vocabulary_is_metadata_no_runner_reads(composition_mixed):
    samples = pd.read_parquet(next((composition_mixed / "samples").glob("*.parquet")))
    assert "options" not in samples.columns  # no closed set: C3PO is free-form by design (guess inflation)
    assert "## Model items" in (composition_mixed / "README.md").read_text()
    assert samples["answer_vocabulary"].map(list).tolist() == [sorted(f"answer {s}" for s in MIXED)] * len(MIXED)
    for item in load_items(composition_mixed, "samples"):  # no other sample's answer leaks into what the model sees
        assert not any(a in f"{item.system} {item.prompt} {item.options}" for a in samples["answer"])


def test_a_model_without_a_modality_is_refused_naming_the_item(composition_mixed):
    items = load_items(composition_mixed, "samples")
    with pytest.raises(InputError, match="item 'va' has a video\\+audio input \\(video\\)"):
        check_modalities(items, "an image-audio model", {"audio", "image", "video"})
    check_modalities(items, "an omni model", {"audio", "image", "video", "video+audio"})
    text_only = [it for it in load_items(composition_mixed, "ablations") if it.id.endswith("/text_only")]
    check_modalities(text_only, "a text model", set())  # the text_only copies need no media at all


def judge(dataset, config, spec, out, *extra):
    """`omniaudit judge`, as a user runs it; the predictions rows it wrote."""
    assert main(["judge", "--dataset", str(dataset), "--config", config, "--judge", spec, "--out", str(out),
                 *extra]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_free_form_item_is_answered_not_scored_against_options(synthetic_dataset, tmp_path):
    samples = pd.read_parquet(next((synthetic_dataset / "samples").glob("*.parquet")))
    vocabulary = {i: set(v) for i, v in zip(samples["id"], samples["answer_vocabulary"], strict=True)}
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    rows = judge(synthetic_dataset, "samples", "scripted:random", tmp_path / "random.jsonl", "--seed", "3")
    assert len(rows) == len(samples)
    for row in rows:
        # a free-form random answer: the gold answer or a refusal, never a guess drawn from the template's answers
        assert row["raw"] in (gold[row["id"]], "I don't know.")
        assert row["label"] in (None, row["raw"])  # the answer as given, never an option parsed out of it
    wrong_guesses = [r for r in rows if r["raw"] in vocabulary[r["id"]] - {gold[r["id"]]}]
    assert not wrong_guesses and {r["raw"] for r in rows} & {"I don't know."}
    with pytest.raises(InputError, match="picks an option, but item '.*' is free-form"):
        from omniaudit.runners import run_judge

        run_judge(synthetic_dataset, "samples", "scripted:always-a", tmp_path / "a.jsonl")


def test_build_judge_audit_end_to_end_from_the_cli(synthetic_dataset, tmp_path, capsys):
    """Build (embedded default) -> judge samples and ablations (one run, and two sampled runs in one file each) ->
    audit, with the runner's files as written."""
    samples = pd.read_parquet(next((synthetic_dataset / "samples").glob("*.parquet")), columns=["id", "answer"])
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    sampled = ["--judge", "scripted:random", "--runs", "2", "--temperature", "0.7", "--seed", "5"]
    for run, extra in (("oracle", ["--judge", "scripted:oracle"]), ("random", sampled)):
        (tmp_path / run).mkdir()
        for config in ("samples", "ablations"):
            assert main(["judge", "--dataset", str(synthetic_dataset), "--config", config, *extra, "--out",
                         str(tmp_path / run / f"{config}.jsonl")]) == 0
    files = [f"{run}={tmp_path / run / config}.jsonl" for run in ("oracle", "random")
             for config in ("samples", "ablations")]
    assert main(["audit", "composition", "--dataset", str(synthetic_dataset), "--predictions", *files, "--out",
                 str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert result["runs"] == ["oracle", "random#0", "random#1"]
    assert "3 run(s) (oracle, random#0, random#1): accuracy" in capsys.readouterr().out
    assert result["sampling"]["random#1"] == {"temperature": 0.7, "seed": 6}  # run r samples with seed + r
    # by hand: a random run answers the gold answer or "I don't know.", which no reader reads: ungraded, neither
    # right nor wrong (before: wrong, and its refusals under every ablation read as text dominance)
    rows = [json.loads(line) for config in ("samples", "ablations")
            for line in (tmp_path / "random" / f"{config}.jsonl").read_text().splitlines()]
    answer = {(r["run"], r["id"]): r["raw"] for r in rows}
    refusals = [sum(answer[run, i] != a for i, a in gold.items()) for run in (0, 1)]
    assert min(refusals) > 0 and max(refusals) < len(gold) and refusals[0] != refusals[1]  # two different samples
    assert result["accuracy_by_run"] == {"oracle": 100.0, "random#0": 100.0, "random#1": 100.0}
    assert result["grading"]["samples"]["by_run"] == {"oracle": 0, "random#0": refusals[0], "random#1": refusals[1]}
    assert result["failure_modes"]["overall"]["n_failures"] == 0  # the refusals are no failures
    unread = sum(normalize(a) == normalize("I don't know.") for a in answer.values())
    assert result["grading"]["n_ungraded"] == unread == sum(result["grading"]["reasons"].values())
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "`ablations.jsonl`" in report and str(tmp_path) not in report and "temperature=0.7" in report


def _wrong(synthetic_dataset) -> dict:
    """Sample id -> a wrong answer the audit's readers read (a count beside the gold count, another colour of the
    template's vocabulary): an answer they cannot read ("no") is ungraded, neither right nor wrong."""
    samples = pd.read_parquet(next((synthetic_dataset / "samples").glob("*.parquet")),
                              columns=["id", "answer", "answer_vocabulary"])
    out = {}
    for i, answer, vocabulary in samples.itertuples(False):
        gold = normalize(str(answer))
        out[i] = str(int(gold) + 1) if gold.isdigit() else sorted(v for v in vocabulary if normalize(v) != gold)[0]
    return out


def runner_rows(samples, ablations, run, answer, **sampling):
    """Rows as `omniaudit judge --runs N` writes them (id, order, raw, label, parsed, run + sampling settings)."""
    return [{"id": i, "order": None, "raw": answer(i), "label": None, "parsed": False, "run": run, **sampling}
            for i in list(samples) + list(ablations)]


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_one_file_with_several_runs_is_split_and_its_sampling_reported(synthetic_dataset, tmp_path):
    samples = pd.read_parquet(next((synthetic_dataset / "samples").glob("*.parquet")), columns=["id", "answer"])
    ablation_ids = pd.read_parquet(next((synthetic_dataset / "ablations").glob("*.parquet")), columns=["id"])["id"]
    gold = dict(zip(samples["id"], samples["answer"], strict=True))
    first, wrong = samples["id"].iloc[0], _wrong(synthetic_dataset)
    # run 0 answers every sample right, run 1 all but the first, run 2 none: 100, (n-1)/n, 0
    rows = []
    for run, right in ((0, lambda i: True), (1, lambda i: i != first), (2, lambda i: False)):
        rows += runner_rows(samples["id"], ablation_ids, run,
                            lambda i, r=right: gold.get(i, "x") if r(i) else wrong.get(i, "no"),
                            temperature=0.7, top_p=0.95, seed=10 + run)
    path = write_jsonl(tmp_path / "sampled.jsonl", rows[::-1])  # any row order
    assert main(["audit", "composition", "--dataset", str(synthetic_dataset), "--predictions", str(path),
                 "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    n = len(samples)
    assert result["runs"] == ["sampled#0", "sampled#1", "sampled#2"]
    assert result["accuracy_by_run"] == pytest.approx({"sampled#0": 100.0, "sampled#1": 100 * (n - 1) / n,
                                                       "sampled#2": 0.0})
    assert result["accuracy"]["overall"]["mean"] == pytest.approx((100 + 100 * (n - 1) / n) / 3)
    assert result["sampling"]["sampled#1"] == {"temperature": 0.7, "top_p": 0.95, "seed": 11}
    assert "temperature=0.7, top_p=0.95, seed=12" in (tmp_path / "rep" / "report.md").read_text()
    graded = pd.read_csv(tmp_path / "rep" / "graded.csv")
    assert graded.groupby("run").size().to_dict() == {f"sampled#{r}": n for r in range(3)}


def test_runs_with_the_same_stem_stay_distinct(synthetic_dataset, tmp_path):
    samples = pd.read_parquet(next((synthetic_dataset / "samples").glob("*.parquet")), columns=["id", "answer"])
    good = write_jsonl(tmp_path / "a" / "run.jsonl", [{"id": i, "raw": a} for i, a in samples.itertuples(False)])
    wrong = _wrong(synthetic_dataset)
    bad = write_jsonl(tmp_path / "b" / "run.jsonl", [{"id": i, "raw": wrong[i]} for i in samples["id"]])
    assert list(run_specs([str(good), str(bad)])) == ["a/run", "b/run"]
    assert run_specs([f"z={good}", str(bad), f"z={bad}"]) == {"z": [good, bad], "run": [bad]}  # in the order given
    assert main(["audit", "composition", "--dataset", str(synthetic_dataset), "--predictions", str(good), str(bad),
                 "--out", str(tmp_path / "rep")]) == 0
    result = json.loads((tmp_path / "rep" / "audit.json").read_text())
    assert result["accuracy_by_run"] == {"a/run": 100.0, "b/run": 0.0}
    assert main(["audit", "composition", "--dataset", str(synthetic_dataset), "--predictions", f"good={good}",
                 f"bad={bad}", "--out", str(tmp_path / "rep2")]) == 0
    assert json.loads((tmp_path / "rep2" / "audit.json").read_text())["accuracy_by_run"] == {"good": 100.0,
                                                                                             "bad": 0.0}


def test_run_files_are_refused_naming_file_and_row(synthetic_dataset, tmp_path):
    samples = pd.read_parquet(next((synthetic_dataset / "samples").glob("*.parquet")), columns=["id"])["id"]
    ablation_ids = pd.read_parquet(next((synthetic_dataset / "ablations").glob("*.parquet")), columns=["id"])["id"]
    known = pd.concat([samples, ablation_ids])
    s = write_jsonl(tmp_path / "samples.jsonl", [{"id": i, "raw": "x"} for i in samples])
    a = write_jsonl(tmp_path / "ablations.jsonl", [{"id": i, "raw": "x"} for i in ablation_ids])
    sampled = write_jsonl(tmp_path / "sampled.jsonl", [{"id": i, "raw": "x", "run": 0} for i in ablation_ids])
    twice = write_jsonl(tmp_path / "twice.jsonl", [{"id": i, "raw": "x"} for i in list(samples) + [samples[1]]])
    with pytest.raises(InputError, match="answers no sample at all: give a run's samples and ablations predictions "
                                         "the same NAME") as err:
        read_runs([str(s), str(a)], known, samples)  # two bare files: two runs, the second without samples
    assert "ablations.jsonl" in str(err.value)
    assert len(read_runs([f"m={s}", f"m={a}"], known, samples)) == 1
    assert [r.name for r in read_runs([f"m={s}", f"m={sampled}"], known, samples)] == ["m"]  # one run: run 0
    two = write_jsonl(tmp_path / "two.jsonl", [{"id": i, "raw": "x", "run": r} for i in ablation_ids for r in (0, 1)])
    with pytest.raises(InputError, match="hold 2 sampled runs .* but this file has no 'run' column") as err:
        read_runs([f"m={s}", f"m={two}"], known, samples)
    assert "samples.jsonl" in str(err.value)
    with pytest.raises(InputError, match="id answered twice in run 'm'") as err:
        read_runs([f"m={s}", f"m={s}"], known, samples)
    assert "samples.jsonl:row 1" in str(err.value)
    with pytest.raises(InputError, match="id answered twice in run 'twice'") as err:
        read_runs([str(twice)], known, samples)
    assert f"twice.jsonl:row {len(samples) + 1}" in str(err.value)
    with pytest.raises(InputError, match="the same predictions file is given twice"):
        read_runs([str(s), str(s)], known, samples)
    with pytest.raises(InputError, match="would be run 'samples', the NAME of other files"):
        read_runs([str(s), f"samples={a}"], known, samples)
    junk = write_jsonl(tmp_path / "junk.jsonl", [{"id": "nope", "raw": "x"}])
    with pytest.raises(InputError, match="not a sample of the dataset") as err:
        read_runs([str(junk)], known, samples)
    assert "junk.jsonl:row 1" in str(err.value)


def _audit_tiny_run(dataset, folder, spec, *extra):
    """`omniaudit judge` on both configs with ``spec``, then `audit composition` on the two files as one run (the
    random model writes byte noise, no answer: --min-usable 0 keeps the plumbing run; its failures are unanswered)."""
    for config in ("samples", "ablations"):
        assert main(["judge", "--dataset", str(dataset), "--config", config, "--judge", spec, "--out",
                     str(folder / f"{config}.jsonl"), "--max-tokens", "4", "--max-frames", "2", "--min-usable", "0",
                     *extra]) == 0
    rows = [json.loads(line) for config in ("samples", "ablations")
            for line in (folder / f"{config}.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(EXPECTED_PARTS)
    assert all(isinstance(r["raw"], str) and (r["label"], r["option_probs"]) == (None, None) for r in rows)
    assert main(["audit", "composition", "--dataset", str(dataset), "--predictions",
                 f"tiny={folder / 'samples.jsonl'}", f"tiny={folder / 'ablations.jsonl'}", "--out",
                 str(folder / "rep")]) == 0
    result = json.loads((folder / "rep" / "audit.json").read_text())
    assert result["runs"] == ["tiny"] and result["n_samples"] == len(MIXED)
    n_failures = result["failure_modes"]["overall"]["n_failures"]
    graded = pd.read_csv(folder / "rep" / "graded.csv")  # an ungraded answer (byte noise) is no failure
    assert n_failures == int((~graded["correct"] & ~graded["ungraded"]).sum())
    assert result["grading"]["samples"]["n_ungraded"] == int(graded["ungraded"].sum())
    return result


@pytest.fixture(scope="module")
def tiny_omni_model(tmp_path_factory):
    from omniaudit.tiny_models import tiny_omni

    return tiny_omni(tmp_path_factory.mktemp("omni") / "omni")


@pytest.mark.slow
def test_the_tiny_omni_model_answers_every_mix_through_hf_and_the_audit_reads_it(composition_mixed, tiny_omni_model,
                                                                                 tmp_path):
    """Images, separate audio, a video with its own soundtrack and one without, the ablated copies, text only."""
    _audit_tiny_run(composition_mixed, tmp_path, f"hf:{tiny_omni_model}")


@pytest.mark.slow
def test_the_tiny_omni_model_answers_every_mix_through_transformers_serve(composition_mixed, tiny_omni_model,
                                                                          tmp_path):
    """`transformers serve` + `openai:`; videos as frames + soundtrack (the server's own video path needs torchcodec
    >= 0.17 on this pin: test_serve.py)."""
    from transformers_server import TransformersServer, missing_modules

    if missing_modules():
        pytest.skip(f"`transformers serve` needs {missing_modules()}: install the [serve] extra")
    server = TransformersServer(tmp_path / "serve.log")
    try:
        result = _audit_tiny_run(composition_mixed, tmp_path, f"openai:{tiny_omni_model}@{server.url}", "--dialect",
                                 "frames", "--no-cache")
    finally:
        server.close()
    # provenance as the real server states it, checked by the audit (both files: one judge run's model)
    files = result["provenance"]["tiny"]
    assert [f["known"] for f in files] == [True, True]
    served = files[0]["model"]["served"]
    assert served["id"] == str(tiny_omni_model) and "status" not in served and files[1]["model"] == files[0]["model"]
    assert files[0]["finish_reasons"] and set(files[0]["finish_reasons"]) <= {"stop", "length"}
