"""Benchmark: ArenaParallelEnv steps against a raw protocol client, in the same run.

    go build -o /tmp/arena ./cmd/arena
    PYTHONPATH=sdk/python:../shared/third_party/python python3 sdk/python/tests/bench_env.py \\
        --arena /tmp/arena --scenario foraging --agents 2 --steps 3000 --rounds 3

Both play the same episodes (same seeds, the same decisions: every agent idles, or with
--policy walk walks to a new random point every 20 ticks) against their own `arena
serve`, so the server does the same work; the difference is the client:
the raw one decodes CBOR and answers, the env also encodes each observation into its
space (arrays and action masks) and checks each action. "env" is the default env (the
server computes the arrays, the map is decoded only when needed); "env eager" decodes
every observation's map as it comes (lazy_decode=False). Printed per step: wall time,
CPU time of this process and of the server, and the env's overhead over the raw
client's wall time. Then make_vec(n): env steps per second over n servers. Rounds
alternate raw and env runs; the table shows each one's median round.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import cbor2

from agent_arena_sdk.client import dial, encode_frame, handshake, hello_message
from agent_arena_sdk.env import ArenaParallelEnv, make_vec, scenario_info, server_environment


def server_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def decisions(policy, ids, bounds, steps, seed):
    """The decisions of every step: idle, or (walk) a move_to to a random point every 20 ticks."""
    rng = random.Random(seed)
    out = []
    for t in range(steps):
        step = {}
        for i, a in enumerate(ids):
            if policy == "walk" and (t + 5 * i) % 20 == 0:
                step[a] = {"tool": "move_to", "params": {
                    "target": [rng.uniform(bounds[0], bounds[2]), 0, rng.uniform(bounds[1], bounds[3])]}}
            else:
                step[a] = {"tool": "idle"}
        out.append(step)
    return out


def raw_run(arena, scenario, agents, steps, seed, plan):
    """The minimal protocol client of docs/protocol.md: hello, then idle every tick."""
    d = tempfile.mkdtemp(prefix="arena-bench-")
    addr = "unix:" + os.path.join(d, "a.sock")
    p = subprocess.Popen([arena, "serve", "--scenario", scenario, "--agents", str(agents), "--seed", str(seed),
                          "--secret-seed", str(seed), "--ticks", str(steps + 1), "--decision-timeout", "1h",
                          "--listen", addr, "--out", os.path.join(d, "out")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=server_environment(agents))  # as the env starts its server
    ids = scenario_info(arena, scenario, agents)["agent_ids"]
    conns = []
    for a in ids:
        s = dial(addr, 10, retry_for=30)
        handshake(s, hello_message(a), 30)
        conns.append((s, s.makefile("rb", buffering=1 << 16)))

    def read(f):
        while True:
            n = int.from_bytes(f.read(4), "big")
            m = cbor2.loads(f.read(n))
            if m["type"] in ("observation", "episode_end"):
                return m

    ticks = [read(f)["tick"] for _, f in conns]
    t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu(p.pid)
    for step in plan:
        for (s, _), t, a in zip(conns, ticks, ids):
            s.sendall(encode_frame({"type": "decision", "tick": t, **step[a]}))
        ticks = [read(f)["tick"] for _, f in conns]
    out = (time.perf_counter() - t0, time.process_time() - c0, server_cpu(p.pid) - s0)
    for s, f in conns:
        f.close()
        s.close()
    p.kill()
    p.wait()
    subprocess.run(["rm", "-rf", d])
    return out


def env_run(arena, scenario, agents, steps, seed, observation, plan, lazy=True):
    env = ArenaParallelEnv(scenario, agents, arena=arena, ticks=steps + 1, observation=observation,
                           lazy_decode=lazy)
    env.reset(seed=seed)
    pid = env._rt.proc.pid
    t0, c0, s0 = time.perf_counter(), time.process_time(), server_cpu(pid)
    for step in plan:
        env.step(step)
    out = (time.perf_counter() - t0, time.process_time() - c0, server_cpu(pid) - s0)
    env.close()
    return out


def vec_run(arena, scenario, n, steps, seed):
    v = make_vec(scenario, n, arena=arena, ticks=steps + 1)
    v.reset(seed=seed)
    idle = [{"tool": v.envs[0].par.tools.index("idle")}] * n
    t0 = time.perf_counter()
    for _ in range(steps):
        v.step(idle)
    wall = time.perf_counter() - t0
    v.close()
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arena", default=os.environ.get("ARENA_BIN", "arena"))
    ap.add_argument("--scenario", default="foraging")
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--observation", default="dict")
    ap.add_argument("--policy", default="idle", choices=["idle", "walk"])
    ap.add_argument("--vec", default="1,2,4", help="make_vec sizes to measure ('' for none)")
    args = ap.parse_args()
    raw, env, eager = [], [], []
    info = scenario_info(args.arena, args.scenario, args.agents)
    for r in range(args.rounds):
        plan = decisions(args.policy, info["agent_ids"], info["bounds"], args.steps, r)
        raw.append(raw_run(args.arena, args.scenario, args.agents, args.steps, 1 + r, plan))
        env.append(env_run(args.arena, args.scenario, args.agents, args.steps, 1 + r, args.observation, plan))
        eager.append(env_run(args.arena, args.scenario, args.agents, args.steps, 1 + r, args.observation, plan,
                             lazy=False))
    med = lambda runs: tuple(statistics.median(x[i] for x in runs) for i in range(3))  # noqa: E731
    rw = med(raw)[0]
    us = lambda x: f"{x / args.steps * 1e6:8.0f}"  # noqa: E731
    print(f"{args.scenario}, {args.agents} agents, {args.steps} steps, median of {args.rounds} rounds "
          f"(observation={args.observation}, policy={args.policy})")
    print(f"{'client':<12}{'µs/step':>9}{'client CPU':>12}{'server CPU':>12}{'steps/s':>9}{'steps/CPU-s':>13}")
    rows = (("raw", raw), ("env", env), ("env eager", eager))
    for name, runs in rows:
        w, c, sv = med(runs)
        print(f"{name:<12}{us(w):>9}{us(c):>12}{us(sv):>12}{args.steps / w:9.0f}{args.steps / (c + sv):13.0f}")
    for name, runs in rows[1:]:
        ew = med(runs)[0]
        print(f"{name} overhead: {100 * (ew - rw) / rw:.1f}% of the raw client's wall time per step, "
              f"{1e6 * (ew - rw) / args.steps:.0f} µs per step, {1e6 * (ew - rw) / args.steps / args.agents:.0f} µs "
              f"per agent")
    sizes = [int(x) for x in args.vec.split(",") if x]
    for n in sizes:
        w = statistics.median(vec_run(args.arena, args.scenario, n, args.steps // 2, 1 + r) for r in range(args.rounds))
        print(f"make_vec({n}): {n * (args.steps // 2) / w:7.0f} env steps/s (ArenaEnv: one slot each, "
              f"built-in bots in the others, idle actions)")


if __name__ == "__main__":
    sys.exit(main())
