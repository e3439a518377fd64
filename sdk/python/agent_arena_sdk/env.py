"""Arena as reinforcement-learning environments: PettingZoo and Gymnasium.

- :class:`ArenaParallelEnv`, a ``pettingzoo.ParallelEnv`` (a subclass of it when
  pettingzoo is installed): every agent slot of a scenario is a PettingZoo agent.
- :class:`ArenaEnv`, a ``gymnasium.Env``: one slot, built-in bots in the others;
  registered as ``arena/Foraging-v0``, ``arena/Crafting-v0``, ... when this module is
  imported (``gymnasium.make("agent_arena_sdk.env:arena/Foraging-v0")`` imports it).
- :func:`make_vec`: n arenas as one ``gymnasium.vector.VectorEnv`` whose servers step
  at the same time.

Each environment starts its own ``arena serve`` (lockstep, on a Unix socket in a
temporary folder) and plays its slots over the wire protocol; spaces come from
``arena scenarios --format json`` before any server starts (see spaces.py).
Needs numpy and gymnasium (and pettingzoo for the PettingZoo base class); the rest
of agent_arena_sdk does not import this module. docs/python.md has a whole loop.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import warnings
import weakref
from typing import Any

import cbor2
import gymnasium
import numpy as np
from gymnasium.utils import seeding

from .client import ArenaError, ConnectionLost, Roster, dial, encode_frame, handshake, hello_message
from .spaces import Codec
from .types import Decision, Observation

try:
    from pettingzoo import ParallelEnv as _ParallelBase
except ImportError:  # pettingzoo is optional: the same API without the base class
    class _ParallelBase:
        metadata: dict = {}

        @property
        def num_agents(self) -> int:
            return len(self.agents)

        @property
        def max_num_agents(self) -> int:
            return len(self.possible_agents)

        @property
        def unwrapped(self):
            return self

        def __str__(self):
            return self.metadata.get("name", type(self).__name__)

__all__ = ["ArenaParallelEnv", "ArenaEnv", "ArenaVectorEnv", "make_vec", "scenario_info", "find_arena",
           "BUILTIN_SCENARIOS", "register_envs"]

# The built-in scenarios registered with gymnasium (a test checks this against `arena scenarios`).
BUILTIN_SCENARIOS = ["crafting", "debate", "economy", "foraging", "market", "role_game", "social", "team_capture",
                     "town_square"]

FOREVER = "8760h"   # lockstep decision time-out: the server waits for the trainer however long it takes
KEEPALIVE = 10.0    # ping a connection silent for this long (the server drops one silent for 30 s)


def find_arena(arena: str | None = None) -> str:
    """The ``arena`` binary: ``arena`` if given, else $ARENA_BIN, else ``arena`` on PATH."""
    cand = arena or os.environ.get("ARENA_BIN") or "arena"
    path = cand if os.sep in cand else shutil.which(cand)
    if not path or not os.access(path, os.X_OK):
        raise FileNotFoundError(f"the arena binary {cand!r} was not found: build it with `go build -o arena "
                                f"./cmd/arena` and pass arena=PATH or set ARENA_BIN")
    return os.path.abspath(path)


@functools.lru_cache(maxsize=64)
def _info(arena: str, scenario: str, agents: int, mtime: float) -> str:
    args = [arena, "scenarios", "--format", "json", "--scenario", scenario]
    if agents:
        args += ["--agents", str(agents)]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError(f"{' '.join(args[1:])}: {p.stderr.strip() or p.stdout.strip()}")
    return p.stdout


SMALL_WORLD = 32  # agents: below this, the server runs a tick on one goroutine (engine's minParallel)


def server_environment(agents: int) -> dict:
    """The environment ``arena serve`` is started in: a world of fewer than SMALL_WORLD
    agents gets ``GOMAXPROCS=1`` (unless it is set already). Its tick runs on one
    goroutine anyway, and with one processor Go's scheduler stops spinning threads
    awake between lockstep decisions: a quarter less wall time per step for a
    two-agent foraging env (docs/performance.md), and n servers of make_vec share
    the cores instead of each claiming them all."""
    env = dict(os.environ)
    if agents < SMALL_WORLD and "GOMAXPROCS" not in env:
        env["GOMAXPROCS"] = "1"
    return env


def scenario_info(arena: str, scenario: str, agents: int | None = None) -> dict:
    """What ``arena scenarios --format json`` says about a scenario (cached)."""
    mtime = os.path.getmtime(scenario) if os.path.exists(scenario) else 0.0
    return json.loads(_info(find_arena(arena), scenario, int(agents or 0), mtime))


# -- one connection, read synchronously ----------------------------------------------

class _Slot:
    """One agent's connection. Reads happen on the caller's thread; writes are locked
    because the keepalive thread pings too."""

    __slots__ = ("agent", "sock", "rfile", "wlock", "last_sent", "tick", "roster", "__weakref__")

    def __init__(self, agent: str, sock: socket.socket, welcome: dict):
        self.agent, self.sock = agent, sock
        self.roster = Roster()
        self.roster.track(welcome)
        self.rfile = sock.makefile("rb", buffering=1 << 16)
        self.wlock = threading.Lock()
        self.last_sent = time.monotonic()
        self.tick = 0

    def send(self, msg: dict):
        data = encode_frame(msg)
        with self.wlock:
            self.sock.sendall(data)
            self.last_sent = time.monotonic()

    def recv(self, timeout: float | None) -> dict:
        if timeout != self.sock.gettimeout():
            self.sock.settimeout(timeout)  # None: blocking, one system call per read
        head = self.rfile.read(4)
        if len(head) < 4:
            raise ConnectionLost("the server closed the connection")
        (n,) = struct.unpack(">I", head)
        body = self.rfile.read(n)
        if len(body) < n:
            raise ConnectionLost("the server closed the connection")
        m = cbor2.loads(body)
        if isinstance(m, dict):
            self.roster.track(m)
        return m

    def close(self):
        try:
            with self.wlock:
                self.sock.sendall(encode_frame({"type": "bye"}))
        except OSError:
            pass
        for c in (self.rfile, self.sock):
            try:
                c.close()
            except OSError:
                pass


def _keepalive(slots: "weakref.WeakSet[_Slot]", stop: threading.Event):
    ids = 0
    while not stop.wait(1.0):
        now = time.monotonic()
        for s in list(slots):
            if now - s.last_sent >= KEEPALIVE:
                ids += 1
                try:
                    s.send({"type": "ping", "id": ids})
                except OSError:
                    pass


class _Runtime:
    """The server process, its folder and connections: what must be cleaned up. It holds
    no reference to the environment, so that a finalizer can run it when the
    environment is garbage-collected (or at exit)."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.dir: str | None = None
        self.graceful = False  # SIGTERM, so that the server writes its output; else SIGKILL
        self.log = None
        self.slots: dict[str, _Slot] = {}
        self.live: weakref.WeakSet = weakref.WeakSet()
        self.stop = threading.Event()
        self.pinger: threading.Thread | None = None

    def ping_in_background(self):
        if self.pinger is None:
            self.pinger = threading.Thread(target=_keepalive, args=(self.live, self.stop), daemon=True,
                                           name="arena-env-keepalive")
            self.pinger.start()

    def stop_server(self):
        for s in self.slots.values():
            s.close()
        self.slots = {}
        p, self.proc = self.proc, None
        if p is not None:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM if self.graceful else signal.SIGKILL)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.log is not None:
            self.log.close()
            self.log = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def shutdown(self):
        self.stop.set()
        self.stop_server()

    def log_tail(self, n: int = 2000) -> str:
        if not self.dir:
            return ""
        try:
            with open(os.path.join(self.dir, "serve.log"), "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - n))
                return f.read().decode("utf-8", "replace").strip()
        except OSError:
            return ""


def _die_with_parent():  # pragma: no cover - runs in the child
    try:
        _LIBC.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the server dies with this process
    except Exception:
        pass


try:
    import ctypes
    _LIBC = ctypes.CDLL(None) if os.uname().sysname == "Linux" else None
except Exception:  # pragma: no cover
    _LIBC = None


def _seed_spaces(spaces_: dict, seed: int):
    for i, (_, sp) in enumerate(sorted(spaces_.items())):
        sp.seed(int(np.random.SeedSequence([int(seed), i]).generate_state(1, np.uint32)[0]))


class ArenaParallelEnv(_ParallelBase):
    """A scenario's agent slots as a PettingZoo ``ParallelEnv``.

    ``scenario``: a built-in scenario's name or a scenario file. ``agents``: the number of
    slots (default: the scenario's); the last ``bots`` of them are played by the
    scenario's built-in bot, the others are :attr:`possible_agents`. ``arena``: the
    binary (default $ARENA_BIN or ``arena`` on PATH). ``observation``: ``"dict"``
    (arrays; see :class:`~agent_arena_sdk.spaces.Codec`), ``"text"`` (the language-model
    rendering of LLMAgent) or ``"auto"`` (text for scenarios with components, else
    dict). ``k``: entity slots per kind. ``ticks``: replaces the scenario's time limit.
    ``render_mode``: None or ``"rgb_array"``. ``out``: keep the servers' output (replays,
    results) in this folder instead of a temporary one. ``episodes_per_server``: a
    server plays this many episodes one after the other before a fresh one is started
    (``reset()`` after an episode that ended goes on with the server's next episode).
    ``step_timeout``: seconds to wait for the server at each step before TimeoutError
    (default: no limit; a server that exits is noticed at once either way).
    ``server_arrays``: with the "dict" observation, let the server compute each
    observation's arrays (the default; False encodes in Python, the same values).
    ``lazy_decode``: with server arrays, observations arrive still encoded and are
    decoded only when something needs the map (:meth:`raw_observation`, an action
    naming an entity slot, component sections); the default. False decodes every one.

    Rewards are the change of each agent's score, counted from 0, so that an agent's
    rewards sum to its score at the end. An episode that ends at the time limit is a
    truncation; one that ends because the objective was met (or every agent died), and
    an agent's death, are terminations. Every observation is a real one: at the end,
    the observation the server built after the last tick and sent with
    ``episode_end``.
    """

    metadata = {"name": "arena_parallel_v0", "render_modes": ["rgb_array"], "render_fps": 10,
                "is_parallelizable": True}

    def __init__(self, scenario: str = "foraging", agents: int | None = None, *, bots: int = 0,
                 arena: str | None = None, observation: str = "auto", k: int = 8, text_length: int = 16384,
                 ticks: int | None = None, render_mode: str | None = None, out: str | None = None,
                 episodes_per_server: int = 100, step_timeout: float | None = None, extra_args: tuple = (),
                 server_arrays: bool = True, lazy_decode: bool = True):
        self.arena = find_arena(arena)
        self.scenario = scenario
        self.info = scenario_info(self.arena, scenario, agents)
        slots = list(self.info["agent_ids"])
        if not 0 <= bots < len(slots):
            raise ValueError(f"bots must be between 0 and {len(slots) - 1} (the scenario has {len(slots)} slots)")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', not {render_mode!r}")
        if observation == "auto":
            observation = "text" if self.info.get("components") else "dict"
        self.n_slots, self.bots, self.ticks, self.out = len(slots), int(bots), ticks, out
        self.render_mode, self.step_timeout = render_mode, step_timeout
        self.episodes_per_server = max(1, int(episodes_per_server))
        self.extra_args = tuple(extra_args)
        self.possible_agents: list[str] = slots[:len(slots) - self.bots]
        self.agents: list[str] = []
        self.codec = Codec(self.info, observation, k, text_length)
        self.observation_mode = observation
        # The server computes the "dict" encoding's arrays (docs/python.md, "Where the encoding runs").
        self._layout = self.codec.arrays_layout() if observation == "dict" and server_arrays else None
        self._lazy = self._layout is not None and lazy_decode
        self._obs_spaces = {a: self.codec.observation_space() for a in self.possible_agents}
        self._act_spaces = {a: self.codec.action_space() for a in self.possible_agents}
        self._renderer = None
        if observation == "text":
            from .llm import LLMAgent  # the prompt's rendering, without a model
            self._renderer = LLMAgent(chat=object(), tools=[]).observation_prompt
        self._rt = _Runtime()
        self._finalizer = weakref.finalize(self, self._rt.shutdown)
        self._np_random: np.random.Generator | None = None
        self._np_random_seed: int | None = None
        self._raw: dict[str, dict] = {}        # the last observation map of each agent
        self._undecoded: dict[str, tuple] = {}  # ... or its encoding and roster, until needed (lazy_decode)
        self._obs: dict[str, Any] = {}         # ... and its encoding
        self._scores: dict[str, float] = {}
        self._episode = 0                      # episodes played on the current server
        self._ended = True                     # the current episode is over
        self._final = True                     # ... and it was the server's last
        self._pending: dict | None = None      # decisions sent, observations not read yet
        self._queries = 0                      # query ids
        self.episode_seed: int | None = None   # the public seed of the current episode
        self.episode_end: dict | None = None   # the episode_end message of the last episode

    # -- PettingZoo API -----------------------------------------------------------------

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        try:
            return self._obs_spaces[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; the agents are {self.possible_agents}") from None

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        try:
            return self._act_spaces[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; the agents are {self.possible_agents}") from None

    @property
    def np_random(self) -> np.random.Generator:
        """The generator of the seeds of episodes that reset() draws (seeded by reset(seed))."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = seeding.np_random()
        return self._np_random

    def reset(self, seed: int | None = None, options: dict | None = None):
        """Starts an episode. ``seed``: the episode's public and secret seeds (``arena
        serve --seed S --secret-seed S``): the same seed and actions give the same
        episode. Without a seed, after an episode that ended, the server's next episode
        (seeded from the first); else a server with seeds drawn from :attr:`np_random`.
        The action and observation spaces are seeded from ``seed`` too."""
        self._begin_reset(seed)
        return self._end_reset()

    def step(self, actions: dict):
        """One tick for every agent in :attr:`agents`. An action is one of the action
        space, a :class:`Decision`, ``{"tool": name, "params": {...}}`` or None (idle);
        a missing agent idles. Every action is checked before any is sent: a bad one
        raises ValueError or TypeError and nothing happens."""
        self._begin_step(actions)
        return self._end_step()

    def render(self):
        """The current state as an RGB array (H, W, 3) drawn by the viewer (``arena view
        --screenshot``), when render_mode is "rgb_array" and a display is available
        (X11: $DISPLAY; run under Xvfb on a server); else None, with a warning."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (use render_mode='rgb_array')")
            return None
        if not os.environ.get("DISPLAY"):
            warnings.warn("ArenaParallelEnv.render: no display ($DISPLAY is not set), so no frame; run under "
                          "Xvfb (xvfb-run) to render headless", RuntimeWarning, stacklevel=2)
            return None
        if self._rt.proc is None or self._rt.dir is None:
            raise RuntimeError("render() before reset()")
        return self._screenshot()

    def state(self) -> np.ndarray:
        """The global state for centralised training: every possible agent's observation,
        flattened (``gymnasium.spaces.flatten``) and concatenated in possible_agents
        order; zeros for an agent without one. Needs observation="dict"."""
        if self.observation_mode != "dict":
            raise NotImplementedError("state() needs observation='dict'")
        parts = []
        for a in self.possible_agents:
            sp = self._obs_spaces[a]
            o = self._obs.get(a)
            parts.append(gymnasium.spaces.flatten(sp, o).astype(np.float32) if o is not None
                         else np.zeros(gymnasium.spaces.flatdim(sp), np.float32))
        return np.concatenate(parts)

    @functools.cached_property
    def state_space(self) -> gymnasium.spaces.Box:
        n = sum(gymnasium.spaces.flatdim(self._obs_spaces[a]) for a in self.possible_agents)
        return gymnasium.spaces.Box(-np.inf, np.inf, (n,), np.float32)

    def close(self):
        """Stops the server and removes its folder (idempotent)."""
        self._rt.stop_server()
        self.agents = []
        self._pending = None
        self._ended = self._final = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def raw_observation(self, agent: str) -> Observation:
        """The agent's last observation as the SDK's typed Observation (for scripted
        policies and debugging): what the server sent, before encoding."""
        return Observation.wrap(self._raw_of(agent))

    def query(self, agent: str, tool: str, params: dict | None = None, /, **kw) -> dict:
        """A mid-turn query for ``agent`` (``query_world``, ``query_inventory``, a
        component's query tool) between steps: its result's data, e.g.
        ``{"query_result": {...}}``. A refused query raises ArenaError (LIMIT_EXCEEDED
        past the scenario's tool_call_limit per observation, NOT_A_QUERY, ...)."""
        if agent not in self.agents:
            raise ValueError(f"{agent!r} is not playing (playing: {self.agents})")
        slot = self._rt.slots[agent]
        self._queries += 1
        qid = self._queries
        msg = {"type": "query", "id": qid, "tool": tool}
        if params or kw:
            msg["params"] = {**(params or {}), **kw}
        slot.send(msg)
        while True:
            try:
                m = slot.recv(self.step_timeout)
            except (OSError, ConnectionLost, ValueError, cbor2.CBORDecodeError) as e:
                self._server_gone(agent, e)
            t = m.get("type")
            if t == "result" and m.get("id") == qid:
                if not m.get("success"):
                    raise ArenaError(m.get("error_code", ""), m.get("error_message", ""), False, tool)
                return m.get("data") or {}
            if t == "error":
                raise ArenaError(m.get("code", ""), m.get("message", ""), bool(m.get("fatal")))
            if t in ("observation", "episode_end", "episode_start"):
                raise RuntimeError(f"{agent}: {t} while waiting for a query's result")

    @property
    def tools(self) -> list[str]:
        """The tool names; action["tool"] is an index into this list."""
        return list(self.codec.tools)

    # -- the two halves of reset and step (make_vec overlaps them across servers) -------

    def _begin_reset(self, seed):
        seeded = seed is not None
        if seeded:
            if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
                raise ValueError(f"seed must be a non-negative integer, not {seed!r}")
            self._np_random, self._np_random_seed = seeding.np_random(int(seed))
            _seed_spaces(self._act_spaces, int(seed))
            _seed_spaces(self._obs_spaces, int(seed) + 1)
        self._pending = None
        self.episode_end = None
        alive = self._rt.proc is not None and self._rt.proc.poll() is None
        if not seeded and alive and self._ended and not self._final:
            self._continuing = True  # the server's next episode follows on the same connections
            return
        self._continuing = False
        if seeded:
            public = secret = int(seed)
        else:
            public, secret = (int(x) for x in self.np_random.integers(0, 2 ** 63, size=2))
        self._launch(public, secret)

    def _launch(self, public: int, secret: int):
        rt = self._rt
        rt.stop_server()
        rt.graceful = self.out is not None
        rt.dir = tempfile.mkdtemp(prefix="arena-env-")
        self._out_dir = self.out or os.path.join(rt.dir, "out")
        self._address = "unix:" + os.path.join(rt.dir, "arena.sock")
        args = [self.arena, "serve", "--scenario", self.scenario, "--listen", self._address,
                "--seed", str(public), "--secret-seed", str(secret), "--decision-timeout", FOREVER,
                "--episodes", str(self.episodes_per_server), "--agents", str(self.n_slots), "--out", self._out_dir]
        if self.bots:
            args += ["--bots", str(self.bots)]
        if self.ticks:
            args += ["--ticks", str(self.ticks)]
        args += list(self.extra_args)
        rt.log = open(os.path.join(rt.dir, "serve.log"), "wb")
        main = threading.current_thread() is threading.main_thread()
        rt.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=rt.log, stderr=subprocess.STDOUT,
                                   start_new_session=True, env=server_environment(self.n_slots),
                                   preexec_fn=_die_with_parent if (main and _LIBC is not None) else None)
        self._episode = 0
        self._ended, self._final = False, False

    def _end_reset(self):
        rt = self._rt
        if not self._continuing:
            self._connect()
        self._episode += 1
        self._ended, self._final = False, False
        self.agents = list(self.possible_agents)
        self._scores = {a: 0.0 for a in self.agents}
        self._raw, self._obs, self._undecoded = {}, {}, {}
        obs, infos = {}, {}
        for a in self.agents:
            m = self._read(a, start=True)
            if m.get("type") != "observation":
                raise RuntimeError(f"{a}: the episode ended before its first observation: {m.get('reason')}")
            obs[a], infos[a] = self._take_message(a, m)[:2]
        rt.ping_in_background()
        return obs, infos

    def _connect(self):
        rt = self._rt
        proc = rt.proc
        for a in self.possible_agents:
            try:
                sock = dial(self._address, 10.0, retry_for=30.0, alive=lambda: proc.poll() is None)
                hello = hello_message(a)
                if self._layout is not None:
                    hello["arrays"] = True  # observations wait for the layout sent next
                w = handshake(sock, hello, 30.0)
            except (OSError, ArenaError) as e:
                tail = rt.log_tail()
                self.close()
                raise RuntimeError(f"arena serve did not accept {a}: {e}" + (f"\nserve.log:\n{tail}" if tail else "")) from e
            if w.get("agent_id") != a:
                self.close()
                raise RuntimeError(f"asked for slot {a}, the server gave {w.get('agent_id')}")
            rt.slots[a] = _Slot(a, sock, w)
            rt.live.add(rt.slots[a])
            if self._layout is not None:
                msg = {"type": "observation_arrays", "layout": self._layout}
                if self._lazy:
                    msg["observation_bytes"] = True
                rt.slots[a].send(msg)

    def _read(self, agent: str, start: bool = False) -> dict:
        """The agent's next observation or episode_end (with start: skip to the next
        episode's first observation). Server errors raise ArenaError."""
        slot = self._rt.slots[agent]
        while True:
            try:
                m = slot.recv(self.step_timeout)
            except TimeoutError:
                self.close()
                raise TimeoutError(f"{agent}: nothing from the server within {self.step_timeout}s") from None
            except (OSError, ConnectionLost, ValueError, cbor2.CBORDecodeError) as e:
                self._server_gone(agent, e)
            t = m.get("type")
            if t == "observation":
                slot.tick = m.get("tick", 0)
                return m
            if t == "episode_end":
                if start:
                    continue
                return m
            if t == "episode_start":
                self.episode_seed = m.get("seed")
                start = False
                continue
            if t == "error":
                e = ArenaError(m.get("code", ""), m.get("message", ""), bool(m.get("fatal")))
                if e.fatal:
                    self.close()
                raise e
            # pong, result: nothing to do

    def _server_gone(self, agent, cause):
        rt = self._rt
        rc = rt.proc.poll() if rt.proc is not None else None
        tail = rt.log_tail()
        self.close()
        what = f"arena serve exited with status {rc}" if rc is not None else f"the connection of {agent} ended"
        raise ConnectionLost(f"{what} ({cause})" + (f"\nserve.log:\n{tail}" if tail else "")) from cause

    def _raw_of(self, agent: str) -> dict | None:
        """The agent's last observation map, decoded now if it came as bytes."""
        held = self._undecoded.pop(agent, None)
        if held is not None:
            blob, ids = held
            raw = cbor2.loads(blob)
            raw["agent_ids"] = list(ids or ())
            self._raw[agent] = raw
        return self._raw.get(agent)

    def _take_message(self, agent: str, m: dict):
        """_take of an observation message, whose map may still be encoded: returns the
        encoding, the info, the score and whether the agent is alive."""
        blob = m.get("observation_cbor")
        if blob is None:
            raw = m["observation"]
            enc, info = self._take(agent, raw, m.get("arrays"))
            return enc, info, float(raw.get("score") or 0.0), raw.get("alive") is not False
        self._raw.pop(agent, None)
        self._undecoded[agent] = (blob, self._rt.slots[agent].roster.ids)  # the roster is replaced, never changed
        raw = self._raw_of(agent) if self.codec.components else None  # their text is encoded
        enc = self.codec.encode(raw, None, m.get("arrays"))
        self._obs[agent] = enc
        return enc, {"tick": m.get("tick", 0)}, float(m.get("score") or 0.0), m.get("alive") is not False

    def _take(self, agent: str, raw: dict, arrays: dict | None = None):
        """Keeps the observation; returns it encoded (from the server's arrays when it
        sent them), with its info."""
        self._undecoded.pop(agent, None)
        self._raw[agent] = raw
        enc = self.codec.encode(raw, self._renderer, arrays)
        self._obs[agent] = enc
        info = {"tick": raw.get("tick", 0)}
        if self.observation_mode == "text":
            info["action_mask"] = self.codec.mask(raw)
        return enc, info

    def _begin_step(self, actions: dict):
        if not self.agents:
            raise RuntimeError("no agent is playing: call reset() first (the episode is over or never started)")
        if self._pending is not None:
            raise RuntimeError("a step is under way")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict of agent → action, not {type(actions).__name__}")
        extra = [a for a in actions if a not in self.agents]
        if extra:
            raise ValueError(f"actions for agents that are not playing: {extra} (playing: {self.agents})")
        msgs = {a: self.codec.decode(actions.get(a), functools.partial(self._raw_of, a)).to_message(
            self._rt.slots[a].tick) for a in self.agents}
        for a, msg in msgs.items():
            try:
                self._rt.slots[a].send(msg)
            except OSError as e:
                self._server_gone(a, e)
        self._pending = msgs

    def _end_step(self):
        self._pending = None
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        for a in list(self.agents):
            m = self._read(a)
            if m.get("type") == "observation":
                obs[a], infos[a], score, alive = self._take_message(a, m)
                rewards[a], self._scores[a] = score - self._scores[a], score
                dead = not alive
                terms[a], truncs[a] = dead, False
                if dead:
                    self.agents.remove(a)
                continue
            end = m
            self.episode_end = end
            reason = end.get("reason")
            if reason == "stopped":
                self.close()
                raise RuntimeError("the server stopped the episode (it was interrupted)")
            res = next((r for r in ((end.get("results") or {}).get("agents") or []) if r.get("id") == a), {})
            raw = end.get("observation")
            if not isinstance(raw, dict):  # a server older than the final observation
                raw = dict(self._raw_of(a) or {})
                raw["tick"] = end.get("tick", raw.get("tick"))
                if res:
                    raw["score"] = res.get("score", raw.get("score"))
                    raw["alive"] = res.get("alive", raw.get("alive"))
            obs[a], infos[a] = self._take(a, raw, end.get("arrays"))
            score = float(raw.get("score") or 0.0)
            rewards[a], self._scores[a] = score - self._scores[a], score
            terms[a], truncs[a] = reason != "time_limit", reason == "time_limit"
            results = end.get("results") or {}
            infos[a]["episode_end"] = {"reason": reason, "outcome": results.get("outcome"),
                                       "passed": res.get("passed"), "score": res.get("score"),
                                       "metrics": dict(res.get("metrics") or {})}
            self.agents.remove(a)
        if not self.agents:
            self._episode_over()
        return obs, rewards, terms, truncs, infos

    def _episode_over(self):
        end = self.episode_end
        self._ended = True
        # end is None when every agent died: the server's episode may go on (bots): start afresh
        self._final = end is None or bool(end.get("final", True)) or self._episode >= self.episodes_per_server
        if self.out is None and end is not None:
            ep = os.path.join(self._out_dir, f"episode-{end.get('episode', 0):04d}")
            shutil.rmtree(ep, ignore_errors=True)  # written and done with: keep the folder small

    # -- render ---------------------------------------------------------------------

    def _screenshot(self, width: int = 640, height: int = 480) -> np.ndarray | None:
        png = os.path.join(self._rt.dir, "frame.ppm")
        args = [self.arena, "view", "--connect", self._address, "--token-file",
                os.path.join(self._out_dir, "spectator.token"), "--screenshot", png, "--width", str(width),
                "--height", str(height)]
        p = subprocess.run(args, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            warnings.warn(f"ArenaParallelEnv.render: arena view failed: {p.stderr.strip()}", RuntimeWarning,
                          stacklevel=3)
            return None
        try:
            with open(png, "rb") as f:
                return read_ppm(f.read())
        finally:
            os.remove(png)


def read_ppm(data: bytes) -> np.ndarray:
    """Decodes a binary PPM (P6, 8 bits), what ``arena view --screenshot X.ppm`` writes,
    to an array (H, W, 3) of uint8."""
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    if m is None:
        raise ValueError("not an 8-bit binary PPM (P6) file")
    w, h = int(m[1]), int(m[2])
    return np.frombuffer(data, np.uint8, w * h * 3, m.end()).reshape(h, w, 3).copy()


# -- Gymnasium: one slot ------------------------------------------------------------------

class ArenaEnv(gymnasium.Env):
    """One agent slot of a scenario as a ``gymnasium.Env``; built-in bots play the others.

    ``agents``: the number of slots (default: the scenario's); the env plays the first,
    the scenario's bot the rest. Other keywords are ArenaParallelEnv's (observation,
    k, ticks, arena, render_mode, ...). Observations, actions, rewards and seeding are
    ArenaParallelEnv's for that one agent.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(self, scenario: str = "foraging", agents: int | None = None, **kw):
        n = agents or scenario_info(kw.get("arena"), scenario, None)["agent_count"]
        self.par = ArenaParallelEnv(scenario, n, bots=n - 1, **kw)
        self.agent = self.par.possible_agents[0]
        self.observation_space = self.par.observation_space(self.agent)
        self.action_space = self.par.action_space(self.agent)
        self.render_mode = self.par.render_mode

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        obs, infos = self.par.reset(seed=seed, options=options)
        return obs[self.agent], infos[self.agent]

    def step(self, action):
        obs, rewards, terms, truncs, infos = self.par.step({self.agent: action})
        a = self.agent
        return obs[a], rewards[a], terms[a], truncs[a], infos[a]

    def render(self):
        return self.par.render()

    def close(self):
        self.par.close()

    def raw_observation(self) -> Observation:
        return self.par.raw_observation(self.agent)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def register_envs():
    """Registers ``arena/<Scenario>-v0`` (``arena/Foraging-v0``, ``arena/TeamCapture-v0``,
    ...) for every built-in scenario: ``gymnasium.make("arena/Foraging-v0",
    arena="./arena")``, and ``gymnasium.make_vec(..., num_envs=n)`` through
    :func:`make_vec`. Called when this module is imported."""
    for name in BUILTIN_SCENARIOS:
        env_id = f"arena/{_camel(name)}-v0"
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=ArenaEnv, kwargs={"scenario": name},
                               vector_entry_point=_make_vec_entry,
                               nondeterministic=False, disable_env_checker=True)


def _make_vec_entry(num_envs: int = 1, scenario: str = "foraging", **kw):
    return make_vec(scenario, num_envs, **kw)


# -- vectorised -----------------------------------------------------------------------

class ArenaVectorEnv(gymnasium.vector.VectorEnv):
    """n :class:`ArenaEnv`, each with its own server, stepped together: every env's
    action is sent before any observation is read, so the servers compute at the same
    time. Autoreset is gymnasium's next-step mode: the step after an episode ended
    resets that env (reward 0, not terminated). Actions are a batch of the single
    action space (``Dict`` of arrays) or a list of per-env actions (Decisions too)."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"]}

    def __init__(self, envs: list[ArenaEnv]):
        if not envs:
            raise ValueError("make_vec needs at least one env")
        self.envs = envs
        self.num_envs = len(envs)
        self.single_observation_space = envs[0].observation_space
        self.single_action_space = envs[0].action_space
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.render_mode = envs[0].render_mode
        self._autoreset = np.zeros(self.num_envs, bool)

    def reset(self, *, seed=None, options=None):
        seeds = seed if isinstance(seed, (list, tuple)) else \
            [None if seed is None else int(seed) + i for i in range(self.num_envs)]
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seeds[0] if seeds else None)
            self.action_space.seed(seeds[0])
        for e, s in zip(self.envs, seeds):
            gymnasium.Env.reset(e, seed=s)
            e.par._begin_reset(s)
        out, infos = [], {}
        for i, e in enumerate(self.envs):
            o, inf = e.par._end_reset()
            out.append(o[e.agent])
            infos = self._add_info(infos, inf[e.agent], i)
        self._autoreset[:] = False
        return self._batch(out), infos

    def step(self, actions):
        per_env = actions if isinstance(actions, (list, tuple)) else \
            list(gymnasium.vector.utils.iterate(self.action_space, actions))
        if len(per_env) != self.num_envs:
            raise ValueError(f"{len(per_env)} actions for {self.num_envs} envs")
        for e, a, reset in zip(self.envs, per_env, self._autoreset):  # checked first: nothing sent on a bad one
            if not reset:
                e.par.codec.decode(a, functools.partial(e.par._raw_of, e.agent))
        for e, a, reset in zip(self.envs, per_env, self._autoreset):
            if reset:
                e.par._begin_reset(None)
            else:
                e.par._begin_step({e.agent: a})
        obs, infos = [], {}
        rew = np.zeros(self.num_envs, np.float64)
        term = np.zeros(self.num_envs, bool)
        trunc = np.zeros(self.num_envs, bool)
        for i, (e, reset) in enumerate(zip(self.envs, self._autoreset)):
            a = e.agent
            if reset:
                o, inf = e.par._end_reset()
                obs.append(o[a])
                infos = self._add_info(infos, inf[a], i)
                continue
            o, r, te, tr, inf = e.par._end_step()
            obs.append(o[a])
            rew[i], term[i], trunc[i] = r[a], te[a], tr[a]
            infos = self._add_info(infos, inf[a], i)
        self._autoreset = term | trunc
        return self._batch(obs), rew, term, trunc, infos

    def _batch(self, obs):
        return gymnasium.vector.utils.concatenate(self.single_observation_space, obs,
                                                  gymnasium.vector.utils.create_empty_array(
                                                      self.single_observation_space, self.num_envs))

    def render(self):
        return tuple(e.render() for e in self.envs)

    def close_extras(self, **kwargs):
        for e in self.envs:
            e.close()


def make_vec(scenario: str = "foraging", n: int = 1, **kw) -> ArenaVectorEnv:
    """n ArenaEnv of a scenario (one ``arena serve`` each) as one vector env. Keywords
    are ArenaEnv's."""
    return ArenaVectorEnv([ArenaEnv(scenario, **kw) for _ in range(int(n))])


register_envs()
