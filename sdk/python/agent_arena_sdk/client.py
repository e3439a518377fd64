"""The client: protocol version 1 over a Unix socket or TCP (docs/protocol.md)."""

from __future__ import annotations

import contextvars
import itertools
import logging
import queue
import socket
import struct
import threading
import time
from typing import Any, Callable

import cbor2

from .types import Decision, Observation, Record

__all__ = ["Client", "ArenaError", "ConnectionLost", "connect", "run", "query", "current_client"]

VERSION = "0.1.0"
PROTOCOL = 1
MAX_FRAME = 64 << 20  # the server does not limit its own frames; accept big ones

log = logging.getLogger("agent_arena_sdk")

_current: contextvars.ContextVar["Client | None"] = contextvars.ContextVar("agent_arena_client", default=None)


class ArenaError(Exception):
    """What the server refused: a protocol error, a refused hello, or a failed query.

    ``code`` is the server's code (UNAUTHORIZED, SLOT_TAKEN, UNKNOWN_TICK, LIMIT_EXCEEDED,
    NOT_A_QUERY, ...), ``message`` its explanation, ``fatal`` whether the server closed
    the connection after it, ``tool`` the tool of a failed query, ``data`` what a failed
    query's result carried besides (a tool's own error envelope, say).
    """

    def __init__(self, code: str, message: str = "", fatal: bool = False, tool: str | None = None,
                 data: dict | None = None):
        self.code, self.message, self.fatal, self.tool, self.data = code, message, fatal, tool, data
        where = f"query {tool}: " if tool else ""
        super().__init__(f"{where}server answered {code}: {message}")


class ConnectionLost(Exception):
    """The connection ended (the server closed it, or the socket failed)."""


