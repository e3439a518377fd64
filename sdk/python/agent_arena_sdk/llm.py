"""A language-model agent (mirrors the Go SDK's sdk/llm; docs/llm.md describes the loop).

    from agent_arena_sdk import run
    from agent_arena_sdk.llm import LLMAgent

    run(LLMAgent(model="qwen2.5:7b", base_url="http://localhost:11434/v1"), "unix:arena.sock")

Each observation becomes a prompt; the model's query tools are answered mid-turn
(through the running client) and its first action tool is the decision. Models
without function calling use XML tool tags instead (``xml=True``).
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Callable

from .types import Decision
from .xmltags import COMPLETE, INCOMPLETE, MALFORMED, NONE, TagParser, format_observation

__all__ = ["ChatClient", "APIError", "LLMAgent", "PERMANENT", "TURN_BASED"]

PERMANENT = "permanent"  # kept for the rest of the episode
TURN_BASED = "turn"      # for the current turn only

DEFAULT_INTRO = ("You are an agent in Arena, a simulated world. Each turn you receive an observation "
                 "and choose exactly one action.")


def compact(v: Any) -> str:
    if v is None:
        return "{}"
    try:
        return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(v)


# -- the OpenAI-compatible client -------------------------------------------------

class APIError(Exception):
    """A refused call: the HTTP status and the server's message."""

    def __init__(self, status: int, message: str):
        self.status, self.message = status, message
        super().__init__(f"chat completions: HTTP {status}: {message}")


class _Retryable(Exception):
    pass


