"""Fault family ``server``: a judge against servers that misbehave (``tests/chat_server.py`` and
``benchmarks/fault_server.py`` modes: errors and retries, garbage and huge replies, non-finite logprobs, the key
echoed back, another or a switched deployment); every file and message of the run is searched for the API key."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from chat_server import ChatServer
from fault_server import FaultServer, every, faulted, once, seeded_answer
from faults_core import FAST_AUDIT, KEY_VAR, Case, Outcome, last_line, leftovers, rows
from faults_launcher import Suite

LISTED = [{"id": "m", "object": "model"}]
EVERYWHERE = ("content", "finish_reason", "logprobs", "fingerprint", "models")


def _labels_check(suite: Suite, out: Path, faulty: Callable[[str], bool], *, lenient: bool = False) -> list[str]:
    """Rows of faulted items have no label; the others have the server's answer (``lenient``: faulted rows may also
    have the right answer, for replies that carry it in another shape)."""
    problems = []
    got = rows(out)
    if len(got) != len(suite.prompts):
        problems.append(f"{len(got)} rows for {len(suite.prompts)} items")
    for r in got:
        want = suite.expected_label(r["id"])
        if faulty(suite.prompts[r["id"]]):
            if r.get("label") is not None and not (lenient and r["label"] == want):
                problems.append(f"{r['id']}: label {r['label']!r} from a faulted reply {r.get('raw')!r:.60}")
        elif r.get("label") != want:
            problems.append(f"{r['id']}: label {r.get('label')!r}, the server answered {want!r}")
        probs = r.get("option_probs")
        if probs is not None and (not isinstance(probs, dict) or abs(sum(probs.values()) - 1) > 1e-6):
            problems.append(f"{r['id']}: option_probs {probs!r:.80}")
    return problems[:5]


def serve(make: Callable[[], object], extra: list[str], expect: str, *, k: int | None = None, lenient=False,
          names: tuple[str, ...] = (), check: Callable | None = None, cache: bool = True):
    """A judge against the server ``make()`` builds; ``k``: items faulted one in k (``fault_server.faulted``),
    checked with :func:`_labels_check` when the run exits 0; ``check(suite, d, server, run)`` adds problems."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("server", "", key=suite.key)
        with make() as server:
            server.httpd.handle_error = lambda *a: None  # a client that gave up is not news
            run = suite.omni(suite.judge_argv(server.url, "p.jsonl", *extra, cache="cache" if cache else None), d,
                             expect=expect, names=names, timeout=240)
            o.runs.append(run)
            if run.rc == 0 and (d / "p.jsonl").exists():
                if k is not None:
                    o.problems += _labels_check(suite, d / "p.jsonl", lambda p: faulted(p, k), lenient=lenient)
                if check is not None:
                    o.problems += check(suite, d, server, run, o)
            elif run.rc != 0 and (d / "p.jsonl").exists():
                o.problems.append("a refused run left p.jsonl")
        o.outputs, o.secret_roots = [d / "p.jsonl", *([d / "a"] if (d / "a").exists() else [])], [d / "cache"]
        o.leftovers = leftovers(d)
        return o

    return case


def _all_answered(suite, d, server, run, o) -> list[str]:
    return _labels_check(suite, d / "p.jsonl", lambda p: False)


def _audited(suite, d, server, run, o) -> list[str]:
    """The judged file goes through ``audit preference`` too (its output is searched for the key and NaN)."""
    audit = suite.omni(["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=p.jsonl",
                        *FAST_AUDIT, "--out", "a", "-q"], d, expect="either")
    o.runs.append(audit)
    return []


def _warns(word: str) -> Callable:
    def check(suite, d, server, run, o) -> list[str]:
        if word not in run.stderr + run.stdout:
            return [f"no warning naming {word!r}: {last_line(run.stderr)!r}"]
        return []

    return check


def _both(*checks: Callable) -> Callable:
    return lambda *a: [p for c in checks for p in c(*a)]


