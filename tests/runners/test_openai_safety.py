"""Trustworthy `openai:` runs: the key goes only where the user meant it and never shows up in a message, an answer
or the cache; a request is bounded as a whole in time and size; 401 / 403 and redirects stop the run; the model's
identity and every completion's finish reason are recorded; the response cache is keyed by item, run and served
model. Against the fault-injecting chat server (tests/chat_server.py), and once against `transformers serve`."""

import json
import time

import pytest
from chat_server import ChatServer
from transformers_server import TransformersServer, missing_modules

from omniaudit.cli import main
from omniaudit.errors import InputError, ServiceError
from omniaudit.runners import make_judge
from omniaudit.runners.items import Answer, JudgeItem, Sampling
from omniaudit.runners.openai_compat import OpenAIJudge
from omniaudit.runners.openai_server import stable_served
from omniaudit.runners.transport import is_loopback, key_env_for, redact

KEY = "sk-test-0123456789abcdef"
OTHER_HOST = "http://10.255.255.1:8000/v1"  # never contacted: every test using it is refused before any request


@pytest.fixture
def key(monkeypatch):
    """TEST_KEY holds KEY; OPENAI_API_KEY holds another key that must never be sent to a loopback server."""
    monkeypatch.setenv("TEST_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-must-stay-home-000")
    return "TEST_KEY"


def _items(n=2, prompt="Is it raining? Answer with exactly one of: yes, no."):
    return [JudgeItem(id=f"q{i}", prompt=prompt, options=["yes", "no"]) for i in range(n)]


# ---- which key goes where -------------------------------------------------------------------------------------------

def test_the_key_goes_only_where_it_was_meant(key):
    for url in ("http://localhost:8000/v1", "http://127.0.0.1/v1", "http://127.8.9.10:1/v1", "http://[::1]:8000/v1",
                "http://[::ffff:127.0.0.1]/v1"):
        assert is_loopback(url) and key_env_for(None, url) is None, url
    for url in ("http://10.0.0.1/v1", "https://api.openai.com/v1", "http://127.0.0.1.nip.io/v1",
                "http://localhost.example.com/v1"):
        assert not is_loopback(url) and key_env_for(None, url) == "OPENAI_API_KEY", url
    assert key_env_for("none", "https://api.openai.com/v1") is None and key_env_for("", "http://x/v1") is None
    assert key_env_for("MY_KEY", "http://localhost/v1") == "MY_KEY"
    with pytest.raises(InputError, match="NAME of an environment variable") as err:  # the key itself, by mistake
        key_env_for(KEY, "https://api.openai.com/v1")
    assert KEY not in str(err.value)
    with ChatServer(models=[]) as server:
        OpenAIJudge("m", server.url, None).answer(_items(1))  # default: no key to a loopback URL
        judge = OpenAIJudge("m", server.url, None, api_key_env=key)
        judge.answer(_items(1))
        judge.identity()
    assert server.auth == [None, f"Bearer {KEY}"] and server.get_auth == [f"Bearer {KEY}"]


