"""A language-model agent (mirrors the Go SDK's sdk/llm; docs/llm.md describes the loop).

    from agent_arena_sdk import run
    from agent_arena_sdk.llm import LLMAgent

    run(LLMAgent(model="qwen2.5:7b", base_url="http://localhost:11434/v1"), "unix:arena.sock")

Each observation becomes a prompt; the model's query tools are answered mid-turn
(through the running client) and its first action tool is the decision. Models
without function calling use XML tool tags instead (``xml=True``).
"""

from __future__ import annotations

import http.client
import json
import math
import os
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable

from .types import Decision, plain
from .xmltags import COMPLETE, INCOMPLETE, MALFORMED, NONE, TagParser, format_observation

__all__ = ["ChatClient", "ModelError", "APIError", "ConnError", "is_fatal", "LLMAgent", "PERMANENT", "TURN_BASED"]

PERMANENT = "permanent"  # kept for the rest of the episode
TURN_BASED = "turn"      # for the current turn only

DEFAULT_INTRO = ("You are an agent in Arena, a simulated world. Each turn you receive an observation "
                 "and choose exactly one action.")


def compact(v: Any) -> str:
    if v is None:
        return "{}"
    try:
        return json.dumps(plain(v), separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(v)


# -- the OpenAI-compatible client -------------------------------------------------

_STATUS_TEXT = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
                413: "Content Too Large", 422: "Unprocessable Entity", 429: "Too Many Requests",
                500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


class ModelError(Exception):
    """The model server failed. ``fatal`` errors (see :func:`is_fatal`) stop the run:
    :meth:`LLMAgent.decide` raises them and :func:`agent_arena_sdk.run` lets them through."""

    stops_run = True

    def __init__(self, url: str, text: str):
        self.url, self.text, self.attempts = url, text, 1
        super().__init__(text)

    def __str__(self):
        s = f"model server {self.url}: {self.text}"
        if self.attempts > 1:
            s += f" (gave up after {self.attempts} attempts)"
        return s

    def retryable(self) -> bool:
        return False


class APIError(ModelError):
    """A call the server refused: the URL, the HTTP status and the server's message."""

    def __init__(self, status: int, message: str, url: str = ""):
        self.status, self.message = status, message
        text = f"HTTP {status} {_STATUS_TEXT.get(status, '')}".rstrip() + (f": {message}" if message else "")
        super().__init__(url, text)

    def retryable(self) -> bool:
        return self.status in (408, 429) or self.status >= 500


class ConnError(ModelError):
    """A call that got no HTTP answer: a bad URL, a refused connection, an unknown host
    (not retried), a time-out or a dropped connection (retried)."""

    def __init__(self, url: str, text: str, retry: bool):
        self._retry = retry
        super().__init__(url, text)

    def retryable(self) -> bool:
        return self._retry


def is_fatal(err: BaseException) -> bool:
    """Whether a model error means the server is wrong for the run: every ModelError but
    HTTP 400, 413 and 422 (a request the server refuses, e.g. one too long)."""
    if isinstance(err, APIError):
        return err.status not in (400, 413, 422)
    return isinstance(err, ModelError)


_STREAM_CUT = "the stream ended before the reply did"


def _stream_refused(e: ModelError) -> bool:
    """Whether e is a server's refusal to stream."""
    return isinstance(e, APIError) and e.status in (400, 422, 500, 501) and "stream" in e.message.lower()


def _retry_after(h) -> float | None:
    if not h:
        return None
    try:
        return min(max(float(h), 0.0), 60.0)
    except ValueError:
        pass
    try:
        from email.utils import parsedate_to_datetime
        return min(max(parsedate_to_datetime(h).timestamp() - time.time(), 0.0), 60.0)
    except (TypeError, ValueError):
        return None


class ChatClient:
    """An OpenAI-compatible chat-completions client (POST base_url/chat/completions)
    over urllib: OpenAI, vLLM, Ollama, llama.cpp's server (mirrors sdk/llm's Client).

    Empty arguments come from $OPENAI_BASE_URL (default https://api.openai.com/v1),
    $OPENAI_API_KEY and $ARENA_MODEL. HTTP 401/403/404, a malformed URL, a refused
    connection or an unknown host raise at once; 408, 429, 5xx, time-outs (``timeout``
    seconds per call) and dropped connections are tried ``retries`` more times with
    exponential backoff from ``backoff`` seconds (doubled, at most 30, with jitter) or
    what Retry-After says, within ``retry_time`` seconds in all; so is a stream that
    broke before its end. Errors are :class:`APIError` or :class:`ConnError`, naming
    the URL.
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, retries: int = 4, backoff: float = 0.5, retry_time: float = 120.0):
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.model = model or os.environ.get("ARENA_MODEL", "")
        self.timeout = timeout if timeout and timeout > 0 else 60.0
        self.retries = retries
        self.backoff = backoff if backoff > 0 else 0.5
        self.retry_time = retry_time if retry_time > 0 else 120.0
        self.url = self.base_url + "/chat/completions"
        self._whole_only = False  # the server refused a streamed request: whole replies only

    def check(self):
        """Raises ConnError for a base URL that cannot work."""
        u = urllib.parse.urlsplit(self.base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ConnError(self.base_url, "not a valid base URL; write http(s)://HOST:PORT/v1", False)

    def chat(self, messages: list, tools: list | None = None, stop: list | None = None,
             temperature: float | None = None, max_tokens: int | None = None, model: str | None = None) -> dict:
        """One chat completion, read whole; returns the response (a dict with ``choices``;
        ``retries`` counts failed attempts before it)."""
        return self._do(self._request(messages, tools, stop, temperature, max_tokens, model), None)

    def chat_stream(self, messages: list, tools: list | None = None, stop: list | None = None,
                    temperature: float | None = None, max_tokens: int | None = None, model: str | None = None,
                    watch: Callable[[], Callable[[str], bool]] | None = None) -> dict:
        """One chat completion, streamed (``"stream": true``, with the usage asked for in
        the last event), as Go's ``Client.ChatStream``. ``watch``, when given, is called at
        the start of each attempt and returns the function that gets that attempt's text,
        piece by piece; when it returns True the stream is closed at once (``interrupted``
        is then True). Tool-call deltas are assembled by index. A server that ignores
        ``stream`` and answers with JSON is read as :meth:`chat` reads it.

        A stream that breaks before its end (no finish_reason and no ``[DONE]``) is asked
        for again from the start, within the same retry budget as any failed call; nothing
        of the broken attempt is kept (nor was anything of it run: a reply's tool calls are
        only complete once its stream is).

        A server that refuses streamed requests (HTTP 400, 422, 500 or 501 with a message
        that speaks of streaming, as older llama.cpp servers answer a streamed request with
        tools: "Cannot use tools with stream") is asked again for a whole reply at once, and
        from then on this client asks it for whole replies only; the refused attempt counts
        as a retry."""
        req = self._request(messages, tools, stop, temperature, max_tokens, model)
        watch = watch or (lambda: lambda piece: False)
        if not self._whole_only:
            try:
                return self._do(dict(req, stream=True, stream_options={"include_usage": True}), watch)
            except APIError as e:
                if not _stream_refused(e):
                    raise
                self._whole_only = True
            out = self._do(req, watch)
            out["retries"] += 1
            return out
        return self._do(req, watch)

    def _request(self, messages, tools, stop, temperature, max_tokens, model) -> dict:
        self.check()
        req: dict[str, Any] = {"model": model or self.model, "messages": messages}
        if tools:
            req["tools"] = tools
        if stop:
            req["stop"] = stop
        if temperature is not None:
            req["temperature"] = temperature
        if max_tokens:
            req["max_tokens"] = max_tokens
        return req

    def _do(self, req: dict, watch) -> dict:
        """Sends req (with watch: a streamed attempt each time, see chat_stream), retrying
        what may pass."""
        body = json.dumps(req).encode()
        deadline = time.monotonic() + self.retry_time
        wait = self.backoff
        attempt = 1
        while True:
            try:
                out = self._once(body, watch() if watch else None)
                out["retries"] = attempt - 1
                return out
            except ModelError as e:
                e.attempts = attempt
                ra = getattr(e, "retry_after", None)
                if (not e.retryable() or req.get("stream") and _stream_refused(e) or self.retries < 0
                        or attempt > self.retries):
                    raise
                d = ra if ra is not None else wait / 2 + random.uniform(0, wait / 2)
                if time.monotonic() + d > deadline:
                    e.text += f"; no retry within {self.retry_time:g}s"
                    raise
            time.sleep(d)
            wait = min(wait * 2, 30.0)
            attempt += 1

    def _once(self, body: bytes, on_text) -> dict:
        """One attempt; a streamed one when on_text is not None."""
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = "Bearer " + self.api_key
        hreq = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            resp = urllib.request.urlopen(hreq, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            try:
                raw = e.read(1 << 20).decode("utf-8", "replace").strip()
            except (OSError, socket.timeout):
                raw = ""
            msg = raw
            try:
                err = json.loads(raw).get("error")
                if isinstance(err, dict) and err.get("message"):
                    msg = err["message"]
                elif isinstance(err, str) and err:
                    msg = err  # Ollama: {"error": "..."}
            except (ValueError, AttributeError):
                pass
            msg = " ".join(msg.split())
            if len(msg) > 300:
                msg = msg[:300] + "…"
            err = APIError(e.code, msg, self.url)
            err.retry_after = _retry_after((e.headers or {}).get("Retry-After"))
            raise err from None
        except urllib.error.URLError as e:
            raise self._conn_error(e.reason) from None
        except (TimeoutError, socket.timeout, OSError) as e:
            raise self._conn_error(e) from None
        with resp:
            try:
                if on_text is not None and resp.headers.get("Content-Type", "").startswith("text/event-stream"):
                    return self._read_stream(resp, on_text)
                data = resp.read(32 << 20)
                if resp.length and len(data) < 32 << 20:  # short of its Content-Length
                    raise http.client.IncompleteRead(data, resp.length)
            except (TimeoutError, socket.timeout, OSError) as e:
                raise self._conn_error(e) from None
            except http.client.HTTPException as e:  # IncompleteRead: the connection dropped mid-body
                raise ConnError(self.url, f"read response: {e!r}", True) from None
        try:
            out = json.loads(data)
        except ValueError as e:
            raise ConnError(self.url, f"decode response: {e}", False) from None
        if not isinstance(out, dict) or not out.get("choices"):
            raise ConnError(self.url, "the response has no choices", False)
        if on_text is not None:
            out["interrupted"] = bool(on_text((out["choices"][0].get("message") or {}).get("content") or ""))
        return out

    def _conn_error(self, reason) -> ConnError:
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return ConnError(self.url, f"no answer within {self.timeout:g}s", True)
        if isinstance(reason, ConnectionRefusedError):
            return ConnError(self.url, f"connection refused: {reason.strerror or reason}", False)
        if isinstance(reason, socket.gaierror):
            return ConnError(self.url, f"unknown host: {reason}", False)
        return ConnError(self.url, str(reason), True)

    def _read_stream(self, resp, on_text) -> dict:
        """Reads "data: {...}" events up to "data: [DONE]", or until on_text asks to stop.
        A body that ends before a finish_reason or [DONE] has arrived broke: ConnError,
        retried. Tool-call deltas are keyed by index; one without an index continues the
        last call, or starts a new one when it brings an id of its own."""
        text, calls, finish, usage, chunks = [], [], None, {}, 0
        interrupted = finished = False
        for raw in resp:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                finished = True
                break
            try:
                ev = json.loads(data)
            except ValueError as e:
                raise ConnError(self.url, f"decode stream event: {e}", False) from None
            if ev.get("usage"):
                usage = ev["usage"]
            for ch in ev.get("choices") or []:
                delta = ch.get("delta") or {}
                for tc in delta.get("tool_calls") or []:
                    i = tc.get("index")
                    if i is None:
                        i = len(calls) - 1
                        if i < 0 or (tc.get("id") and calls[i]["id"] and calls[i]["id"] != tc["id"]):
                            i = len(calls)
                    if not isinstance(i, int) or i < 0 or i > len(calls):
                        raise ConnError(self.url, f"decode stream event: tool call index {i} after {len(calls)} calls",
                                        False)
                    if i == len(calls):
                        calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                    fn = tc.get("function") or {}
                    calls[i]["id"] = tc.get("id") or calls[i]["id"]
                    calls[i]["function"]["name"] += fn.get("name") or ""
                    calls[i]["function"]["arguments"] += fn.get("arguments") or ""
                    chunks += 1
                if ch.get("finish_reason"):
                    finish, finished = ch["finish_reason"], True
                piece = delta.get("content") or ""
                if piece:
                    chunks += 1
                    text.append(piece)
                    if on_text(piece):
                        interrupted, finish = True, "interrupted"
                        break
            if interrupted:
                break
        if not (interrupted or finished):
            raise ConnError(self.url, _STREAM_CUT, True)
        msg = {"role": "assistant", "content": "".join(text)}
        if calls:
            msg["tool_calls"] = calls
        return {"choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": usage,
                "interrupted": interrupted, "chunks": chunks}


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

def _is_envelope(v) -> bool:
    """A tool's data that is already a seed-003 envelope (debate's context_search)."""
    return (isinstance(v, dict) and len(v) == 2 and "result" in v and v.get("status") in ("success", "error"))


def _ints(v):
    """Whole floats back to ints (CBOR may carry 1 as 1.0), so 1 is written 1."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 53:
        return int(v)
    if isinstance(v, dict):
        return {k: _ints(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_ints(x) for x in v]
    return v


class _Call:
    __slots__ = ("action", "result", "failed", "data")

    def __init__(self, action=None, result="", failed=False, data=None):
        self.action, self.result, self.failed, self.data = action, result, failed, data

    def envelope(self) -> str:
        """The tool message, as seed 003 gives it: {"status":"success","result":{...}} or
        {"status":"error","result":"message"}; a tool's own envelope passes unwrapped."""
        if _is_envelope(self.data):
            body = self.data
        elif self.failed:
            body = {"status": "error", "result": self.result}
        else:
            body = {"status": "success", "result": self.data}
        return json.dumps(_ints(plain(body)), separators=(",", ":"), ensure_ascii=False, default=str)


def _estimate_tokens(messages: list, tools: list | None, resp: dict) -> tuple[int, int]:
    """A call's tokens when the server reported none (a stream closed at a tool tag never
    gets to its usage event), as Go's estimateTokens: a token for every 4 characters of
    the messages and tools sent, and of the reply's text and tool calls, and at least one
    for every streamed chunk of the reply."""
    def calls_chars(m):
        return sum(len((tc.get("function") or {}).get("name") or "") +
                   len((tc.get("function") or {}).get("arguments") or "") for tc in m.get("tool_calls") or [])

    chars = sum(len(m.get("content") or "") + calls_chars(m) for m in messages)
    if tools:
        chars += len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False))
    choices = resp.get("choices") or [{}]
    msg = choices[0].get("message") or {}
    out = math.ceil((len(msg.get("content") or "") + calls_chars(msg)) / 4)
    return math.ceil(chars / 4), max(out, resp.get("chunks") or 0)


