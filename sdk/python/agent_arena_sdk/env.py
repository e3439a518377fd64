"""ArenaParallelEnv: a PettingZoo-Parallel-style environment over `arena serve` (lockstep).

No pettingzoo import: the class follows its ParallelEnv API (reset, step, possible_agents,
agents, close) so it can be wrapped or used directly.

    env = ArenaParallelEnv(scenario="foraging", agents=2, arena="arena")
    obs, infos = env.reset(seed=1)
    while env.agents:
        actions = {a: Decision.idle() for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)
    env.close()

Observations are :class:`~agent_arena_sdk.Observation`; actions are Decisions (or dicts,
or None for idle). The reward is the change of the agent's score since the last step.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

from .client import Client, ConnectionLost


class ArenaParallelEnv:
    metadata = {"name": "arena_parallel_v0", "render_modes": []}

    def __init__(self, scenario: str = "foraging", agents: int | None = None, *, arena: str = "arena",
                 ticks: int | None = None, decision_timeout: str = "60s", extra_args: tuple = (),
                 step_timeout: float = 60.0):
        self.scenario, self.n_agents, self.arena, self.ticks = scenario, agents, arena, ticks
        self.decision_timeout, self.extra_args, self.step_timeout = decision_timeout, tuple(extra_args), step_timeout
        self.possible_agents: list[str] = []
        self.agents: list[str] = []
        self._proc = None
        self._dir = None
        self._clients: dict[str, Client] = {}
        self._ticks: dict[str, int] = {}
        self._scores: dict[str, float] = {}

    def _start(self, seed):
        self.close()
        self._dir = tempfile.mkdtemp(prefix="arena-env-")
        sock = os.path.join(self._dir, "arena.sock")
        args = [self.arena, "serve", "--scenario", self.scenario, "--listen", "unix:" + sock, "--seed", str(seed),
                # reset(seed) reproduces the whole episode, hidden deals included
                "--secret-seed", str(seed), "--decision-timeout", self.decision_timeout, "--out", os.path.join(self._dir, "out")]
        if self.n_agents:
            args += ["--agents", str(self.n_agents)]
        if self.ticks:
            args += ["--ticks", str(self.ticks)]
        args += list(self.extra_args)
        self._log = open(os.path.join(self._dir, "serve.log"), "wb")
        self._proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("arena serve did not start; see " + os.path.join(self._dir, "serve.log"))
            time.sleep(0.02)
        # Connect one client per slot until the server has no free slot.
        first = Client("unix:" + sock, max_reconnects=-1)
        first.connect()
        ids = list(first.welcome.get("agent_ids") or [])
        self._clients = {first.agent_id: first}
        while True:
            c = Client("unix:" + sock, max_reconnects=-1)
            try:
                c.connect()
            except Exception:
                break
            self._clients[c.agent_id] = c
        self.possible_agents = sorted(self._clients) if not ids else [a for a in ids if a in self._clients]
        self.agents = list(self.possible_agents)

    def _next_obs(self, aid):
        c = self._clients[aid]
        while True:
            m = c.recv(timeout=self.step_timeout)
            if m is None:
                raise TimeoutError(f"{aid}: no observation within {self.step_timeout}s")
            if m.type == "observation":
                self._ticks[aid] = m.tick
                return m.observation, None
            if m.type == "episode_end":
                return None, m

    def reset(self, seed: int | None = None, options: dict | None = None):
        self._start(1 if seed is None else seed)
        obs, infos = {}, {}
        for aid in self.agents:
            o, _ = self._next_obs(aid)
            obs[aid], infos[aid] = o, {}
            self._scores[aid] = float(o.get("score", 0.0))
        return obs, infos

    def step(self, actions: dict):
        for aid in self.agents:
            self._clients[aid].decide(self._ticks[aid], actions.get(aid))
        obs, rewards, terms, truncs, infos = {}, {}, {}, {}, {}
        for aid in list(self.agents):
            try:
                o, end = self._next_obs(aid)
            except ConnectionLost:
                o, end = None, None
            if o is not None and o.get("alive", True):
                obs[aid] = o
                score = float(o.get("score", 0.0))
                rewards[aid], self._scores[aid] = score - self._scores[aid], score
                terms[aid] = truncs[aid] = False
                infos[aid] = {"tick": o.tick}
                continue
            obs[aid] = o
            final = None
            if end is not None and end.get("results"):
                final = next((a for a in end.results.get("agents", []) if a.get("id") == aid), None)
            score = float(final["score"]) if final else self._scores.get(aid, 0.0)
            rewards[aid], self._scores[aid] = score - self._scores[aid], score
            time_limit = end is not None and end.get("reason") == "time_limit"
            terms[aid], truncs[aid] = not time_limit, time_limit
            infos[aid] = {"episode_end": end}
            self.agents.remove(aid)
        return obs, rewards, terms, truncs, infos

    def close(self):
        for c in self._clients.values():
            c.close()
        self._clients = {}
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
                try:
                    self._proc.wait(5)
                except subprocess.TimeoutExpired:
                    self._proc.kill()
                    self._proc.wait()
            self._log.close()
            self._proc = None
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