def test_no_key_over_plain_http_to_another_host(key, monkeypatch, mixed_dataset, tmp_path, capsys):
    for api_key_env in (None, key):  # the default OPENAI_API_KEY, or a named one
        with pytest.raises(InputError, match=r"plain http:// .*\$(OPENAI_API_KEY|TEST_KEY).*--allow-insecure-key"):
            OpenAIJudge("m", OTHER_HOST, None, api_key_env=api_key_env)
    OpenAIJudge("m", OTHER_HOST, None, api_key_env=key, allow_insecure_key=True)  # opted in
    OpenAIJudge("m", OTHER_HOST, None, api_key_env="none")  # no key: nothing to protect
    OpenAIJudge("m", "https://10.255.255.1/v1", None, api_key_env=key)  # encrypted
    out = tmp_path / "p.jsonl"
    args = ["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", f"openai:m@{OTHER_HOST}",
            "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--allow-insecure-key" in err and "sk-" not in err and not out.exists()
    monkeypatch.delenv("OPENAI_API_KEY")
    OpenAIJudge("m", OTHER_HOST, None)  # the default variable is not set: no key would be sent
    seen = {}

    def fake_make_judge(spec, **options):
        seen.update(options)
        raise InputError("stopped by the test")

    monkeypatch.setattr("omniaudit.runners.run.make_judge", fake_make_judge)
    assert main([*args, "--api-key-env", "TEST_KEY", "--allow-insecure-key", "--timeout", "7",
                 "--max-reply-mb", "2"]) == 2
    assert (seen["api_key_env"], seen["allow_insecure_key"], seen["timeout_s"], seen["max_reply_bytes"]) == (
        "TEST_KEY", True, 7.0, 2 << 20)


def test_credentials_in_the_url_are_refused_and_never_echoed(mixed_dataset, tmp_path, capsys):
    specs = {"openai:m@http://user:hunter2pw@127.0.0.1:9/v1": "user:***@",
             "openai:m@https://user:hunter2pw@api.example.com/v1": "user:***@",
             "openai:m@https://hunter2pw@api.example.com/v1": "https://***@",
             "openai:m@https://api.example.com/v1?api_key=hunter2pw": "api_key=***",
             "openai:m@https://api.example.com/v1?key=hunter2pw&x=1": "key=***",
             "openai:http://user:hunter2pw@api.example.com/v1": "user:***@",  # no model: malformed, still redacted
             "opnai:m@http://user:hunter2pw@api.example.com/v1": "user:***@"}  # unknown kind
    for spec, shown in specs.items():
        with pytest.raises(InputError) as err:
            make_judge(spec, api_key_env="none")
        assert "hunter2pw" not in str(err.value) and shown in str(err.value), spec
    for spec in list(specs)[:2]:
        assert main(["judge", "--dataset", str(mixed_dataset), "--config", "mixed", "--judge", spec, "--out",
                     str(tmp_path / "p.jsonl")]) == 2
        captured = capsys.readouterr()
        assert "hunter2pw" not in captured.err + captured.out and "carries credentials" in captured.err
    judge = make_judge("openai:org/m@v2@https://api.example.com/v1/", api_key_env="none")  # "@" in a model name
    assert (judge.model, judge.url) == ("org/m@v2", "https://api.example.com/v1")
    text = (f"GET https://u:pw1234@h/v1?api-key=abc123&model=x failed; sent Authorization: Bearer {KEY}; "
            "key=leaked sk-abcdefghijklmnopqrst")
    assert redact(text, "leaked") == ("GET https://u:***@h/v1?api-key=***&model=x failed; sent Authorization: "
                                      "Bearer ***; key=*** sk-***")


# ---- bounded requests -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("trickle", ["body", "headers"])
def test_the_timeout_bounds_the_whole_request(trickle):
    """A server sending a byte every 0.3 s would take a minute per reply; each read is within httpx's timeout."""
    with ChatServer(trickle=trickle, trickle_s=0.3) as server:
        judge = OpenAIJudge("m", server.url, None, timeout_s=1.0, max_retries=0)
        start = time.monotonic()
        with pytest.raises(ServiceError, match=r"failed after 1 attempts \(no complete reply within 1 s "
                                               r"\(--timeout bounds the whole request\)"):
            judge.answer(_items(1))
        assert time.monotonic() - start < 3.0


@pytest.mark.parametrize("declared", [True, False])
def test_a_huge_reply_is_cut_and_counted_as_a_non_answer(declared):
    with ChatServer(huge=9 << 20, huge_declared=declared) as server:
        with pytest.raises(ServiceError, match=r"most replies are not chat completions .* \[reply cut: larger than "
                                               r"8 MB"):
            OpenAIJudge("m", server.url, None, max_retries=3).answer(_items(1))
        assert server.requests == 1  # not retried: the same request would bring the same reply


# ---- refusals and redirects stop the run ----------------------------------------------------------------------------

def test_401_and_403_stop_the_run_naming_the_key(key, tmp_path):
    with ChatServer(always_fail=True, status=401, echo_auth=True) as server:
        judge = OpenAIJudge("m", server.url, None, api_key_env=key, concurrency=1)
        with pytest.raises(InputError, match=r"the server refused the key in \$TEST_KEY \(HTTP 401") as err:
            judge.answer(_items(5))
        assert server.requests == 1 and KEY not in str(err.value) and "Bearer ***" in str(err.value)
        with pytest.raises(InputError, match=r"refused the key in \$TEST_KEY \(HTTP 401"):  # /models refuses too
            OpenAIJudge("m", server.url, tmp_path / "c", api_key_env=key).answer(_items(1))
        assert server.requests == 1 and server.gets == 1
    with ChatServer(always_fail=True, status=403) as server:
        with pytest.raises(InputError, match=r"refused the request \(HTTP 403.*no key was sent \(no key is sent to a "
                                             r"loopback URL.*set --api-key-env"):
            OpenAIJudge("m", server.url, None).answer(_items(2))
        with pytest.raises(InputError, match=r"no key was sent \(\$UNSET_KEY is not set\)"):
            OpenAIJudge("m", server.url, None, api_key_env="UNSET_KEY").answer(_items(2))


def test_redirects_are_not_followed_and_the_key_stays(key, tmp_path):
    with ChatServer() as target:
        elsewhere = target.url.replace("127.0.0.1", "localhost")  # another host name, same machine
        with ChatServer(redirect_to=f"{elsewhere}/chat/completions") as origin:
            judge = OpenAIJudge("m", origin.url, None, api_key_env=key)
            with pytest.raises(InputError, match=rf"answered HTTP 302, a redirect to {elsewhere}/chat/completions; "
                                                 "redirects are not followed"):
                judge.answer(_items(1))
            with pytest.raises(InputError, match="HTTP 302"):  # /models too
                OpenAIJudge("m", origin.url, tmp_path / "c", api_key_env=key).identity()
            assert origin.auth == [f"Bearer {KEY}"] and origin.get_auth == [f"Bearer {KEY}"]
        with ChatServer(redirect_to="https://user:hunter2pw@example.com/v1?token=abc123") as origin, \
                pytest.raises(InputError, match=r"redirect to https://user:\*\*\*@example.com/v1\?token=\*\*\*;"):
            OpenAIJudge("m", origin.url, None).answer(_items(1))
    assert target.requests == target.gets == 0 and target.auth == []  # nothing reached the redirect target


def test_server_text_never_echoes_the_key(key, tmp_path):
    """A server that echoes the Authorization header it got: in an answer, an error reply and a retried failure."""
    with ChatServer(echo_auth=True, fault=lambda body: 400 if "refuse" in body["messages"][-1]["content"][-1]["text"]
                    else None) as server:
        judge = OpenAIJudge("m", server.url, tmp_path / "cache", api_key_env=key)
        items = _items(3) + [JudgeItem(id="r", prompt="please refuse this. Answer with exactly one of: yes, no.",
                                       options=["yes", "no"])]
        answers = judge.answer(items)
    assert all(KEY not in a for a in answers) and "(you sent Bearer ***)" in answers[0]
    assert answers[3].startswith("[HTTP 400") and "Bearer ***" in answers[3]
    stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
    assert stored and KEY not in stored
    with ChatServer(always_fail=True, status=503, echo_auth=True) as down, pytest.raises(ServiceError) as err:
        OpenAIJudge("m", down.url, None, api_key_env=key, max_retries=0).answer(_items(1))
    assert KEY not in str(err.value) and "Bearer ***" in str(err.value)


# ---- model identity, finish reasons, the cache key ------------------------------------------------------------------

SERVED = {"id": "m", "object": "model", "created": 1700000000, "owned_by": "acme", "root": "/weights/m-v1"}


def test_identity_is_what_the_server_says_of_the_model(key):
    with ChatServer(models=[{"id": "other", "object": "model"}, SERVED]) as server:
        judge = OpenAIJudge("m", server.url + "/", None, api_key_env=key)
        stable = stable_served(SERVED)  # without the fields that change per request (created, ...)
        assert "created" in SERVED and "created" not in stable
        assert judge.identity() == {"kind": "openai", "url": server.url, "model": "m", "served": stable}
        judge.identity()["served"]["id"] = "changed"  # a copy
        assert judge.identity()["served"] == stable and server.gets == 1  # asked once
        assert OpenAIJudge("unlisted", server.url, None).identity()["served"] is None
        server.models = [{**SERVED, "root": "/weights/m-v2"}]
        assert judge.identity()["served"] == stable  # cached ...
        assert judge.identity(refresh=True)["served"]["root"] == "/weights/m-v2" and server.gets == 3  # ... or asked
    with ChatServer() as server:  # no /models (404): recorded, not fatal
        judge = OpenAIJudge("m", server.url, None)
        assert judge.identity()["served"] is None and judge.answer(_items(1)) == ["yes"]


def test_finish_reason_is_recorded_and_cached(tmp_path):
    assert Answer("x").finish_reason is None and Answer("x", {"x": 1.0}).option_probs == {"x": 1.0}
    cache = tmp_path / "cache"
    with ChatServer(finish_reason="length", models=[SERVED]) as server:
        answers = OpenAIJudge("m", server.url, cache).answer(_items(2))
        assert [a.finish_reason for a in answers] == ["length", "length"]
        again = OpenAIJudge("m", server.url, cache).answer(_items(2))
        assert server.requests == 2 and [a.finish_reason for a in again] == ["length", "length"]  # from the cache
        for path in cache.rglob("*.json"):  # a cache entry written before finish reasons were kept
            record = json.loads(path.read_text())
            del record["finish_reason"]
            path.write_text(json.dumps(record))
        old = OpenAIJudge("m", server.url, cache).answer(_items(2))
        assert server.requests == 2 and [a.finish_reason for a in old] == [None, None] and old == again


def test_the_cache_is_keyed_by_item_run_and_served_model(tmp_path):
    cache = tmp_path / "cache"
    hot = Sampling(temperature=1.0, seed=None)
    with ChatServer(models=[dict(SERVED)]) as server:
        def ask(sampling=hot):
            OpenAIJudge("m", server.url, cache, sampling=sampling).answer(_items(3))  # one prompt, three items
            return server.requests

        assert ask() == 3  # items sharing a prompt are sampled separately
        assert ask() == 3  # and cached separately
        assert ask(Sampling(temperature=1.0, run=1)) == 6  # another run: asked again
        server.models = [{**SERVED, "created": 1800000000, "status": {"value": "loaded"}}]  # volatile fields only
        assert ask() == 6
        server.models = [{**SERVED, "root": "/weights/m-v2"}]  # another model served under the same URL and name
        assert ask() == 9
        server.models = None  # the server stopped listing models: not the listed model any more
        assert ask() == 12


# ---- a real server --------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(bool(missing_modules()), reason=f"`transformers serve` needs {missing_modules()}")
def test_transformers_serve_reports_the_model_and_finish_reasons(tmp_path):
    from omniaudit.tiny_models import tiny_causal_lm

    model = str(tiny_causal_lm(tmp_path / "text"))
    server = TransformersServer(tmp_path / "serve.log")
    try:
        judge = OpenAIJudge(model, server.url, None, max_tokens=3)
        answers = judge.answer(_items(1))  # loads the model: a local folder is listed once loaded
        identity = judge.identity()
    finally:
        server.close()
    assert answers[0].finish_reason in ("length", "stop")
    assert identity["kind"] == "openai" and identity["model"] == model and identity["url"] == server.url
    assert identity["served"]["id"] == model and identity["served"]["owned_by"] == "local"