def _mixed_deployments(field_name: str, first: str, second: str) -> Callable:
    """A run whose server changed deployment mid-run: its rows say so, and an audit of them either refuses or shows
    both in its report."""

    def check(suite, d, server, run, o) -> list[str]:
        problems = []
        seen = {r.get(field_name) for r in rows(d / "p.jsonl")}
        if not {first, second} <= seen:
            problems.append(f"rows' {field_name} are {sorted(map(str, seen))}: the switch to {second!r} is not kept")
        if second not in run.stderr + run.stdout:
            problems.append(f"the run did not warn about {second!r}")
        audit = suite.omni(["audit", "preference", "--dataset", str(suite.ds), "--predictions", "j=p.jsonl",
                            *FAST_AUDIT, "--out", "a", "-q"], d, expect="either",
                           names=("p.jsonl", field_name, "served", "fingerprint", "model"))
        o.runs.append(audit)
        if audit.rc == 0 and second not in (d / "a" / "report.md").read_text(encoding="utf-8"):
            problems.append(f"audit accepted answers of two deployments; report.md never names {second!r}")
        return problems

    return check


def _redirect_case(suite: Suite, d: Path) -> Outcome:
    o = Outcome("server", "", key=suite.key)
    with ChatServer() as target, ChatServer(redirect_to=target.url + "/chat/completions") as server:
        server.httpd.handle_error = target.httpd.handle_error = lambda *a: None
        o.runs.append(suite.omni(suite.judge_argv(server.url, "p.jsonl"), d, expect="refuse",
                                 names=("redirect", target.url.split("//")[1].split("/")[0])))
        if any(a and suite.key in a for a in target.auth + target.get_auth):
            o.problems.append("the key reached the redirect target")
    o.outputs, o.secret_roots, o.leftovers = [d / "p.jsonl"], [d / "cache"], leftovers(d)
    return o


def _deployment_cache_case(suite: Suite, d: Path) -> Outcome:
    """Answers cached from one deployment are not served for another one under the same name."""
    o = Outcome("server", "", key=suite.key)
    with FaultServer(models=[{"id": "m", "object": "model", "root": "/weights/v1"}], served_model="m",
                     system_fingerprint="fp-1") as server:
        o.runs.append(suite.omni(suite.judge_argv(server.url, "p1.jsonl", "-q"), d, expect="succeed"))
        before = server.requests
        server.models = [{"id": "m", "object": "model", "root": "/weights/v2"}]
        server.system_fingerprint = "fp-2"
        o.runs.append(suite.omni(suite.judge_argv(server.url, "p2.jsonl", "-q"), d, expect="succeed"))
        asked = server.requests - before
    if o.runs[-1].rc == 0:
        fps = {r.get("system_fingerprint") for r in rows(d / "p2.jsonl")}
        if asked < len(suite.prompts) or fps != {"fp-2"}:
            o.problems.append(f"the second deployment was asked {asked} of {len(suite.prompts)} items; rows say "
                              f"fingerprints {sorted(map(str, fps))} (answers of /weights/v1 served from the cache)")
    o.outputs, o.secret_roots, o.leftovers = [d / "p1.jsonl", d / "p2.jsonl"], [d / "cache"], leftovers(d)
    return o


def _probs_follow_text(suite, d, server, run, o) -> list[str]:
    """Option probabilities never override the text: a row keeps none, or ones whose favourite is its label."""
    problems = _labels_check(suite, d / "p.jsonl", lambda p: False)
    for r in rows(d / "p.jsonl"):
        probs = r.get("option_probs")
        if probs and max(probs, key=probs.get) != r.get("label"):
            problems.append(f"{r['id']}: option_probs {probs} favour another option than the text {r.get('raw')!r}")
    return problems[:5]


def _finish_reasons(suite, d, server, run, o) -> list[str]:
    """An odd finish_reason is kept as text (or dropped), and an audit of the file still runs."""
    bad = {json.dumps(r.get("finish_reason")) for r in rows(d / "p.jsonl")
           if not isinstance(r.get("finish_reason"), str | None)}
    return ([f"finish_reason kept as {sorted(bad)[:2]}"] if bad else []) + _audited(suite, d, server, run, o)


def _credential_url(where: str) -> Callable[[Suite, Path], Outcome]:
    """A judge URL carrying the key (``user:KEY@`` or ``?api_key=KEY``) is refused without showing the key."""

    def case(suite: Suite, d: Path) -> Outcome:
        o = Outcome("server", "", key=suite.key)
        with FaultServer(models=LISTED) as server:
            host = server.url.split("//")[1]
            url = (f"http://user:{suite.key}@{host}" if where == "userinfo" else f"{server.url}?api_key={suite.key}")
            argv = ["judge", "--dataset", str(suite.ds), "--config", "judge", "--judge", f"openai:m@{url}",
                    "--cache", "cache", "--out", "p.jsonl"]
            o.runs.append(suite.omni(argv, d, expect="refuse", names=("credential", "query", "url", "user", "***")))
            if server.requests:
                o.problems.append(f"{server.requests} requests sent to a URL carrying credentials")
        o.outputs, o.secret_roots, o.leftovers = [d / "p.jsonl"], [d / "cache"], leftovers(d)
        return o

    return case


