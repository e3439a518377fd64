"""The language-model agent against a local fake OpenAI-compatible server (no network)."""

import json
import os
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from agent_arena_sdk import ArenaError, Observation
from agent_arena_sdk.llm import APIError, ChatClient, LLMAgent
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


class FakeServer:
    """Replays recorded responses in order: a dict (200), or (status, headers, body, delay)."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.requests = []
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                r = fake.replies.pop(0) if fake.replies else text_reply("out of replies")
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

    def test_tool_call_is_the_decision(self):
        a = self.agent([tool_reply(("collect", '{"target_name": "Tree1"}'), content="a tree")])
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params, d.reasoning), ("collect", {"target_name": "Tree1"}, "a tree"))
        req = self.srv.requests[0]
        self.assertEqual(req["path"], "/v1/chat/completions")
        self.assertEqual(req["auth"], "Bearer k")
        self.assertEqual(req["body"]["model"], "m")
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
        self.assertEqual(err, {"status": "error", "error": "LIMIT_EXCEEDED: too many queries"})

    def test_unknown_tool_and_bad_arguments(self):
        a = self.agent([tool_reply(("fly", "{}")), tool_reply(("collect", "{target_name: Tree1")),
                        tool_reply(("collect", '{"target_name": 3}')), tool_reply(("collect", '{"target_name": "T"}'))])
        self.assertEqual(a.decide(OBS).tool, "collect")
        errs = [json.loads(r["body"]["messages"][-1]["content"])["error"] for r in self.srv.requests[1:]]
        self.assertTrue(errs[0].startswith('Tool not found: "fly". Available tools: collect, move_to'), errs[0])
        self.assertIn("Invalid arguments JSON for collect", errs[1])
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
        srv.replies = [(401, {}, {"error": {"message": "no key"}}, 0)]
        d = a.decide(OBS)
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

    def test_xml_mode(self):
        a = self.agent([text_reply('Let me look. <query_world>{"radius": 20}'),          # stopped on </query_world>
                        text_reply("<query_wrld>5</query_wrld>"),           # a lookalike: malformed
                        text_reply("<thinking>hmm</thinking> Found it. <collect>Tree1</collect> ignored")],
                       xml=True)
        d = a.decide(OBS)
        self.assertEqual((d.tool, d.params), ("collect", {"target_name": "Tree1"}))
        self.assertIn("Let me look.", d.reasoning)
        self.assertEqual(self.queries, [("query_world", {"radius": 20.0})])
        body = self.srv.requests[0]["body"]
        self.assertEqual(body["stop"], ["</query_world>", "</query_inventory>"])
        self.assertNotIn("tools", body)
        self.assertIn("XML tag", body["messages"][0]["content"])
        m1 = self.srv.requests[1]["body"]["messages"]
        self.assertEqual(m1[-2], {"role": "assistant", "content": 'Let me look. <query_world>{"radius": 20}</query_world>'})
        self.assertTrue(m1[-1]["content"].startswith("<observation>\n"))
        self.assertTrue(m1[-1]["content"].endswith("</observation>\nContinue."))
        m2 = self.srv.requests[2]["body"]["messages"]
        self.assertIn("Error: <query_wrld> is not a tool; did you mean <query_world>?", m2[-1]["content"])

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


if __name__ == "__main__":
    unittest.main()
