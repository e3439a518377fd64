"""The language-model agent against a local fake OpenAI-compatible server (no network)."""

import json
import os
import socket
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent_arena_sdk import ArenaError, Observation
from agent_arena_sdk.llm import APIError, ChatClient, ConnError, LLMAgent, is_fatal
from agent_arena_sdk.xmltags import COMPLETE, INCOMPLETE, MALFORMED, NONE, TagParser

TOOLS = [
    {"name": "move_to", "description": "Move.", "query": False,
     "parameters": {"type": "object", "properties": {"target": {"type": "array", "items": {"type": "number"}}},
                    "required": ["target"], "additionalProperties": False}},
    {"name": "collect", "description": "Collect.", "query": False,
     "parameters": {"type": "object", "properties": {"target_name": {"type": "string"}}, "required": ["target_name"],
                    "additionalProperties": False}},
    {"name": "query_world", "description": "Look around.", "query": True, "persistence": "permanent",
     "parameters": {"type": "object", "properties": {"radius": {"type": "number"}}, "additionalProperties": False}},
    {"name": "query_inventory", "description": "Inventory.", "query": True,
     "parameters": {"type": "object", "properties": {}, "additionalProperties": False}},
]


def tool_reply(*calls, content=""):
    tcs = [{"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)]
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content, "tool_calls": tcs},
                         "finish_reason": "tool_calls"}]}


def text_reply(text):
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}


def streamed(text, finish="stop", n=3, delay=0.002, brk=False):
    """A reply streamed as server-sent events, n characters a chunk; with ``brk`` the
    connection drops after the text, before any finish_reason or [DONE]."""
    return Stream([text[i:i + n] for i in range(0, len(text), n)], finish, delay, brk=brk)


class Stream:
    """Server-sent events: ``pieces`` of text, then a finish event with usage and [DONE];
    or ``events`` as they are, then [DONE]. ``brk`` drops the connection after the pieces
    or events instead: "eof" ends the chunked body cleanly, True drops the connection before
    its last chunk (Python's http.client reads both as the end of the text)."""

    def __init__(self, pieces, finish="stop", delay=0.002, events=None, brk=False):
        self.pieces, self.finish, self.delay, self.events, self.brk = pieces, finish, delay, events, brk


class Cut:
    """A JSON reply whose connection drops halfway through its body."""

    def __init__(self, payload):
        self.payload = payload