def _cut_note(what: str) -> str:
    return (f"Your reply was cut off (the token limit was reached) {what}; nothing was run. "
            "Write the call again, complete, with less text before it.")


class _TagWatcher:
    """Follows streamed text and asks to stop at the first complete (or malformed) tool
    tag, rescanning only from where a tag may still begin."""

    def __init__(self, parser: TagParser):
        self.p, self.buf, self.start = parser, [], 0
        self.text = ""

    def __call__(self, piece: str) -> bool:
        self.text += piece
        tag = self.p.find(self.text[self.start:])
        if tag.status in (COMPLETE, MALFORMED):
            return True
        if tag.status == INCOMPLETE:
            self.start += tag.start
        else:
            i = self.text.rfind("<", self.start)
            self.start = i if i >= 0 else len(self.text)
        return False


class LLMAgent:
    """A language-model agent for :func:`agent_arena_sdk.run`: one agent slot.

    ``tools`` are the welcome's tool specs (dicts with name, description, parameters,
    query, persistence) [the running client's]; ``query(tool, params) -> dict``
    answers query tools [the running client's]. ``chat`` replaces the HTTP client
    (anything with ``chat(messages, tools=, stop=, temperature=, max_tokens=)``, and
    ``chat_stream(..., watch=)`` to stream). ``scenario`` is the scenario's description,
    shown in the system prompt after the introduction (``system``), as Go's
    ``Options.Scenario``; the welcome names the scenario but does not describe it, so
    pass it (the scenario file's ``description``, as ``arena scenarios`` lists it).
    ``transcripts`` is a folder where each turn is appended to AGENT.jsonl.
    A model that calls no tool idles with its text as the reasoning; past
    ``tool_call_limit`` tool calls in a turn (failed ones count) the turn ends idle.

    A model server that fails for good (:func:`is_fatal`: 401/403/404, a bad URL, a
    refused connection, retries that ran out) makes :meth:`decide` raise the
    :class:`ModelError`, which stops :func:`agent_arena_sdk.run`. Replies are streamed
    (``stream=False`` reads them whole): in XML mode read only up to the first complete
    tool tag (or, whole, with the text after it dropped); in function-calling mode the
    tool calls run once the stream has ended. ``usage`` counts model calls, retries,
    tokens in and out and latency; ``usage["tokens_estimated"]`` is True once some
    tokens are estimates (a call the server reported no usage for, such as a stream
    closed at a tool tag: a token for every 4 characters, at least one a chunk).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None, *,
                 xml: bool = False, tool_call_limit: int = 10, timeout: float = 60.0, retries: int = 4,
                 backoff: float = 0.5, transcripts: str | None = None, system: str | None = None,
                 tools: list | None = None, query: Callable[[str, dict], Any] | None = None,
                 chat: Any = None, persistence: Callable[[dict], str] | None = None, max_memory: int = 50,
                 temperature: float | None = None, max_tokens: int | None = None, stream: bool = True,
                 retry_time: float = 120.0, scenario: str | None = None):
        self.client = chat or ChatClient(model, base_url, api_key, timeout=timeout, retries=retries, backoff=backoff,
                                         retry_time=retry_time)
        self.stream = stream
        self.usage = {"model_calls": 0, "retries": 0, "tokens_in": 0, "tokens_out": 0, "latency_ms": 0,
                      "tokens_estimated": False}
        self.xml = xml
        self.tool_call_limit = tool_call_limit if tool_call_limit > 0 else 10
        self.transcripts = transcripts
        self.system = system
        self.scenario = scenario
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
            # plain dicts: a Record's payload keys win over dict methods, so a
            # schema's "items" would break json.dumps on a Record
            return [plain(t) for t in current_client().tools]
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
        lines = [self.system or DEFAULT_INTRO, ""]
        if (self.scenario or "").strip():
            lines += ["## Scenario", self.scenario.strip(), ""]
        lines.append("## Available Tools")
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
        turn["usage"] = {k: False if k == "tokens_estimated" else 0 for k in self.usage}
        try:
            d = self._xml_loop(turn, tools) if self.xml else self._tool_loop(turn, tools)
        except Exception as e:
            turn["error"] = str(e)
            if is_fatal(e):
                if self.transcripts:
                    self._write_transcript(turn)
                raise  # the server is wrong for the run: say so, do not idle
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

    def _chat(self, turn, tools: list | None = None, watch=None) -> dict:
        """One model call, streamed unless ``stream`` is off or the chat object has no
        ``chat_stream`` (``watch`` watches each attempt's text, see
        :meth:`ChatClient.chat_stream`), accounted for; returns the response's first
        choice (with ``interrupted`` when a stream was closed early)."""
        kw: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if tools:
            kw["tools"] = tools
        start = time.monotonic()
        try:
            if self.stream and hasattr(self.client, "chat_stream"):
                resp = self.client.chat_stream(turn["messages"], watch=watch, **kw)
            else:
                resp = self.client.chat(turn["messages"], **kw)
        finally:
            ms = int((time.monotonic() - start) * 1000)
            for u in (self.usage, turn["usage"]):
                u["model_calls"] += 1
                u["latency_ms"] += ms
        usage = resp.get("usage") or {}
        tin, tout = usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0
        estimated = not tin and not tout
        if estimated:
            tin, tout = _estimate_tokens(turn["messages"], tools, resp)
        for u in (self.usage, turn["usage"]):
            u["retries"] += resp.get("retries") or 0
            u["tokens_in"] += tin
            u["tokens_out"] += tout
            u["tokens_estimated"] = u["tokens_estimated"] or estimated
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
            edata = getattr(e, "data", None)
            if _is_envelope(edata):
                return _Call(failed=True, result=str(edata["result"]), data=edata)
            code = getattr(e, "code", None)
            if code is not None and hasattr(e, "message"):
                return _Call(failed=True, result=f"{code}: {e.message}")
            return _Call(failed=True, result=str(e))
        data = dict(data) if isinstance(data, dict) else data
        text = compact(data["result"] if _is_envelope(data) else data)
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
            ch = self._chat(turn, tools=fns)
            msg = dict(ch.get("message") or {})
            msg["role"] = "assistant"
            msg["content"] = msg.get("content") or ""
            calls = [dict(tc) for tc in (msg.get("tool_calls") or [])]
            if calls and ch.get("finish_reason") == "length":
                # The arguments may be cut anywhere: run none of the calls.
                name = (calls[-1].get("function") or {}).get("name", "")
                turn["messages"].append({"role": "assistant", "content": msg["content"]})
                turn["messages"].append({"role": "user", "content": _cut_note(f"while you were writing a call to {name}")})
                if turn["tool_calls"] >= self.tool_call_limit:
                    return self._limit_reached(msg["content"])
                turn["tool_calls"] += 1
                continue
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
                    c = _Call(failed=True, result=f"Invalid arguments JSON: {e}; send the arguments of {name} "
                                                  f"as one JSON object")
                else:
                    c = self._call(by_name, name, params, content)
                if c.action is not None:
                    return c.action
                turn["messages"].append({"role": "tool", "tool_call_id": tc["id"], "name": name,
                                         "content": c.envelope()})

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
        reasoning = ""
        while True:
            ch = self._chat(turn, watch=lambda: _TagWatcher(parser))
            text = (ch.get("message") or {}).get("content") or ""
            tag = parser.find(text)
            cut = ch.get("finish_reason") == "length"
            obs_text = ""
            if (tag.status == NONE or (tag.status == INCOMPLETE and not tag.tool)) and not cut:
                turn["messages"].append({"role": "assistant", "content": text})
                return Decision.idle((reasoning + text).strip())
            if tag.status in (NONE, INCOMPLETE):
                # Cut off, or the stream ended inside a tag: never run a part.
                turn["messages"].append({"role": "assistant", "content": text})
                reasoning += text[:tag.start] if tag.status == INCOMPLETE else text
                if tag.status == NONE:
                    obs_text = _cut_note("before you called a tool")
                elif cut:
                    obs_text = _cut_note(f"in the middle of <{tag.tool}>" if tag.tool else "in the middle of a tool tag")
                else:
                    obs_text = "Error: your reply ended inside a tool tag, so nothing was run: " + tag.diagnostic
            else:
                reasoning += text[:tag.start]
                turn["messages"].append({"role": "assistant", "content": text[:tag.end]})
            if turn["tool_calls"] >= self.tool_call_limit:
                return self._limit_reached(reasoning)
            turn["tool_calls"] += 1
            if tag.status == MALFORMED:
                obs_text = "Error: " + tag.diagnostic
            elif tag.status == COMPLETE:
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