def _dial(address: str, timeout: float) -> socket.socket:
    if address.startswith("tcp:"):
        hostport = address[4:]
        host, _, port = hostport.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        sock = socket.create_connection((host, int(port)), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    else:
        path = address[5:] if address.startswith("unix:") else address
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
        except BaseException:
            sock.close()
            raise
    sock.settimeout(None)
    return sock


def dial(address: str, timeout: float = 10.0, retry_for: float = 0.0, alive: Callable[[], bool] | None = None) -> socket.socket:
    """Opens a connection to ``address``, retrying for ``retry_for`` seconds while nothing
    listens there yet (no socket file, connection refused: a server still starting).
    Raises ConnectionError naming the address when it gives up, or at once when
    ``alive()`` turns false (the server process exited)."""
    deadline = time.monotonic() + max(retry_for, 0.0)
    while True:
        try:
            return _dial(address, timeout)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            gone = alive is not None and not alive()
            if gone or time.monotonic() >= deadline:
                what = "no socket file" if isinstance(e, FileNotFoundError) else "connection refused"
                waited = f" (waited {retry_for:g}s)" if retry_for > 0 else ""
                raise ConnectionError(f"cannot connect to {address}: {what}{waited}; is `arena serve "
                                      f"--listen {address}` running?") from e
            time.sleep(0.02)


def hello_message(agent: str | None = None, token: str | None = None, name: str | None = None) -> dict:
    """The ``hello`` of an agent asking for slot ``agent`` (any free one when None)."""
    hello = {"type": "hello", "protocol": PROTOCOL, "role": "agent", "sdk": f"arena-python/{VERSION}"}
    if agent:
        hello["agent"] = agent
    if token:
        hello["token"] = token
    if name:
        hello["name"] = name
    return hello


def handshake(sock: socket.socket, hello: dict, timeout: float, on_error: Callable[["ArenaError"], Any] | None = None) -> dict:
    """Sends ``hello`` and returns the ``welcome``; raises ArenaError for a refusal.
    Non-fatal errors before the welcome go to ``on_error``."""
    sock.settimeout(timeout)
    sock.sendall(encode_frame(hello))
    while True:
        m = read_frame(sock)
        t = m.get("type")
        if t == "welcome":
            sock.settimeout(None)
            return m
        if t == "error":
            e = ArenaError(m.get("code", ""), m.get("message", ""), bool(m.get("fatal")))
            if e.fatal:
                raise e
            if on_error:
                on_error(e)


class Roster:
    """The roster a connection holds: every living agent's id, which observations carry
    as ``agent_ids``. The server sends it whole in ``welcome`` and ``episode_start`` and
    then, in observations, only the agents that left it (``agents_left``); ``track``
    puts ``agent_ids`` back into every observation, so agents see no difference."""

    __slots__ = ("ids",)

    def __init__(self):
        self.ids: list | None = None

    def track(self, m: dict) -> None:
        """Brings the roster up to date with a server message (welcome, episode_start,
        observation), and fills an observation's ``agent_ids`` when the server left them
        out. Each observation gets its own list."""
        t = m.get("type")
        if t in ("welcome", "episode_start"):
            ids = m.get("agent_ids")
            self.ids = list(ids) if isinstance(ids, list) else None
        elif t == "observation":
            obs = m.get("observation")
            if not isinstance(obs, dict):
                if "observation_cbor" in m:  # the map still encoded: see fill
                    self._update(m.get("agent_ids"), m.get("agents_left"))
                return
            ids = obs.get("agent_ids")
            if isinstance(ids, list):
                self.ids = list(ids)
                return
            self._update(None, m.get("agents_left"))
            obs["agent_ids"] = list(self.ids or ())

    def _update(self, ids, left):
        if isinstance(ids, list):
            self.ids = list(ids)
        elif left and self.ids:
            gone = set(left)
            self.ids = [a for a in self.ids if a not in gone]


def encode_frame(msg: dict) -> bytes:
    body = cbor2.dumps(msg)
    return struct.pack(">I", len(body)) + body


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionLost("the server closed the connection")
        buf += chunk
    return bytes(buf)


def read_frame(sock: socket.socket) -> dict:
    (n,) = struct.unpack(">I", _recv_exact(sock, 4))
    if n == 0 or n > MAX_FRAME:
        raise ConnectionLost(f"bad frame length {n}")
    return cbor2.loads(_recv_exact(sock, n))


class _Session:
    """One connection: a reader thread, a keepalive thread and a queue of messages."""

    def __init__(self, sock: socket.socket, keepalive: float):
        self.sock = sock
        self.inbox: "queue.Queue[dict | None]" = queue.Queue()
        self.pending: dict[int, list] = {}  # query id -> [event, result]
        self.lock = threading.Lock()
        self.wlock = threading.Lock()
        self.closed = threading.Event()
        self.fatal: ArenaError | None = None
        self.cause: BaseException | None = None
        self.last_sent = time.monotonic()
        self.welcome: Record | None = None
        self.roster = Roster()  # the reader's
        self.keepalive = keepalive
        self._ping_ids = itertools.count(1)

    def start(self):
        threading.Thread(target=self._read_loop, name="arena-reader", daemon=True).start()
        if self.keepalive and self.keepalive > 0:
            threading.Thread(target=self._ping_loop, name="arena-keepalive", daemon=True).start()

    def write(self, msg: dict):
        data = encode_frame(msg)
        with self.wlock:
            if self.closed.is_set():
                raise ConnectionLost("connection closed")
            try:
                self.sock.sendall(data)
            except OSError as e:
                self._end(e)
                raise ConnectionLost(str(e)) from e
            self.last_sent = time.monotonic()

    def _read_loop(self):
        try:
            while True:
                m = read_frame(self.sock)
                if not isinstance(m, dict):
                    continue
                t = m.get("type")
                if t == "result":
                    with self.lock:
                        p = self.pending.pop(m.get("id"), None)
                    if p is not None:
                        p[1] = m
                        p[0].set()
                    continue
                if t == "pong":
                    continue
                if t == "ping":  # the server checks that we are alive
                    msg = {"type": "pong"}
                    if "id" in m:
                        msg["id"] = m["id"]
                    try:
                        self.write(msg)
                    except ConnectionLost:
                        pass
                    continue
                self.roster.track(m)
                if t == "error" and m.get("fatal"):
                    self.fatal = ArenaError(m.get("code", ""), m.get("message", ""), True)
                self.inbox.put(m)
        except (ConnectionLost, OSError, cbor2.CBORDecodeError, struct.error) as e:
            self._end(e)
        except BaseException as e:  # pragma: no cover
            self._end(e)

    def _ping_loop(self):
        every = self.keepalive / 2
        while not self.closed.wait(min(every, 1.0)):
            if time.monotonic() - self.last_sent >= every:
                try:
                    self.write({"type": "ping", "id": next(self._ping_ids)})
                except ConnectionLost:
                    return

    def _end(self, cause: BaseException | None):
        if self.closed.is_set():
            return
        self.cause = cause
        self.closed.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        with self.lock:
            pending, self.pending = self.pending, {}
        for p in pending.values():
            p[0].set()
        self.inbox.put(None)

    def close(self):
        if not self.closed.is_set():
            try:
                self.write({"type": "bye"})
            except ConnectionLost:
                pass
        self._end(None)


class Client:
    """A connection to an Arena server, as one agent.

    >>> c = Client("unix:arena.sock")   # or "tcp:127.0.0.1:7777", or a socket path
    >>> c.connect()                      # hello/welcome; raises ArenaError when refused
    >>> end = c.run(my_agent)            # plays every episode; returns the final episode_end

    ``slot`` asks for an agent slot (``"agent_002"``; any free one by default); after a
    reconnection the client asks for the slot it was given, with the same ``token``.
    """

    def __init__(self, address: str = "unix:arena.sock", *, slot: str | None = None, token: str | None = None,
                 name: str | None = None, max_reconnects: int = 5, backoff: float = 0.2, max_backoff: float = 5.0,
                 keepalive: float = 10.0, connect_timeout: float = 10.0, connect_retry: float = 5.0,
                 on_error: Callable[[ArenaError], Any] | None = None, logger: logging.Logger | None = None):
        self.address = address
        self.slot = slot
        self.token = token
        self.name = name
        self.max_reconnects = max_reconnects
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.keepalive = keepalive
        self.connect_timeout = connect_timeout
        self.connect_retry = connect_retry
        self.on_error = on_error
        self.log = logger or log
        self.errors: list[ArenaError] = []  # non-fatal errors the server sent, oldest first (the last 100)
        self.welcome: Record | None = None
        self.episode_start: Record | None = None
        self.last_observation: Observation | None = None
        self._session: _Session | None = None
        self._ids = itertools.count(1)
        self._closed = False
        self._reconnects = 0

    # -- connection ------------------------------------------------------------

    @property
    def agent_id(self) -> str | None:
        return self.welcome.get("agent_id") if self.welcome else None

    @property
    def tools(self) -> list:
        return list(self.welcome.get("tools", [])) if self.welcome else []

    def connect(self, retry_for: float | None = None) -> Record:
        """Dials and says hello. Returns the welcome; raises ArenaError if refused
        (UNAUTHORIZED, NO_SLOT, SLOT_TAKEN, UNSUPPORTED_PROTOCOL) and ConnectionError
        (an OSError) naming the address if the server cannot be reached within
        ``retry_for`` seconds (default ``connect_retry``: a server just started may
        not listen yet)."""
        if self._closed:
            raise ConnectionLost("client closed")
        sock = dial(self.address, self.connect_timeout, self.connect_retry if retry_for is None else retry_for)
        try:
            m = handshake(sock, hello_message(self.agent_id or self.slot, self.token, self.name),
                          self.connect_timeout, self._note_error)
        except BaseException:
            sock.close()
            raise
        s = _Session(sock, self.keepalive)
        s.roster.track(m)
        s.welcome = Record.wrap(m)
        self.welcome = s.welcome
        self._session = s
        s.start()
        return self.welcome

    def close(self):
        """Says bye and closes the connection; run() returns."""
        self._closed = True
        if self._session:
            self._session.close()

    def __enter__(self):
        if self._session is None:
            self.connect()
        return self

    def __exit__(self, *exc):
        self.close()

    def _note_error(self, e: ArenaError):
        self.errors.append(e)
        del self.errors[:-100]
        self.log.warning("arena: server error %s: %s", e.code, e.message)
        if self.on_error:
            self.on_error(e)

    # -- low-level messages ----------------------------------------------------

    def send(self, msg: dict):
        """Sends one raw message (a map with a ``type``)."""
        if self._session is None:
            raise ConnectionLost("not connected")
        self._session.write(msg)

    def decide(self, tick: int, decision: "Decision | dict | None"):
        """Sends the decision answering the observation of ``tick``."""
        self.send(_as_decision(decision).to_message(tick))

    def recv(self, timeout: float | None = None) -> Record | None:
        """The next message from the server (observation, episode_start, episode_end,
        error, ...), results and pongs excepted; None after ``timeout`` seconds.
        Raises ConnectionLost when the connection has ended."""
        s = self._session
        if s is None:
            raise ConnectionLost("not connected")
        try:
            m = s.inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if m is None:
            s.inbox.put(None)  # keep reporting the end
            if s.fatal is not None:
                raise ConnectionLost(f"connection ended: {s.fatal}") from s.fatal
            raise ConnectionLost(f"connection ended: {s.cause or 'closed'}")
        t = m.get("type")
        if t == "observation":
            out = Record.wrap({k: v for k, v in m.items() if k != "observation"})
            dict.__setitem__(out, "observation", Observation.wrap(m.get("observation") or {}))
            out.received = time.monotonic()
            return out
        return Record.wrap(m)

    # -- queries ---------------------------------------------------------------

    def query(self, tool: str, params: dict | None = None, /, timeout: float = 10.0, **kw) -> Record:
        """Calls a query tool (query_world, query_inventory, ...) mid-turn and returns
        its data, e.g. ``{"query_result": {...}}``. A refused query raises ArenaError
        with the tool's error code (LIMIT_EXCEEDED, NOT_A_QUERY, INVALID_PARAMS, DEAD)."""
        s = self._session
        if s is None or s.closed.is_set():
            raise ConnectionLost("not connected")
        p = dict(params or {})
        p.update(kw)
        qid = next(self._ids)
        slot = [threading.Event(), None]
        with s.lock:
            s.pending[qid] = slot
        msg = {"type": "query", "id": qid, "tool": tool}
        if p:
            from .types import plain
            msg["params"] = plain(p)
        try:
            s.write(msg)
        except ConnectionLost:
            with s.lock:
                s.pending.pop(qid, None)
            raise
        if not slot[0].wait(timeout):
            with s.lock:
                s.pending.pop(qid, None)
            raise TimeoutError(f"query {tool}: no result within {timeout}s")
        r = slot[1]
        if r is None:
            raise ConnectionLost(f"query {tool}: the connection ended before the result")
        if not r.get("success"):
            raise ArenaError(r.get("error_code", ""), r.get("error_message", ""), False, tool, r.get("data"))
        return Record.wrap(r.get("data") or {})

    def query_world(self, radius: float | None = None, filter_type: str | None = None) -> Record:
        p = {}
        if radius is not None:
            p["radius"] = radius
        if filter_type:
            p["filter_type"] = filter_type
        from .types import QueryResult
        return QueryResult.wrap(self.query("query_world", p).get("query_result") or {})

    def query_inventory(self) -> Record:
        return Record.wrap(self.query("query_inventory").get("inventory_details") or {})

    # -- the loop --------------------------------------------------------------

    def _redial(self, cause) -> None:
        failures = 0
        while True:
            if self.max_reconnects < 0 or failures >= self.max_reconnects:
                raise ConnectionLost(f"connection to {self.address} lost ({cause}); gave up after "
                                     f"{failures} reconnection attempts")
            wait = min(self.backoff * (2 ** failures), self.max_backoff)
            failures += 1
            self.log.warning("arena: connection lost (%s); reconnecting in %.2fs", cause, wait)
            time.sleep(wait)
            if self._closed:
                raise ConnectionLost("client closed")
            try:
                self.connect(retry_for=0)
                self._reconnects += 1
                self.log.info("arena: reconnected as %s", self.agent_id)
                return
            except ArenaError as e:
                if e.code != "SLOT_TAKEN":
                    raise
                cause = e
            except OSError as e:
                cause = e

    def run(self, agent) -> Record | None:
        """Plays every episode with ``agent`` and returns the final episode_end.

        ``agent`` is a callable ``agent(obs) -> Decision`` or an object with
        ``decide(obs)``; it may also have ``on_episode_start(msg)`` and
        ``on_episode_end(msg)``. Returning None or a dict is allowed (None is idle; a
        dict is ``{"tool", "params", "reasoning"}``). While it decides,
        :func:`agent_arena_sdk.query` and :func:`current_client` reach this client.
        Dead agents' last observation is not passed to the agent. An exception the
        agent raises idles that tick, except one marked ``stops_run`` (a fatal
        :class:`agent_arena_sdk.llm.ModelError`), which ends the run.
        """
        if self._session is None:
            self.connect()
        decide = agent.decide if hasattr(agent, "decide") else agent
        if not callable(decide):
            raise TypeError("agent must be callable or have decide(obs)")
        on_start = getattr(agent, "on_episode_start", None)
        on_end = getattr(agent, "on_episode_end", None)
        episode, last_end, ended = None, None, False
        token = _current.set(self)
        try:
            while True:
                try:
                    m = self.recv(timeout=None)
                except ConnectionLost as e:
                    s = self._session
                    if self._closed:
                        return last_end
                    if s.fatal is not None and s.fatal.code != "SLOW_CONSUMER":
                        raise s.fatal
                    if ended:
                        return last_end  # closed right after an episode_end
                    self._redial(e)
                    continue
                t = m.get("type")
                if t == "episode_start":
                    ended = False
                    if episode == m.get("episode"):
                        continue  # a reconnection within the episode
                    episode = m.get("episode")
                    self.episode_start = m
                    if on_start:
                        on_start(m)
                elif t == "episode_end":
                    ended, last_end, episode = True, m, None
                    self.log.info("arena: episode %s ended: %s at tick %s", m.get("episode"), m.get("reason"),
                                  m.get("tick"))
                    if on_end:
                        on_end(m)
                    if m.get("final", False):
                        return m
                elif t == "observation":
                    ended = False
                    obs = m.observation
                    self.last_observation = obs
                    if not obs.get("alive", True):
                        continue  # dead: no decision is expected
                    try:
                        d = decide(obs)
                    except (ConnectionLost, KeyboardInterrupt):
                        raise
                    except Exception as e:
                        if getattr(e, "stops_run", False):
                            raise  # e.g. the model server refused the key: stop, loudly
                        self.log.exception("arena: the agent raised; idling this tick")
                        d = Decision.idle("the agent raised an exception")
                    try:
                        self.decide(m["tick"], d)
                    except ConnectionLost:
                        pass  # the next recv sees the end
                elif t == "error":
                    e = ArenaError(m.get("code", ""), m.get("message", ""), bool(m.get("fatal")))
                    if not e.fatal:
                        self._note_error(e)
        finally:
            _current.reset(token)
            if self._session:
                self._session.close()


def _as_decision(d) -> Decision:
    if d is None:
        return Decision.idle()
    if isinstance(d, Decision):
        return d
    if isinstance(d, dict):
        return Decision(d.get("tool") or "idle", d.get("params"), d.get("reasoning"))
    if isinstance(d, str):
        return Decision(d)
    raise TypeError(f"an agent must return a Decision, not {type(d).__name__}")


def current_client() -> Client:
    """The client whose run() is calling the agent (like the Go SDK's ClientFrom)."""
    c = _current.get()
    if c is None:
        raise RuntimeError("no Arena client is running an agent in this context")
    return c


def query(tool: str, params: dict | None = None, /, **kw) -> Record:
    """Mid-turn query through the running client: ``query("query_world", radius=20)``."""
    return current_client().query(tool, params, **kw)


def connect(address: str = "unix:arena.sock", **options) -> Client:
    """Creates a Client and connects it."""
    c = Client(address, **options)
    c.connect()
    return c


def run(agent, address: str = "unix:arena.sock", **options) -> Record | None:
    """Connects to ``address`` and plays ``agent`` until the final episode ends."""
    c = Client(address, **options)
    try:
        return c.run(agent)
    finally:
        c.close()