class ChatClient:
    """An OpenAI-compatible chat-completions client (POST base_url/chat/completions)
    over urllib: OpenAI, vLLM, Ollama, llama.cpp's server.

    Empty arguments come from $OPENAI_BASE_URL (default https://api.openai.com/v1),
    $OPENAI_API_KEY and $ARENA_MODEL. Each call is bounded by ``timeout`` seconds; a
    call failing with 429, 5xx, a time-out or a network error is tried ``retries``
    more times, waiting ``backoff`` seconds doubled each time (at most 30), or what a
    Retry-After header says (at most 60).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 0.5):
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.model = model or os.environ.get("ARENA_MODEL", "")
        self.timeout = timeout if timeout and timeout > 0 else 60.0
        self.retries = retries
        self.backoff = backoff if backoff > 0 else 0.5

    def chat(self, messages: list, tools: list | None = None, stop: list | None = None,
             temperature: float | None = None, max_tokens: int | None = None, model: str | None = None) -> dict:
        """One chat completion; returns the response (a dict with ``choices``)."""
        req: dict[str, Any] = {"model": model or self.model, "messages": messages}
        if tools:
            req["tools"] = tools
        if stop:
            req["stop"] = stop
        if temperature is not None:
            req["temperature"] = temperature
        if max_tokens:
            req["max_tokens"] = max_tokens
        body = json.dumps(req).encode()
        wait = self.backoff
        attempt = 0
        while True:
            retry_after = None
            try:
                return self._once(body)
            except _Retryable as e:
                err, retry_after = e.args[0], e.args[1]
            if self.retries < 0 or attempt >= self.retries:
                err.attempts = attempt + 1
                raise err
            time.sleep(retry_after if retry_after is not None else wait)
            wait = min(wait * 2, 30.0)
            attempt += 1

    def _once(self, body: bytes) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        hreq = urllib.request.Request(self.base_url + "/chat/completions", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(hreq, timeout=self.timeout) as resp:
                data = resp.read(32 << 20)
        except urllib.error.HTTPError as e:
            try:
                raw = e.read(32 << 20).decode("utf-8", "replace").strip()
            except (OSError, socket.timeout):
                raw = ""
            msg = raw
            try:
                m = json.loads(raw).get("error", {}).get("message")
                if m:
                    msg = m
            except (ValueError, AttributeError):
                pass
            if len(msg) > 500:
                msg = msg[:500] + "…"
            err = APIError(e.code, msg)
            if e.code == 429 or e.code >= 500:
                ra = None
                try:
                    s = int((e.headers or {}).get("Retry-After", ""))
                    if s >= 0:
                        ra = float(min(s, 60))
                except (TypeError, ValueError):
                    pass
                raise _Retryable(err, ra)
            raise err
        except (TimeoutError, socket.timeout) as e:
            raise _Retryable(TimeoutError(f"chat completions: no answer within {self.timeout}s"), None) from e
        except urllib.error.URLError as e:
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise _Retryable(TimeoutError(f"chat completions: no answer within {self.timeout}s"), None) from e
            raise _Retryable(ConnectionError(f"chat completions: {e.reason}"), None) from e
        except (ConnectionError, OSError) as e:
            raise _Retryable(ConnectionError(f"chat completions: {e}"), None) from e
        try:
            out = json.loads(data)
        except ValueError as e:
            raise ValueError(f"chat completions: decode response: {e}") from e
        if not out.get("choices"):
            raise ValueError("chat completions: the response has no choices")
        return out


# -- parameters --------------------------------------------------------------------

_TYPES = {"string": str, "boolean": bool, "object": dict, "array": list}


def _check(schema: dict, path: str, v: Any) -> Any:
    """A light version of tools.Schema.Validate: types, required, unknown, enum."""
    t = schema.get("type")
    where = f"param '{path}' " if path else ""
    if t == "object":
        if not isinstance(v, dict):
            raise ValueError(f"{where}must be an object")
        props = schema.get("properties") or {}
        for r in schema.get("required") or []:
            if r not in v:
                raise ValueError(f"param '{path + '.' if path else ''}{r}' is required")
        out = {}
        for k, x in v.items():
            p = f"{path}.{k}" if path else k
            if k not in props:
                if schema.get("additionalProperties") is False:
                    raise ValueError(f"param '{p[:64]}' is not a parameter; parameters: {', '.join(sorted(props))}")
                out[k] = x
                continue
            out[k] = _check(props[k], p, x)
        return out
    if t in ("number", "integer"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{where}must be a number")
        if t == "integer" and float(v) != int(v):
            raise ValueError(f"{where}must be an integer")
        return float(v)
    if t in _TYPES and not isinstance(v, _TYPES[t]):
        raise ValueError(f"{where}must be a {t}")
    if t == "array" and schema.get("items"):
        return [_check(schema["items"], f"{path}[{i}]", x) for i, x in enumerate(v)]
    if schema.get("enum") and v not in schema["enum"]:
        raise ValueError(f"{where}must be one of {', '.join(schema['enum'])}")
    return v


def _validate(schema: dict | None, params: dict) -> dict:
    if not schema:
        return params
    if not params:
        for r in schema.get("required") or []:
            raise ValueError(f"param '{r}' is required")
        return {}
    return _check(schema, "", params)


# -- the agent ---------------------------------------------------------------------

class _Call:
    __slots__ = ("action", "result", "failed", "data")

    def __init__(self, action=None, result="", failed=False, data=None):
        self.action, self.result, self.failed, self.data = action, result, failed, data


class LLMAgent:
    """A language-model agent for :func:`agent_arena_sdk.run`: one agent slot.

    ``tools`` are the welcome's tool specs (dicts with name, description, parameters,
    query, persistence) [the running client's]; ``query(tool, params) -> dict``
    answers query tools [the running client's]. ``chat`` replaces the HTTP client
    (anything with ``chat(messages, tools=, stop=, temperature=, max_tokens=)``).
    ``transcripts`` is a folder where each turn is appended to AGENT.jsonl.
    A model that calls no tool idles with its text as the reasoning; past
    ``tool_call_limit`` tool calls in a turn (failed ones count) the turn ends idle.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None, *,
                 xml: bool = False, tool_call_limit: int = 10, timeout: float = 60.0, retries: int = 3,
                 backoff: float = 0.5, transcripts: str | None = None, system: str | None = None,
                 tools: list | None = None, query: Callable[[str, dict], Any] | None = None,
                 chat: Any = None, persistence: Callable[[dict], str] | None = None, max_memory: int = 50,
                 temperature: float | None = None, max_tokens: int | None = None):
        self.client = chat or ChatClient(model, base_url, api_key, timeout=timeout, retries=retries, backoff=backoff)
        self.xml = xml
        self.tool_call_limit = tool_call_limit if tool_call_limit > 0 else 10
        self.transcripts = transcripts
        self.system = system
        self._tools = list(tools) if tools is not None else None
        self._query = query
        self.persistence = persistence or (lambda s: PERMANENT if s.get("persistence") == PERMANENT else TURN_BASED)
        self.max_memory = max_memory if max_memory > 0 else 50
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.memory: list[tuple[str, str]] = []  # (key, text), oldest first
        self.history: list[str] = []
        self._lock = threading.Lock()

    # -- tools and queries --

    @property
    def tools(self) -> list:
        if self._tools is not None:
            return self._tools
        try:
            from .client import current_client
            return [dict(t) for t in current_client().tools]
        except RuntimeError:
            return []

    def _by_name(self) -> dict:
        return {t.get("name"): t for t in self.tools if t.get("name")}

    def _run_query(self, tool: str, params: dict):
        if self._query is not None:
            return self._query(tool, params)
        from .client import current_client
        return current_client().query(tool, params)

    def _has_querier(self) -> bool:
        if self._query is not None:
            return True
        from .client import _current
        return _current.get() is not None

    # -- episodes and memory --

    def on_episode_start(self, msg=None):
        """Forgets what the agent remembered."""
        with self._lock:
            self.memory, self.history = [], []

    def knowledge(self) -> list[str]:
        """The permanent query results kept, oldest first."""
        with self._lock:
            return [t for _, t in self.memory]

    def _remember(self, spec: dict, tool: str, params: dict, result: str):
        if self.persistence(spec) != PERMANENT:
            return
        p = compact(params)
        key = tool + p
        with self._lock:
            self.memory = [m for m in self.memory if m[0] != key]
            self.memory.append((key, f"{tool} {p} → {result}"))
            del self.memory[:-self.max_memory]

    # -- prompts --

    def system_prompt(self, tools: list) -> str:
        lines = [self.system or DEFAULT_INTRO, "", "## Available Tools"]
        for s in tools:
            kind = "query: answered at once, does not end your turn" if s.get("query") else "action"
            lines.append(f"- **{s.get('name')}** ({kind}): {s.get('description', '')}")
            ps = s.get("parameters") or {}
            req = ps.get("required") or []
            for name, p in sorted((ps.get("properties") or {}).items()):
                lines.append(f"  - {name} ({p.get('type', '')}) ({'required' if name in req else 'optional'})"
                             f" - {p.get('description', '')}")
        text = "\n".join(lines) + f"\n\nYou may use up to {self.tool_call_limit} query tools per turn. "
        if self.xml:
            text += ("Call a tool by writing its XML tag in your text: <tool_name>argument</tool_name>, or "
                     "<tool_name /> when it takes no argument. The argument is plain text for a tool with one "
                     "parameter, otherwise a JSON object of parameters. After a query tag, stop: the result comes "
                     "back as <observation>...</observation> and you continue. Your first action tag ends your "
                     "turn. If you write no tag you stay idle.")
        else:
            text += ("Call query tools as needed, then call exactly one action tool; that ends your turn. "
                     "If you call no tool you stay idle.")
        return text

    def observation_prompt(self, o) -> str:
        g = o.get if hasattr(o, "get") else (lambda k, d=None: getattr(o, k, d))
        pos = list(g("position") or [0, 0, 0]) + [0, 0, 0]
        out = [f"# Tick {g('tick', 0)} — you are {g('agent_id', '')}" + (f" (team {g('team')})" if g("team") else "")]
        out.append(f"position ({pos[0]:.1f}, {pos[1]:.1f}, {pos[2]:.1f}), health {g('health') or 0:.0f}/"
                   f"{g('max_health') or 0:.0f}, score {g('score') or 0:.2f}")
        obj = g("objective") or {}
        if isinstance(obj, dict) and obj.get("description"):
            out.append(f"objective: {obj['description']}")
        if g("inventory"):
            out.append(f"inventory ({g('inventory_used') or 0}/{g('inventory_cap') or 0}): {compact(g('inventory'))}")
        ca = g("current_action") or {}
        if isinstance(ca, dict) and ca.get("tool"):
            out.append(f"current action: {compact(ca)}")
        r = g("last_action_result")
        if r:
            if r.get("success"):
                out.append(f"last action: {r.get('tool', '')} succeeded {compact(r.get('data'))}")
            else:
                out.append(f"last action: {r.get('tool', '')} failed: {r.get('error_code', '')} "
                           f"{r.get('error_message', '')}")
        text = "\n".join(out) + "\n"
        if g("variables_text"):
            text += f"\n## Scenario\n{g('variables_text')}\n"
        for name, sec in sorted((g("components") or {}).items()):
            if isinstance(sec, dict) and isinstance(sec.get("text"), str) and sec["text"]:
                body = sec["text"]
            elif isinstance(sec, dict):
                body = "\n".join(f"{k}: {compact(v)}" for k, v in sorted(sec.items()))
            else:
                body = compact(sec)
            text += f"\n## {name}\n{body}\n"

        def nearby(label, es):
            parts = []
            for i, e in enumerate(es or []):
                if i == 12:
                    parts.append(f"… {len(es) - i} more")
                    break
                kind = "".join(str(e.get(k) or "") for k in ("resource_type", "station_type", "hazard_type",
                                                               "obstacle_type"))
                p = list(e.get("position") or [0, 0, 0]) + [0, 0]
                parts.append(f"{e.get('name', '')}{' ' + kind if kind else ''} @({p[0]:.0f},{p[1]:.0f}) "
                             f"d={e.get('distance') or 0:.1f}")
            return f"{label}: {'; '.join(parts)}\n" if parts else ""

        groups = [("resources", "nearby_resources"), ("hazards", "nearby_hazards"), ("stations", "nearby_stations"),
                  ("agents", "nearby_agents"), ("capture points", "capture_points")]
        if any(g(k) for _, k in groups):
            text += "\n## Nearby\n" + "".join(nearby(lbl, g(k)) for lbl, k in groups + [("teammates", "teammates")])
        if g("messages"):
            text += "\n## Messages\n" + "".join(
                f"[{m.get('tick', 0)}] {m.get('from', '')} → {m.get('to', '')}: {m.get('content', '')}\n"
                for m in g("messages"))
        if g("events"):
            text += "\n## Events\n" + "".join(
                f"[{e.get('tick', 0)}] {e.get('source', '')}/{e.get('type', '')}: {e.get('text', '')}\n"
                for e in g("events"))
        with self._lock:
            mem, hist = [t for _, t in self.memory], list(self.history)
        if mem:
            text += "\n## Knowledge (permanent results of your earlier queries)\n" + "".join(f"- {m}\n" for m in mem)
        if hist:
            text += "\n## Your recent actions\n" + "".join(f"- {h}\n" for h in hist)
        return text + "\nChoose your action."

    # -- the turn --

    def decide(self, obs) -> Decision:
        """One turn of the tool loop."""
        tools = self.tools
        g = obs.get if hasattr(obs, "get") else (lambda k, d=None: getattr(obs, k, d))
        turn = {"agent": g("agent_id", "") or "", "tick": g("tick", 0) or 0, "mode": "xml" if self.xml else "tools",
                "messages": [{"role": "system", "content": self.system_prompt(tools)},
                             {"role": "user", "content": self.observation_prompt(obs)}],
                "tool_calls": 0}
        try:
            d = self._xml_loop(turn, tools) if self.xml else self._tool_loop(turn, tools)
        except Exception as e:  # the model is unavailable: idle
            turn["error"] = str(e)
            d = Decision.idle("model unavailable: " + str(e))
        if not d.tool:
            d.tool = "idle"
        turn["decision"] = {"tool": d.tool, "params": d.params, "reasoning": d.reasoning}
        with self._lock:
            self.history.append(f"tick {turn['tick']}: {d.tool} {compact(d.params)}")
            del self.history[:-8]
        if self.transcripts:
            self._write_transcript(turn)
        return d

    __call__ = decide

    def _chat(self, turn, **kw) -> dict:
        resp = self.client.chat(turn["messages"], temperature=self.temperature, max_tokens=self.max_tokens, **kw)
        return resp["choices"][0]

    def _call(self, by_name: dict, name: str, params: dict, reasoning: str) -> _Call:
        spec = by_name.get(name)
        if spec is None:
            return _Call(failed=True, result=f"Tool not found: {json.dumps(name)}. Available tools: "
                                             f"{', '.join(sorted(by_name))}")
        params = {k: v for k, v in params.items() if v is not None}  # strict schemas send null for "not given"
        try:
            params = _validate(spec.get("parameters"), params)
        except ValueError as e:
            return _Call(failed=True, result=f"Invalid arguments for {name}: {e}")
        if not spec.get("query"):
            return _Call(action=Decision(name, params, reasoning or None))
        if not self._has_querier():
            return _Call(failed=True, result="queries are not available here; choose an action")
        try:
            data = self._run_query(name, params)
        except Exception as e:
            code = getattr(e, "code", None)
            if code is not None and hasattr(e, "message"):
                return _Call(failed=True, result=f"{code}: {e.message}")
            return _Call(failed=True, result=str(e))
        data = dict(data) if isinstance(data, dict) else data
        text = compact(data)
        self._remember(spec, name, params, text)
        return _Call(result=text, data=data)

    def _functions(self, tools) -> list:
        return [{"type": "function", "function": {
            "name": s.get("name"), "description": s.get("description", ""),
            "parameters": s.get("parameters") or {"type": "object", "properties": {}, "additionalProperties": False}}}
            for s in tools]

    def _limit_reached(self, text: str) -> Decision:
        return Decision.idle((text + f" [tool call limit of {self.tool_call_limit} reached]").strip())

    def _tool_loop(self, turn, tools) -> Decision:
        fns, by_name = self._functions(tools), {t.get("name"): t for t in tools}
        while True:
            msg = dict(self._chat(turn, tools=fns).get("message") or {})
            msg["role"] = "assistant"
            msg["content"] = msg.get("content") or ""
            calls = [dict(tc) for tc in (msg.get("tool_calls") or [])]
            if calls:
                msg["tool_calls"] = calls
            else:
                msg.pop("tool_calls", None)
            turn["messages"].append(msg)
            content = msg["content"].strip()
            if not calls:
                return Decision.idle(content)
            for i, tc in enumerate(calls):
                if not tc.get("id"):
                    tc["id"] = f"call_{len(turn['messages'])}_{i}"
                tc.setdefault("type", "function")
                fn = tc.get("function") or {}
                name = fn.get("name", "")
                if turn["tool_calls"] >= self.tool_call_limit:
                    return self._limit_reached(msg["content"])
                turn["tool_calls"] += 1
                args = (fn.get("arguments") or "").strip() or "{}"
                try:
                    params = json.loads(args) if isinstance(args, str) else args
                    if not isinstance(params, dict):
                        raise ValueError("not a JSON object")
                except ValueError as e:
                    c = _Call(failed=True, result=f"Invalid arguments JSON for {name}: {e}; send the arguments "
                                                  f"as one JSON object")
                else:
                    c = self._call(by_name, name, params, content)
                if c.action is not None:
                    return c.action
                body = {"status": "error", "error": c.result} if c.failed else {"status": "success", "result": c.data}
                turn["messages"].append({"role": "tool", "tool_call_id": tc["id"], "name": name,
                                         "content": json.dumps(body, ensure_ascii=False, default=str)})

    def _xml_args(self, spec: dict, arg: str):
        if arg.startswith("{"):
            try:
                p = json.loads(arg)
                if not isinstance(p, dict):
                    raise ValueError("not a JSON object")
            except ValueError as e:
                return None, f"the argument of <{spec.get('name')}> looks like JSON but is not valid: {e}"
            return p, ""
        schema = spec.get("parameters") or {}
        props = sorted(schema.get("properties") or {})
        if arg == "":
            return {}, ""
        req = schema.get("required") or []
        target = props[0] if len(props) == 1 else (req[0] if len(req) == 1 else "")
        if not target:
            n, keys = spec.get("name"), '": ..., "'.join(props)
            return None, f'<{n}> takes its parameters as a JSON object, e.g. <{n}>{{"{keys}": ...}}</{n}>'
        return {target: arg}, ""

    def _xml_loop(self, turn, tools) -> Decision:
        by_name = {t.get("name"): t for t in tools}
        parser = TagParser(list(by_name))
        stops = [f"</{s.get('name')}>" for s in tools if s.get("query")][:4]
        reasoning = ""
        while True:
            text = (self._chat(turn, stop=stops).get("message") or {}).get("content") or ""
            tag = parser.find(text)
            if (tag.status == INCOMPLETE and tag.tool and f"</{tag.tool}>" in stops
                    and f"</{tag.tool}>" not in text[tag.start:]):
                text += f"</{tag.tool}>"  # stopped on the closing tag, which the API leaves out
                tag = parser.find(text)
            if tag.status == NONE or (tag.status == INCOMPLETE and not tag.tool):
                turn["messages"].append({"role": "assistant", "content": text})
                return Decision.idle((reasoning + text).strip())
            reasoning += text[:tag.start]
            turn["messages"].append({"role": "assistant", "content": text[:tag.end]})
            if turn["tool_calls"] >= self.tool_call_limit:
                return self._limit_reached(reasoning)
            turn["tool_calls"] += 1
            if tag.status in (MALFORMED, INCOMPLETE):
                obs_text = "Error: " + tag.diagnostic
            else:
                params, msg = self._xml_args(by_name[tag.tool], tag.arg)
                if msg:
                    obs_text = "Error: " + msg
                else:
                    c = self._call(by_name, tag.tool, params, reasoning.strip())
                    if c.action is not None:
                        return c.action
                    obs_text = ("Error: " + c.result) if c.failed else c.result
            turn["messages"].append({"role": "user", "content": format_observation(obs_text) + "\nContinue."})

    def _write_transcript(self, turn):
        try:
            os.makedirs(self.transcripts, exist_ok=True)
            name = re.sub(r"[/\\\x00]", "_", str(turn["agent"])) or "agent"
            line = json.dumps(turn, ensure_ascii=False, default=str)
            with self._lock, open(os.path.join(self.transcripts, name + ".jsonl"), "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError:
            pass
