"""Fault families ``fuzz-predictions`` and ``fuzz-csv``: seeded mutations of an ``omniaudit judge`` predictions file
and of an EmoPrefer CSV, audited; an accepted mutation must give the clean input's measures (where it changes
nothing) or the expected number of pairs."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable
from pathlib import Path

from faults_core import FAST_AUDIT, Case, Outcome, audit_diff, leftovers
from faults_launcher import Suite


def _pred_lines(suite: Suite) -> list[str]:
    return suite.base_pred.read_text(encoding="utf-8").splitlines()


def _edit(lines: list[str], i: int, fn: Callable[[dict], object]) -> list[str]:
    row = json.loads(lines[i])
    new = fn(row)
    out = list(lines)
    out[i] = json.dumps(row if new is None else new, ensure_ascii=False)
    return out


def _set(**values) -> Callable[[dict], None]:
    return lambda row: row.update(values)


def _drop(*keys) -> Callable[[dict], None]:
    def drop(row: dict) -> None:
        for k in keys:
            row.pop(k, None)

    return drop


def _flip(row: dict) -> None:
    row["label"] = row["raw"] = "B" if row["label"] == "A" else "A"


def _other_judge(row: dict) -> None:
    row["provenance"]["judge"] = "scripted:always-a"
    row["provenance"]["model"] = {"kind": "scripted", "model": "always-a"}


def _join(lines: list[str], end: str = "\n") -> bytes:
    return (end.join(lines) + end).encode("utf-8")


# name -> (expect, mutation(lines, rng) -> bytes); expect: refuse | same (refuse, or the clean measures) |
# succeed-same (the clean measures, never refused)
PRED_MUTATIONS: dict[str, tuple[str, Callable[[list[str], random.Random], bytes]]] = {
    "truncated last line": ("refuse", lambda ls, r: _join(ls)[: -r.randrange(20, 200)]),
    "truncated line in the middle": ("refuse", lambda ls, r: _join(
        [(line[: len(line) // 2] if i == r.randrange(1, len(ls) - 1) else line) for i, line in enumerate(ls)])),
    "row dropped": ("refuse", lambda ls, r: _join([line for i, line in enumerate(ls) if i != r.randrange(len(ls))])),
    "conflicting duplicate row": ("refuse", lambda ls, r: (lambda i: _join(
        ls + _edit(ls, i, _flip)[i:i + 1]))(r.randrange(len(ls)))),
    "a row from another judge": ("refuse", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _other_judge))),
    "another build's fingerprint": ("refuse", lambda ls, r: _join([json.dumps(
        {**json.loads(line), "provenance": {**json.loads(line)["provenance"], "dataset": {
            **json.loads(line)["provenance"]["dataset"], "fingerprint": "sha256:" + "0" * 32}}}) for line in ls])),
    "JSON list row": ("refuse", lambda ls, r: (lambda i: _join(
        ls[:i] + [json.dumps(list(json.loads(ls[i]).values())[:6])] + ls[i + 1:]))(r.randrange(len(ls)))),
    "JSON null row": ("refuse", lambda ls, r: (lambda i: _join(ls[:i] + ["null"] + ls[i + 1:]))(r.randrange(len(ls)))),
    "empty file": ("refuse", lambda ls, r: b""),
    "label an integer": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(label=5)))),
    "label not an option": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(label="C")))),
    "label lower case": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)),
                                                           lambda row: row.update(label=row["label"].lower())))),
    "label fullwidth": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), lambda row: row.update(
        label=chr(ord(row["label"]) + 0xFEE0))))),
    "order an integer": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(order=1)))),
    "order unknown": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(order="xy")))),
    "run a string": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(run="0")))),
    "run huge": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(run=10 ** 30)))),
    "option_probs NaN": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": float("nan"), "B": float("nan")})))),
    "option_probs infinite": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": float("inf"), "B": 0.0})))),
    "option_probs 1e308": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": 1e308, "B": 1e308})))),
    "option_probs negative": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": -0.5, "B": 1.5})))),
    "option_probs words": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs={"A": "high", "B": "low"})))),
    "option_probs a list": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(
        option_probs=[0.9, 0.1])))),
    "parsed a string": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _set(parsed="yes")))),
    "exact duplicate row": ("same", lambda ls, r: _join(ls + [ls[r.randrange(len(ls))]])),
    "unknown field": ("same", lambda ls, r: _join([json.dumps({**json.loads(line), "foo": [1, {"x": None}]})
                                                    for line in ls])),
    "label field missing": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _drop("label")))),
    "id field missing": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), _drop("id")))),
    "provenance missing in one row": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)),
                                                                        _drop("provenance")))),
    "id with a fullwidth digit": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), lambda row: row.update(
        id=row["id"].replace("1", "\uff11", 1) if "1" in row["id"] else row["id"] + "\u0301")))),
    "raw with NUL, emoji and RTL": ("same", lambda ls, r: _join(_edit(ls, r.randrange(len(ls)), lambda row: row.update(
        raw=row["raw"] + "\u0000 \U0001f600 \u202e\u05d0")))),
    "seed 1e400": ("same", lambda ls, r: _join(ls[:1] + [line.replace('"seed": null', '"seed": 1e400', 1)
                                                         for line in ls[1:]])),
    "UTF-8 BOM": ("same", lambda ls, r: b"\xef\xbb\xbf" + _join(ls)),
    "CRLF line ends": ("same", lambda ls, r: _join(ls, "\r\n")),
    "blank lines": ("same", lambda ls, r: _join([x for line in ls for x in (line, "")])),
    "invalid UTF-8 byte": ("same", lambda ls, r: (lambda i: _join(ls[:i]) + ls[i].replace(
        '"raw": "', '"raw": "\udcff', 1).encode("utf-8", "surrogateescape") + b"\n" + _join(ls[i + 1:]))(
        r.randrange(len(ls) - 1))),
    "rows shuffled": ("succeed-same", lambda ls, r: _join(r.sample(ls, len(ls)))),
}
PRED_SMOKE = ("truncated last line", "conflicting duplicate row", "option_probs NaN", "rows shuffled")


def fuzz_prediction(name: str, seed: int) -> Callable[[Suite, Path], Outcome]:
    expect, mutate = PRED_MUTATIONS[name]

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("fuzz-predictions", "")
        (d / "j.jsonl").write_bytes(mutate(_pred_lines(suite), random.Random(f"{seed}:{name}")))
        run = suite.omni(["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=j.jsonl",
                          *FAST_AUDIT, "--out", "a", "-q"], d,
                         expect={"refuse": "refuse", "same": "either", "succeed-same": "succeed"}[expect],
                         names=("j.jsonl", "row", "line"))
        o.runs.append(run)
        if run.rc == 0:
            diff = audit_diff(d / "a", suite.base_audit)
            if diff:
                o.problems.append(f"accepted, and {diff}")
        elif (d / "a").exists():
            o.problems.append("a refused audit left its output folder")
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def _csv_rows(suite: Suite) -> list[list[str]]:
    return list(csv.reader(io.StringIO(suite.pref_csv.read_text(encoding="utf-8"))))


def _csv(rows_: list[list[str]], end: str = "\n") -> bytes:
    buf = io.StringIO()
    csv.writer(buf, lineterminator=end).writerows(rows_)
    return buf.getvalue().encode("utf-8")


def _cell(column: str, value: str, rows_: list[list[str]], r: random.Random) -> list[list[str]]:
    i, j = r.randrange(1, len(rows_)), rows_[0].index(column)
    out = [list(x) for x in rows_]
    out[i][j] = value
    return out


def _cell_fn(column: str, fn: Callable[[str], str], rows_: list[list[str]], r: random.Random) -> list[list[str]]:
    i, j = r.randrange(1, len(rows_)), rows_[0].index(column)
    out = [list(x) for x in rows_]
    out[i][j] = fn(out[i][j])
    return out


def _cut_description(rows_: list[list[str]], r: random.Random) -> bytes:
    data = _csv(rows_)
    last = data.rstrip(b"\n").rfind(b"\n") + 1
    return data[: last + r.randrange(20, 60)]


# name -> (expect, mutation(rows, rng) -> bytes, pairs when accepted: None = the clean count, int = more)
CSV_MUTATIONS: dict[str, tuple[str, Callable[[list[list[str]], random.Random], bytes], int | None]] = {
    "truncated last line": ("refuse", _cut_description, None),
    "label 'maybe'": ("refuse", lambda rs, r: _csv(_cell("preference", "maybe", rs, r)), None),
    "label empty": ("refuse", lambda rs, r: _csv(_cell("preference", "", rs, r)), None),
    "label 'nan'": ("refuse", lambda rs, r: _csv(_cell("preference", "nan", rs, r)), None),
    "label in spaces": ("same", lambda rs, r: _csv(_cell_fn("preference", lambda v: f" {v} ", rs, r)), None),
    "label upper case": ("same", lambda rs, r: _csv(_cell_fn("preference", str.upper, rs, r)), None),
    "description 'NaN'": ("count", lambda rs, r: _csv(_cell("a1", "NaN", rs, r)), None),
    "description empty": ("count", lambda rs, r: _csv(_cell("a1", "", rs, r)), None),
    "generator 'inf'": ("count", lambda rs, r: _csv(_cell("model1", "inf", rs, r)), None),
    "generator a 400-digit number": ("count", lambda rs, r: _csv(_cell("model1", "9" * 400, rs, r)), None),
    "name a huge float": ("count", lambda rs, r: _csv(_cell("name", "1e400", rs, r)), None),
    "one field too many": ("refuse", lambda rs, r: (lambda i: _csv(
        [x + ["extra"] if k == i else x for k, x in enumerate(rs)]))(r.randrange(1, len(rs))), None),
    "one field too few": ("refuse", lambda rs, r: (lambda i: _csv(
        [x[:-1] if k == i else x for k, x in enumerate(rs)]))(r.randrange(1, len(rs))), None),
    "JSON list row": ("refuse", lambda rs, r: _csv(rs) + json.dumps(rs[r.randrange(1, len(rs))]).encode() + b"\n",
                      None),
    "three duplicated rows": ("count", lambda rs, r: _csv(rs + [rs[r.randrange(1, len(rs))]] * 3), 3),
    "unknown column": ("same", lambda rs, r: _csv([x + (["notes"] if k == 0 else [f"n{k}"])
                                                   for k, x in enumerate(rs)]), None),
    "column a2 missing": ("refuse", lambda rs, r: _csv([[c for j, c in enumerate(x) if j != rs[0].index("a2")]
                                                        for x in rs]), None),
    "columns reordered": ("succeed-same", lambda rs, r: (lambda order: _csv([[x[j] for j in order] for x in rs]))(
        r.sample(range(len(rs[0])), len(rs[0]))), None),
    "unicode descriptions": ("count", lambda rs, r: _csv(_cell("a2", "Ｔｈｅ ｖｏｉｃｅ 😢 שמח e\u0301\u200b 声音",
                                                              rs, r)), None),
    "unicode generator name": ("count", lambda rs, r: _csv(_cell("model2", "ɡale-mm\u200d", rs, r)), None),
    "UTF-8 BOM": ("same", lambda rs, r: b"\xef\xbb\xbf" + _csv(rs), None),
    "CRLF line ends": ("same", lambda rs, r: _csv(rs, "\r\n"), None),
    "Latin-1 bytes": ("count", lambda rs, r: _csv(_cell("a1", "cafe au lait", rs, r)).replace(
        b"cafe au lait", b"caf\xe9 au lait"), None),
    "NUL byte in a description": ("count", lambda rs, r: _csv(_cell("a1", "calm\x00voice", rs, r)), None),
    "unbalanced quote": ("refuse", lambda rs, r: _csv(rs).replace(b"\n", b'\n"', 1 + r.randrange(5)), None),
    "header only": ("refuse", lambda rs, r: _csv(rs[:1]), None),
    "random bytes": ("refuse", lambda rs, r: bytes(r.randrange(256) for _ in range(4000)), None),
}
CSV_SMOKE = ("label 'maybe'", "three duplicated rows", "Latin-1 bytes")


def fuzz_csv(name: str, seed: int) -> Callable[[Suite, Path], Outcome]:
    expect, mutate, extra = CSV_MUTATIONS[name]

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("fuzz-csv", "")
        (d / "pref.csv").write_bytes(mutate(_csv_rows(suite), random.Random(f"{seed}:{name}")))
        run = suite.omni(["audit", "preference", "--source", "pref.csv", *FAST_AUDIT, "--out", "a", "-q"], d,
                         expect={"refuse": "refuse", "same": "either", "count": "either",
                                 "succeed-same": "succeed"}[expect],
                         names=("pref.csv", "row", "line", "column"))
        o.runs.append(run)
        if run.rc == 0:
            if expect in ("same", "succeed-same"):
                diff = audit_diff(d / "a", suite.base_csv_audit)
                if diff:
                    o.problems.append(f"accepted, and {diff}")
            else:
                pairs = json.loads((d / "a" / "audit.json").read_text())["dataset"]["n_pairs"]
                want = suite.n_csv_pairs + (extra or 0)
                if pairs != want:
                    o.problems.append(f"accepted with {pairs} pairs, the file has {want}")
        elif (d / "a").exists():
            o.problems.append("a refused audit left its output folder")
        o.outputs, o.leftovers = [d / "a"], leftovers(d)
        return o

    return case


def fuzz_cases(rng: random.Random, seeds: int) -> list[Case]:
    cases = []
    for s in range(seeds):
        seed = rng.randrange(10 ** 6)
        for name in PRED_MUTATIONS:
            tier = ("smoke" if name in PRED_SMOKE else "quick") if s == 0 else "full"
            cases.append(Case("fuzz-predictions", f"{name} (seed {seed})", tier, fuzz_prediction(name, seed)))
        for name in CSV_MUTATIONS:
            tier = ("smoke" if name in CSV_SMOKE else "quick") if s == 0 else "full"
            cases.append(Case("fuzz-csv", f"{name} (seed {seed})", tier, fuzz_csv(name, seed)))
    return cases