def _nonfinite_probs(body: dict, answer: str) -> dict[str, float]:
    return {answer: float("inf"), ("B" if answer == "A" else "A"): float("nan")}


def server_cases(rng: random.Random) -> list[Case]:
    fs, cs = FaultServer, ChatServer
    k = 4
    partial = [  # (mode, extra args, lenient)
        ("truncate", ["--max-retries", "1"], False), ("reset", ["--max-retries", "1"], False),
        ("empty_choices", [], False), ("no_choices", [], False), ("choices_string", [], False),
        ("error_200", [], False), ("content_number", [], False), ("content_list", [], True), ("html", [], False),
        ("length_empty", [], False), ("huge", ["--max-reply-mb", "1"], False),
        ("sleep", ["--timeout", "1", "--max-retries", "0"], False), ("logprobs_garbage", [], True),
        ("logprobs_nan", [], True)]
    cases = []
    for mode, extra, lenient in partial:
        tier = "smoke" if mode in ("truncate", "logprobs_nan") else "quick"
        cases.append(Case("server", f"{mode} on 1 item in {k}", tier,
                          serve(lambda mode=mode: fs(every(k, mode), models=LISTED), ["-q", *extra], "either",
                                k=k, lenient=lenient, check=_audited)))
    for mode, extra in (("empty_choices", []), ("length_empty", []), ("huge", ["--max-reply-mb", "1", "--limit",
                                                                                "8"]),
                        ("html", ["--limit", "8"])):
        cases.append(Case("server", f"{mode} on every item", "quick" if mode != "html" else "full",
                          serve(lambda mode=mode: fs(mode, models=LISTED), ["-q", *extra], "refuse",
                                names=("usable", "answers", "replies"))))
    fault_of = {"garbage": "garbage", "null": "null"}
    for mode in fault_of:
        cases.append(Case("server", f"chat_server {mode} on 1 item in {k}", "quick",
                          serve(lambda mode=mode: cs(fault=lambda b, m=mode: m if faulted(
                              b["messages"][-1]["content"] if isinstance(b["messages"][-1]["content"], str)
                              else b["messages"][-1]["content"][-1]["text"], k) else None,
                                                     answer=seeded_answer, models=LISTED),
                                ["-q"], "either", k=k)))
    # a transport fault (a cut or reset connection, a timeout) is retried: every item answered; a reply that is
    # not an answer (an error page, no choices) is kept as a non-answer, never as another label
    for mode, extra, tier in (("truncate", [], "quick"), ("reset", [], "quick"), ("sleep", ["--timeout", "1"], "full"),
                              ("html", [], "full"), ("empty_choices", [], "quick")):
        transport = mode in ("truncate", "reset", "sleep")
        cases.append(Case("server", f"{mode} once on 1 item in {k} (transient)", tier,
                          serve(lambda mode=mode: fs(once(k, mode), models=LISTED), ["-q", "--max-retries", "2",
                                                                                    *extra],
                                "either", k=None if transport else k, lenient=True,
                                check=_all_answered if transport else None)))
    for value in ("nan", "-1", "inf", "1e400", "3600", "Wed, 21 Oct 2015 07:28:00 GMT", "soon"):
        cases.append(Case("server", f"429 with Retry-After {value!r}", "quick" if value in ("nan", "-1") else "full",
                          serve(lambda value=value: cs(fail_first=2, status=429, retry_after=value,
                                                       answer=seeded_answer, models=LISTED),
                                ["-q", "--max-retries", "3"], "either", check=_all_answered)))
    for label, raw, status in (("not JSON", b"<html>nope</html>", 200), ("data a string", b'{"data": "m"}', 200),
                               ("data of numbers", b'{"data": [1, 2]}', 200), ("HTTP 500", b'{"error": "x"}', 500),
                               ("NaN created", b'{"data": [{"id": "m", "created": NaN}]}', 200)):
        tier = "quick" if label in ("not JSON", "data of numbers") else "full"
        cases.append(Case("server", f"/models {label}", tier,
                          serve(lambda raw=raw, status=status: fs(models_raw=raw, models_status=status), ["-q"],
                                "either", check=_all_answered)))
    cases += [
        Case("server", "logprobs favour the option the text does not name", "quick",
             serve(lambda: fs(every(2, "logprobs_disagree"), models=LISTED), ["-q"], "either",
                   check=_probs_follow_text)),
        Case("server", "finish_reason an object", "quick",
             serve(lambda: fs(every(3, "finish_reason_object"), models=LISTED), ["-q"], "either",
                   check=_finish_reasons)),
        Case("server", "the key in the judge URL (user:KEY@)", "quick", _credential_url("userinfo")),
        Case("server", "the key in the judge URL (?api_key=)", "full", _credential_url("query")),
        Case("server", "500 on the first 3 requests", "quick",
             serve(lambda: cs(fail_first=3, status=500, answer=seeded_answer, models=LISTED), ["-q"], "succeed",
                   check=_all_answered)),
        Case("server", "429 with Retry-After on the first 3", "smoke",
             serve(lambda: cs(fail_first=3, status=429, retry_after="0", answer=seeded_answer, models=LISTED),
                   ["-q"], "succeed", check=_all_answered)),
        Case("server", "500 on every request", "quick",
             serve(lambda: cs(always_fail=True, status=500), ["--max-retries", "1"], "refuse",
                   names=("500", "127.0.0.1", "server"))),
        Case("server", "401 on every request", "quick",
             serve(lambda: cs(always_fail=True, status=401, echo_auth=True), [], "refuse", names=(KEY_VAR,))),
        Case("server", "redirect to another server", "quick", _redirect_case),
        Case("server", "trickled reply past --timeout", "full",
             serve(lambda: cs(trickle="body", trickle_s=0.3, answer=seeded_answer), ["--timeout", "1",
                                                                                     "--max-retries", "0",
                                                                                     "--limit", "8"],
                   "refuse", names=("usable", "answers", "replies", "--timeout"))),
        Case("server", "20 MB reply without Content-Length", "quick",
             serve(lambda: cs(huge=20_000_000, answer=seeded_answer), ["--max-reply-mb", "1", "--limit", "8"],
                   "refuse", names=("usable", "answers", "replies"))),
        Case("server", "key echoed in every field, then audited", "smoke",
             serve(lambda: cs(echo_key=EVERYWHERE, probs=lambda b, a: {a.split()[0]: 0.8, "x": 0.2},
                              answer=seeded_answer, models=LISTED), ["-q"], "succeed", check=_audited)),
        Case("server", "key echoed in error bodies and answers", "quick",
             serve(lambda: cs(echo_auth=True, fail_first=2, status=500, answer=seeded_answer, models=LISTED),
                   ["-q"], "either", names=("usable",), check=_audited)),
        Case("server", "infinite / NaN option logprobs (chat_server)", "quick",
             serve(lambda: cs(probs=_nonfinite_probs, answer=seeded_answer, models=LISTED), ["-q"], "succeed",
                   check=_both(_all_answered, _audited))),
        Case("server", "a reply naming another model", "smoke",
             serve(lambda: cs(served_model="other-model", answer=seeded_answer, models=LISTED), [], "succeed",
                   check=_both(_all_answered, _warns("other-model")))),
        Case("server", "the model is not listed under /models", "quick",
             serve(lambda: cs(answer=seeded_answer, models=[{"id": "another"}]), [], "succeed",
                   check=_warns("/models"))),
        Case("server", "served model switched mid-run", "quick",
             serve(lambda: fs(models=LISTED, served_model="m", switch_after=40, switched_model="m-v2"), [],
                   "succeed", check=_mixed_deployments("served_model", "m", "m-v2"), cache=False)),
        Case("server", "system fingerprint switched mid-run", "full",
             serve(lambda: fs(models=LISTED, served_model="m", system_fingerprint="fp-1", switch_after=40,
                              switched_model="m", switched_fingerprint="fp-2"), [], "succeed",
                   check=_mixed_deployments("system_fingerprint", "fp-1", "fp-2"), cache=False)),
        Case("server", "another deployment behind a cached answer", "quick", _deployment_cache_case),
    ]
    return cases