def ev(delta, finish=None):
    return {"id": "s", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def call_delta(i, cid, name, args):
    tc = {"index": i, "function": {"arguments": args}}
    if name:
        tc["function"]["name"] = name
    if cid:
        tc["id"], tc["type"] = cid, "function"
    return {"tool_calls": [tc]}


def streamed_call(i, cid, name, args, n):
    """A tool call as OpenAI streams it: id and name (in two pieces), then the arguments
    n characters a chunk."""
    h = len(name) // 2
    return ([ev(call_delta(i, cid, name[:h], "")), ev(call_delta(i, "", name[h:], ""))] +
            [ev(call_delta(i, "", "", args[j:j + n])) for j in range(0, len(args), n)])


def usage_ev(tin, tout):
    return {"id": "s", "choices": [], "usage": {"prompt_tokens": tin, "completion_tokens": tout}}


class FakeServer:
    """Replays recorded responses in order: a dict (200), (status, headers, body, delay),
    or a Stream. ``sent`` counts, per stream, the chunks written before the client closed it."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests = []
        self.sent = []
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                r = fake.replies.pop(0) if fake.replies else text_reply("out of replies")
                if isinstance(r, Stream):
                    return self.stream(r)
                if isinstance(r, Cut):  # half a JSON body, then the connection drops
                    data = json.dumps(r.payload).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[:len(data) // 2])
                    self.close_connection = True
                    return
                status, headers, payload, delay = (200, {}, r, 0) if isinstance(r, dict) else r
                if delay:
                    time.sleep(delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            def stream(self, r):
                n = 0
                self.protocol_version = "HTTP/1.1"  # a chunked body, as real servers send

                def chunk(data):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()

                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    events = list(r.events or []) + [
                        {"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in r.pieces]
                    for e in events:
                        time.sleep(r.delay)
                        chunk(b"data: " + json.dumps(e).encode() + b"\n\n")
                        n += 1
                    if r.brk:
                        self.close_connection = True
                        if r.brk == "eof":
                            self.wfile.write(b"0\r\n\r\n")  # a whole body, but no finish and no [DONE]
                        return
                    if r.events is None:
                        e = {"choices": [{"index": 0, "delta": {}, "finish_reason": r.finish}],
                             "usage": {"prompt_tokens": 100, "completion_tokens": len(r.pieces)}}
                        chunk(b"data: " + json.dumps(e).encode() + b"\n\n")
                    chunk(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass
                finally:
                    fake.sent.append(n)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


OBS = Observation.wrap({"tick": 5, "agent_id": "a0", "position": [1, 0, 2], "health": 100, "max_health": 100,
                        "score": 0.5, "inventory": {"wood": 1}, "objective": {"description": "gather wood"},
                        "nearby_resources": [{"name": "Tree1", "resource_type": "wood", "position": [3, 0, 2],
                                              "distance": 2.0}]})


class LLMTest(unittest.TestCase):
    def setUp(self):
        self.queries = []

    def agent(self, replies, **kw):
        self.srv = FakeServer(replies)
        self.addCleanup(self.srv.close)

        def q(tool, params):
            self.queries.append((tool, params))
            if tool == "query_inventory":
                raise ArenaError("LIMIT_EXCEEDED", "too many queries", False, tool)
            return {"query_result": {"entities": [{"name": "Tree1"}]}}

        kw.setdefault("query", q)
        return LLMAgent(model="m", base_url=self.srv.url, api_key="k", tools=TOOLS, backoff=0.01, **kw)

    def test_records_with_dict_method_keys_encode(self):
        """A Record's payload keys win over dict methods (``details.items`` is the list),
        so the welcome's tools (array schemas carry "items") and observation parts must
        reach json as plain values: a regression where every model call failed and the
        agent idled."""
        from agent_arena_sdk.llm import compact
        from agent_arena_sdk.types import Record
        self.assertEqual(compact(Record({"items": [Record({"name": "x"})], "keys": 1})),
                         '{"items":[{"name":"x"}],"keys":1}')

    def test_tool_call_is_the_decision(self):
        a = self.agent([tool_reply(("collect", '{"target_name": "Tree1"}'), content="a tree")])
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params, d.reasoning), ("collect", {"target_name": "Tree1"}, "a tree"))
        req = self.srv.requests[0]
        self.assertEqual(req["path"], "/v1/chat/completions")
        self.assertEqual(req["auth"], "Bearer k")
        self.assertEqual(req["body"]["model"], "m")
        self.assertTrue(req["body"]["stream"])  # asked for; the server answered with JSON
        self.assertEqual([t["function"]["name"] for t in req["body"]["tools"]], [t["name"] for t in TOOLS])
        sysmsg, user = req["body"]["messages"]
        self.assertIn("**query_world** (query: answered at once", sysmsg["content"])
        self.assertIn("# Tick 5 — you are a0", user["content"])
        self.assertIn("Tree1 wood @(3,0) d=2.0", user["content"])

    def test_query_mid_turn_then_action_and_knowledge(self):
        a = self.agent([tool_reply(("query_world", '{"radius": 20}')),
                        tool_reply(("move_to", '{"target": [3, 0, 2]}'), content="go"),
                        tool_reply(("collect", '{"target_name": "Tree1"}'))])
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params), ("move_to", {"target": [3.0, 0.0, 2.0]}))
        self.assertEqual(self.queries, [("query_world", {"radius": 20.0})])
        msgs = self.srv.requests[1]["body"]["messages"]
        self.assertEqual(msgs[-1]["role"], "tool")
        self.assertEqual(msgs[-1]["tool_call_id"], "c0")
        self.assertEqual(json.loads(msgs[-1]["content"]),
                         {"status": "success", "result": {"query_result": {"entities": [{"name": "Tree1"}]}}})
        self.assertEqual(len(a.knowledge()), 1)
        a.decide(OBS)  # a permanent result is in the next turn's prompt
        user = self.srv.requests[2]["body"]["messages"][1]["content"]
        self.assertIn("## Knowledge", user)
        self.assertIn('query_world {"radius":20.0} →', user)
        self.assertIn("tick 5: move_to", user)
        a.on_episode_start({})
        self.assertEqual(a.knowledge(), [])

    def test_tool_call_limit(self):
        a = self.agent([tool_reply(("query_inventory", "{}"))] * 3 + [tool_reply(("collect", '{"target_name": "x"}'))],
                       tool_call_limit=2)
        d = a.decide(OBS)
        self.assertEqual(d.tool, "idle")
        self.assertIn("tool call limit of 2 reached", d.reasoning)
        self.assertEqual(len(self.srv.requests), 3)  # two failed queries count, the third call ends the turn
        err = json.loads(self.srv.requests[1]["body"]["messages"][-1]["content"])
        self.assertEqual(err, {"status": "error", "result": "LIMIT_EXCEEDED: too many queries"})

    def test_unknown_tool_and_bad_arguments(self):
        a = self.agent([tool_reply(("fly", "{}")), tool_reply(("collect", "{target_name: Tree1")),
                        tool_reply(("collect", '{"target_name": 3}')), tool_reply(("collect", '{"target_name": "T"}'))])
        self.assertEqual(a.decide(OBS).tool, "collect")
        envs = [json.loads(r["body"]["messages"][-1]["content"]) for r in self.srv.requests[1:]]
        self.assertEqual({e["status"] for e in envs}, {"error"})
        errs = [e["result"] for e in envs]
        self.assertTrue(errs[0].startswith('Tool not found: "fly". Available tools: collect, move_to'), errs[0])
        self.assertIn("Invalid arguments JSON: ", errs[1])
        self.assertIn("Invalid arguments for collect: param 'target_name' must be a string", errs[2])

    def test_no_tool_call_is_idle(self):
        a = self.agent([text_reply("  nothing to do  ")])
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.reasoning), ("idle", "nothing to do"))

    def test_timeout_then_retry_succeeds_and_transcript(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = self.agent([(200, {}, text_reply("late"), 0.6), (503, {"Retry-After": "0"}, {"error": {"message": "busy"}}, 0),
                            tool_reply(("collect", '{"target_name": "Tree1"}'))], timeout=0.3, transcripts=tmp)
            d = a.decide(OBS)
            self.assertEqual(d.tool, "collect")
            self.assertEqual(len(self.srv.requests), 3)
            with open(os.path.join(tmp, "a0.jsonl")) as f:
                lines = f.read().splitlines()
            t = json.loads(lines[0])
            self.assertEqual((t["agent"], t["tick"], t["mode"], t["tool_calls"]), ("a0", 5, "tools", 1))
            self.assertEqual(t["decision"]["tool"], "collect")

    def test_client_gives_up(self):
        srv = FakeServer([(500, {}, {"error": {"message": "down"}}, 0)] * 3 + [(400, {}, {"error": {"message": "bad"}}, 0)])
        self.addCleanup(srv.close)
        c = ChatClient("m", srv.url, "", retries=1, backoff=0.01)
        with self.assertRaises(APIError) as e:
            c.chat([{"role": "user", "content": "hi"}])
        self.assertEqual((e.exception.status, e.exception.message, len(srv.requests)), (500, "down", 2))
        c.retries = 3
        srv.replies = [(400, {}, {"error": {"message": "bad"}}, 0)]
        with self.assertRaises(APIError) as e:
            c.chat([{"role": "user", "content": "hi"}])
        self.assertEqual((e.exception.status, len(srv.requests)), (400, 3))  # not retried
        a = LLMAgent(chat=c, tools=TOOLS)
        srv.replies = [(400, {}, {"error": {"message": "too long"}}, 0)]
        d = a.decide(OBS)  # a request the server refuses fails the turn only
        self.assertEqual(d.tool, "idle")
        self.assertIn("model unavailable", d.reasoning)

    def test_env_defaults(self):
        old = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARENA_MODEL")}
        os.environ.update(OPENAI_BASE_URL="http://h:1/v1/", OPENAI_API_KEY="s", ARENA_MODEL="x")
        try:
            c = ChatClient()
            self.assertEqual((c.base_url, c.api_key, c.model), ("http://h:1/v1", "s", "x"))
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_fatal_statuses_raise_at_once(self):
        for status in (401, 403, 404):
            a = self.agent([(status, {}, {"error": {"message": "no\nway"}}, 0), tool_reply(("collect", "{}"))])
            with self.assertRaises(APIError) as e:
                a.decide(OBS)
            self.assertEqual(len(self.srv.requests), 1, f"HTTP {status} is not retried")
            self.assertTrue(is_fatal(e.exception))
            self.assertRegex(str(e.exception), rf"^model server {self.srv.url}/chat/completions: HTTP {status} \w.*: no way$")

    def test_refused_and_bad_url(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        a = LLMAgent(model="m", base_url=f"http://127.0.0.1:{port}/v1", tools=TOOLS, backoff=30)
        with self.assertRaises(ConnError) as e:
            a.decide(OBS)
        self.assertEqual(e.exception.attempts, 1)
        self.assertIn(f"model server http://127.0.0.1:{port}/v1/chat/completions: connection refused", str(e.exception))
        for url in ("localhost:8000/v1", "ftp://x/v1", "http:///v1"):
            with self.assertRaises(ConnError) as e:
                LLMAgent(model="m", base_url=url, tools=TOOLS).decide(OBS)
            self.assertIn("not a valid base URL", str(e.exception))

    def test_two_503_then_success_and_usage(self):
        busy = (503, {"Retry-After": "0"}, {"error": {"message": "busy"}}, 0)
        ok = tool_reply(("collect", '{"target_name": "Tree1"}'))
        ok["usage"] = {"prompt_tokens": 120, "completion_tokens": 7}
        a = self.agent([busy, busy, ok])
        self.assertEqual(a.decide(OBS).tool, "collect")
        self.assertEqual(len(self.srv.requests), 3)
        u = dict(a.usage)
        u.pop("latency_ms")
        self.assertEqual(u, {"model_calls": 1, "retries": 2, "tokens_in": 120, "tokens_out": 7,
                             "tokens_estimated": False})

    def test_retries_bounded(self):
        busy = (429, {}, {"error": {"message": "slow down"}}, 0)
        srv = FakeServer([busy] * 5)
        self.addCleanup(srv.close)
        with self.assertRaises(APIError) as e:
            ChatClient("m", srv.url, retries=2, backoff=0.001).chat([])
        self.assertEqual((e.exception.attempts, len(srv.requests)), (3, 3))
        self.assertIn("HTTP 429 Too Many Requests: slow down (gave up after 3 attempts)", str(e.exception))
        srv.replies = [(503, {"Retry-After": "30"}, {}, 0)]
        with self.assertRaises(APIError) as e:
            ChatClient("m", srv.url, retry_time=1).chat([])
        self.assertIn("no retry within 1s", str(e.exception))

    def test_run_stops_with_nonzero_exit(self):
        """A whole `run` against `arena serve`: a 401 or a refused port ends the process
        at once with a non-zero exit, the last line naming the URL and the failure; two
        503s then answers complete the episode."""
        from arena_server import Server
        import subprocess
        import sys
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        s.close()
        busy = (503, {"Retry-After": "0"}, {"error": {"message": "busy"}}, 0)
        cases = [([(401, {}, {"error": {"message": "bad key"}}, 0)], None, 1, "HTTP 401 Unauthorized: bad key"),
                 ([], refused, 1, "connection refused"),
                 ([busy, busy] + [tool_reply(("idle", "{}"))] * 10, None, 0, "")]
        for replies, url, code, want in cases:
            srv = FakeServer(replies)
            self.addCleanup(srv.close)
            url = url or srv.url
            arena = Server("--scenario", "foraging", "--agents", "1", "--ticks", "3", "--mode", "lockstep")
            self.addCleanup(arena.stop)
            script = ("from agent_arena_sdk import run\nfrom agent_arena_sdk.llm import LLMAgent\n"
                      f"run(LLMAgent(model='m', base_url={url!r}, backoff=0.01), {arena.address!r})\n")
            env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), ".."))
            start = time.monotonic()
            p = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
            self.assertLess(time.monotonic() - start, 30)
            self.assertEqual(p.returncode, code, p.stderr)
            if want:
                last = p.stderr.strip().splitlines()[-1]
                self.assertIn(f"model server {url}/chat/completions: ", last)
                self.assertIn(want, last)
            else:
                self.assertEqual(len(srv.requests), 5)  # 2 failures, then 3 ticks

    def test_xml_stream_interrupted_at_first_tag(self):
        after = " <observation>invented</observation> <collect>Tree9</collect>" + " and on" * 40
        a = self.agent([streamed("Checking. <query_inventory />" + after),
                        streamed('Look: <query_world>{"radius": 20}</query_world>' + after),
                        streamed("<query_wrld>5</query_wrld>" + after),
                        streamed("<thinking>hmm</thinking> Found it. <collect>Tree1</collect>" + after)],
                       xml=True)
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params), ("collect", {"target_name": "Tree1"}))
        self.assertIn("Checking.", d.reasoning)
        self.assertEqual([q[0] for q in self.queries], ["query_inventory", "query_world"])
        body = self.srv.requests[0]["body"]
        self.assertTrue(body["stream"])
        self.assertNotIn("stop", body)
        self.assertNotIn("tools", body)
        self.assertIn("XML tag", body["messages"][0]["content"])
        m1 = self.srv.requests[1]["body"]["messages"]
        self.assertEqual(m1[-2], {"role": "assistant", "content": "Checking. <query_inventory />"})
        self.assertEqual(m1[-1]["content"], "<observation>\nError: LIMIT_EXCEEDED: too many queries\n</observation>\nContinue.")
        m2 = self.srv.requests[2]["body"]["messages"]
        self.assertEqual(m2[-2]["content"], 'Look: <query_world>{"radius": 20}</query_world>')
        self.assertIn("Tree1", m2[-1]["content"])
        m3 = self.srv.requests[3]["body"]["messages"]
        self.assertIn("Error: <query_wrld> is not a tool; did you mean <query_world>?", m3[-1]["content"])
        for r in self.srv.requests:
            for m in r["body"]["messages"]:
                self.assertNotIn("invented", m["content"])
                self.assertNotIn("Tree9", m["content"])
        time.sleep(0.05)
        self.assertTrue(all(n < 30 for n in self.srv.sent), self.srv.sent)

    def test_xml_truncated_tag_not_run(self):
        a = self.agent([streamed("Let me read. <query_world>{\"rad", finish="length"),
                        streamed("<collect>Tre"),
                        streamed("<query_inventory /"),
                        text_reply("<collect>Tree1</collect>")], xml=True)
        d = a.decide(OBS)
        self.assertEqual(d.tool, "collect")
        self.assertEqual(self.queries, [])
        last = [r["body"]["messages"][-1]["content"] for r in self.srv.requests[1:]]
        self.assertIn("cut off", last[0])
        self.assertIn("<query_world>", last[0])
        self.assertIn("ended inside a tool tag", last[1])
        self.assertIn("ended inside a tool tag", last[2])

    def test_tool_calls_cut_by_length_not_run(self):
        cut = tool_reply(("collect", '{"target_name": "Tr"}'))
        cut["choices"][0]["finish_reason"] = "length"
        a = self.agent([cut, tool_reply(("collect", '{"target_name": "Tree1"}'))])
        self.assertEqual(a.decide(OBS).params, {"target_name": "Tree1"})
        m = self.srv.requests[1]["body"]["messages"]
        self.assertNotIn("tool_calls", m[-2])
        self.assertIn("cut off", m[-1]["content"])

    def test_envelopes(self):
        env = {"status": "success", "result": {"matches": [{"roundNumber": 1.0}]}}
        err = {"status": "error", "result": "Search term is required and must be a string"}

        def q(tool, params):
            if params.get("radius") == 1:
                raise ArenaError("INVALID_PARAMS", err["result"], False, tool, err)
            return env

        a = self.agent([tool_reply(("query_world", '{"radius": 1}')), tool_reply(("query_world", "{}")),
                        text_reply("done")], query=q)
        a.decide(OBS)
        self.assertEqual(self.srv.requests[1]["body"]["messages"][-1]["content"],
                         '{"status":"error","result":"Search term is required and must be a string"}')
        self.assertEqual(self.srv.requests[2]["body"]["messages"][-1]["content"],
                         '{"status":"success","result":{"matches":[{"roundNumber":1}]}}')

    def test_tool_calls_streamed(self):
        """Function-calling mode streams: calls split across many chunks (name and arguments
        in pieces, two calls interleaved by index) run exactly once, whole, after the end."""
        first = ([ev({"role": "assistant", "content": "Let me "}), ev({"content": "look."})] +
                 streamed_call(0, "call_a", "query_world", '{"radius": 20}', 2) +
                 [ev({}, "tool_calls"), usage_ev(90, 20)])
        q0 = streamed_call(0, "call_b", "query_world", '{"radius": 5}', 3)
        q1 = streamed_call(1, "call_c", "collect", '{"target_name": "Tree1"}', 1)
        second = [e for pair in zip(q0 + [None] * len(q1), q1) for e in pair if e]
        second += [ev({}, "tool_calls"), usage_ev(130, 60)]
        a = self.agent([Stream([], events=first), Stream([], events=second)])
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params), ("collect", {"target_name": "Tree1"}))
        self.assertEqual(self.queries, [("query_world", {"radius": 20.0}), ("query_world", {"radius": 5.0})])
        self.assertEqual(len(self.srv.requests), 2)
        for r in self.srv.requests:
            self.assertTrue(r["body"]["stream"])
            self.assertEqual(r["body"]["stream_options"], {"include_usage": True})
            self.assertEqual(len(r["body"]["tools"]), 4)
        m = self.srv.requests[1]["body"]["messages"]
        self.assertEqual(m[-2], {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "query_world", "arguments": '{"radius": 20}'}}]})
        self.assertEqual((m[-1]["role"], m[-1]["tool_call_id"]), ("tool", "call_a"))
        u = dict(a.usage)
        u.pop("latency_ms")
        self.assertEqual(u, {"model_calls": 2, "retries": 0, "tokens_in": 220, "tokens_out": 80,
                             "tokens_estimated": False})

    def test_streamed_tool_call_cut_by_length(self):
        """A streamed call cut by the token limit never runs, even when it parses."""
        cut = streamed_call(0, "c1", "query_world", '{"radius": 2}', 4) + [ev({}, "length")]
        whole = streamed_call(0, "c2", "collect", '{"target_name": "Tree1"}', 4) + [ev({}, "tool_calls")]
        a = self.agent([Stream([], events=cut), Stream([], events=whole)])
        self.assertEqual(a.decide(OBS).params, {"target_name": "Tree1"})
        self.assertEqual(self.queries, [])
        m = self.srv.requests[1]["body"]["messages"]
        self.assertEqual(m[-2], {"role": "assistant", "content": ""})
        self.assertIn("cut off (the token limit was reached) while you were writing a call to query_world; "
                      "nothing was run", m[-1]["content"])

    def test_stream_deltas_without_index(self):
        """Deltas without an index continue the last call or start one with a new id; an
        index that skips calls is an error."""
        a = self.agent([Stream([], events=[
            ev({"tool_calls": [{"id": "a", "type": "function", "function": {"name": "query_world",
                                                                            "arguments": '{"rad'}}]}),
            ev({"tool_calls": [{"function": {"arguments": 'ius": 3}'}}]}),
            ev({"tool_calls": [{"id": "b", "type": "function", "function": {"name": "collect",
                                                                            "arguments": '{"target_name": "T"}'}}]}),
            ev({}, "tool_calls")]),
            Stream([], events=[ev(call_delta(1000000000, "x", "collect", "{}"))])])
        self.assertEqual(a.decide(OBS).params, {"target_name": "T"})
        self.assertEqual(self.queries, [("query_world", {"radius": 3.0})])
        with self.assertRaises(ConnError) as e:
            a.decide(OBS)
        self.assertIn("tool call index 1000000000 after 0 calls", str(e.exception))

    def test_broken_stream_retried(self):
        """A stream that breaks after text (or part of a call) has arrived is asked for
        again, within the retry budget; nothing of the broken attempt is kept."""
        # XML, dropped mid-body, then dropped after a whole body without [DONE].
        a = self.agent([streamed("Thinking hard. <collect>Tr", brk=True), streamed("Hmm <coll", brk="eof"),
                        streamed("Fine. <collect>Tree1</collect> never read")], xml=True)
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params, d.reasoning), ("collect", {"target_name": "Tree1"}, "Fine."))
        bodies = [r["body"] for r in self.srv.requests]
        self.assertEqual(len(bodies), 3)
        self.assertTrue(bodies[0] == bodies[1] == bodies[2], "the same request again")
        self.assertEqual((a.usage["model_calls"], a.usage["retries"]), (1, 2))
        # Function calling: a call cut by the break is not run; the retry's runs once.
        part = streamed_call(0, "c1", "query_world", '{"radius": 20}', 3)
        a = self.agent([Stream([], events=part[:4], brk=True),
                        Stream([], events=part + [ev({}, "tool_calls")]),
                        Stream([], events=streamed_call(0, "c2", "collect", '{"target_name": "T"}', 3) +
                               [ev({}, "tool_calls")])])
        self.assertEqual(a.decide(OBS).tool, "collect")
        self.assertEqual(self.queries, [("query_world", {"radius": 20.0})])
        self.assertEqual(self.srv.requests[0]["body"], self.srv.requests[1]["body"])
        # The budget: one retry allowed, two breaks: the error names the URL and stops the run.
        self.queries = []
        a = self.agent([streamed("I think <collect>", brk=True)] * 2 + [streamed("<collect>late</collect>")],
                       xml=True, retries=1)
        with self.assertRaises(ConnError) as e:
            a.decide(OBS)
        self.assertTrue(is_fatal(e.exception))
        self.assertEqual(len(self.srv.requests), 2)
        self.assertRegex(str(e.exception), rf"^model server {self.srv.url}/chat/completions: .*the stream ended "
                                           r"before the reply did \(gave up after 2 attempts\)$")
        # A break after a complete tag: the stream was closed at the tag, which runs once.
        a = self.agent([streamed("<query_world>{}</query_world> and on and on", brk=True),
                        streamed("<collect>Tree1</collect>")], xml=True)
        self.assertEqual(a.decide(OBS).tool, "collect")
        self.assertEqual(self.queries, [("query_world", {})])
        self.assertIn("<observation>", self.srv.requests[1]["body"]["messages"][-1]["content"])
        self.assertEqual(a.usage["retries"], 0)
        # A server that answers with JSON, dropped mid-body: retried too.
        a = self.agent([Cut(tool_reply(("collect", '{"target_name": "T"}'))), tool_reply(("collect", '{"target_name": "U"}'))])
        self.assertEqual(a.decide(OBS).params, {"target_name": "U"})
        self.assertEqual(a.usage["retries"], 1)
        # A break after the finish_reason (before usage and [DONE]): the reply is whole.
        a = self.agent([Stream([], events=streamed_call(0, "c1", "collect", '{"target_name": "T"}', 2) +
                               [ev({}, "tool_calls")], brk=True)])
        self.assertEqual(a.decide(OBS).params, {"target_name": "T"})
        self.assertEqual(len(self.srv.requests), 1)

    def test_server_refuses_streaming(self):
        """An older llama.cpp server answers a streamed request with tools with HTTP 500
        "Cannot use tools with stream": asked again at once for a whole reply, and for whole
        replies from then on."""
        refusal = (500, {}, {"error": {"code": 500, "message": "Cannot use tools with stream", "type": "server_error"}}, 0)
        a = self.agent([refusal, tool_reply(("query_world", "{}")), tool_reply(("collect", '{"target_name": "T"}'))])
        self.assertEqual(a.decide(OBS).tool, "collect")
        bodies = [r["body"] for r in self.srv.requests]
        self.assertEqual([b.get("stream", False) for b in bodies], [True, False, False])
        self.assertNotIn("stream_options", bodies[1])
        self.assertEqual(bodies[0]["messages"], bodies[1]["messages"])
        self.assertEqual(a.usage["retries"], 1)
        # A 500 that does not speak of streaming is retried as before.
        a = self.agent([(500, {}, {"error": {"message": "out of memory"}}, 0), tool_reply(("collect", '{"target_name": "T"}'))])
        self.assertEqual(a.decide(OBS).tool, "collect")
        self.assertEqual([r["body"].get("stream", False) for r in self.srv.requests], [True, True])

    def test_tokens_estimated(self):
        """A stream closed at its first tag never gets the server's usage: its tokens are
        estimated (4 characters a token, at least one a chunk) and labelled so."""
        with tempfile.TemporaryDirectory() as tmp:
            a = self.agent([streamed("<collect>Tree1</collect>" + " more" * 50)], xml=True, transcripts=tmp)
            self.assertEqual(a.decide(OBS).tool, "collect")
            chars = sum(len(m["content"]) for m in self.srv.requests[0]["body"]["messages"])
            # 24 characters of tag: 8 chunks of 3 read (24 characters, 6 tokens by length): 8 out.
            self.assertEqual((a.usage["tokens_in"], a.usage["tokens_out"], a.usage["tokens_estimated"]),
                             (-(-chars // 4), 8, True))
            with open(os.path.join(tmp, "a0.jsonl")) as f:
                self.assertIs(json.loads(f.readline())["usage"]["tokens_estimated"], True)
        from agent_arena_sdk.llm import _estimate_tokens
        resp = {"chunks": 1, "choices": [{"message": {"content": "ééééé", "tool_calls": [
            {"function": {"name": "speak", "arguments": '{"a":1}'}}]}}]}
        self.assertEqual(_estimate_tokens([{"role": "user", "content": "abcdefgh"}], None, resp), (2, 5))

    def test_scenario_in_system_prompt(self):
        """The scenario's description follows the introduction, as in Go's prompt."""
        a = self.agent([tool_reply(("collect", '{"target_name": "Tree1"}'))],
                       scenario="  Forage a clearing for berries.\n")
        a.decide(OBS)
        sysmsg = self.srv.requests[0]["body"]["messages"][0]["content"]
        self.assertTrue(sysmsg.startswith(
            "You are an agent in Arena, a simulated world. Each turn you receive an observation and choose exactly "
            "one action.\n\n## Scenario\nForage a clearing for berries.\n\n## Available Tools\n- **move_to** "
            "(action): Move.\n"), sysmsg)
        self.assertNotIn("## Scenario", LLMAgent(tools=TOOLS).system_prompt(TOOLS))

    def test_xml_no_tag_is_idle(self):
        a = self.agent([text_reply("I will <b>wait</b>.")], xml=True)
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.reasoning), ("idle", "I will <b>wait</b>."))


class TagParserTest(unittest.TestCase):
    def test_statuses(self):
        p = TagParser(["get_role_details", "check_will", "skip"])
        t = p.find("I think <get_role_details>Investigator</get_role_details> then <skip />")
        self.assertEqual((t.status, t.tool, t.arg), (COMPLETE, "get_role_details", "Investigator"))
        self.assertEqual(p.find("text <skip />").status, COMPLETE)
        self.assertEqual(p.find("a < b and <thinking>x</thinking>").status, NONE)
        self.assertEqual(p.find("so <check_wi").status, INCOMPLETE)
        self.assertEqual(p.find("<check_will>Player 3").status, INCOMPLETE)
        self.assertEqual(p.find('<check_will player="3">x</check_will>').status, MALFORMED)
        self.assertEqual(p.find("<check_will><skip /></check_will>").status, MALFORMED)
        self.assertEqual(p.find("</skip>").status, MALFORMED)
        t = p.find("<get_role_detail>x</get_role_detail>")
        self.assertEqual(t.status, MALFORMED)
        self.assertIn("did you mean <get_role_details>", t.diagnostic)


    def test_shared_table(self):
        """sdk/testdata/xmltags.json: the same results as the Go parser."""
        path = os.path.join(os.path.dirname(__file__), "..", "..", "testdata", "xmltags.json")
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
        p = TagParser(table["tools"])
        for c in table["cases"]:
            t = p.find(c["text"])
            with self.subTest(text=c["text"]):
                self.assertEqual((t.status, t.tool, t.arg), (c["status"], c.get("tool", ""), c.get("arg", "")), t)
                self.assertIn(c.get("diagnostic", ""), t.diagnostic)
                if "span" in c:
                    self.assertEqual(c["text"][t.start:t.end], c["span"])

    def test_deep_nesting(self):
        """20,000 nested tags: no RecursionError (timed in bench_xmltags.py, not here)."""
        p = TagParser(["check_will", "get_role_details"])
        t = p.find("<check_will>" * 20000 + "P" + "</check_will>" * 20000)
        self.assertEqual(t.status, MALFORMED)
        self.assertIn("cannot be nested", t.diagnostic)
        t = p.find("<b>" * 20000 + "<check_will>x" + "</b>" * 20000 + "</check_will>")
        self.assertEqual(t.status, COMPLETE)


if __name__ == "__main__":
    unittest.main()
