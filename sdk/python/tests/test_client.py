import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from arena_server import REPO, Server, ServerTest, arena_binary

from agent_arena_sdk import (ArenaError, Client, ConnectionLost, Decision, Entity, Observation, Record, connect, query,
                             run)
from agent_arena_sdk.client import Roster
import capture
import crafter
import forager


class TypesTest(unittest.TestCase):
    def test_observation_access(self):
        o = Observation.wrap({
            "tick": 3, "position": [1, 0, 2], "extra": {"a": 1}, "last_action_result": None,
            "nearby_stations": [{"name": "F", "type": "station", "station_type": "furnace", "distance": 1.0,
                                 "position": [0, 0, 0]}],
            "available_recipes": {"ingot": {"inputs": {"ore": 1}, "station_type": "furnace"}},
            "messages": [{"from": "a", "content": "hi", "tick": 1}], "inventory": {"ore": 1},
            "components": {"feed": {"text": "x", "posts": []}}})
        self.assertEqual(o.tick, 3)
        self.assertEqual(o.position.z, 2)
        self.assertEqual(o.extra.a, 1)
        self.assertIsNone(o.last_action_result)
        self.assertIsNone(o.query_result)
        st = o.nearby_stations[0]
        self.assertTrue(st.type == "station" and st.type == o.available_recipes["ingot"].station_type)
        self.assertEqual(o.available_recipes.get("ingot").inputs.get("ore"), 1)
        self.assertEqual(o.messages[0].from_, "a")
        self.assertEqual(o.components["feed"]["text"], "x")
        self.assertEqual(o.inventory.get("wood", 0), 0)
        with self.assertRaises(AttributeError):
            o.no_such_field
        d = Decision("move_to", {"target": o.position}, reasoning="r")
        self.assertEqual(d.to_message(3), {"type": "decision", "tick": 3, "tool": "move_to",
                                           "params": {"target": [1, 0, 2]}, "reasoning": "r"})
        self.assertEqual(Decision.idle().tool, "idle")


def passed(end):
    return end is not None and end.results["passed"]


class ExamplesTest(ServerTest):
    def test_forager_passes(self):
        s = self.serve("--scenario", "foraging", "--agents", "1", "--seed", "1")
        end = run(forager.Forager(), s.address)
        self.assertTrue(end.final)
        self.assertEqual(end.reason, "completed")
        self.assertTrue(passed(end), end)

    def test_crafter_passes(self):
        s = self.serve("--scenario", "crafting", "--agents", "1", "--seed", "1")
        end = run(crafter.Crafter(), s.address)
        self.assertTrue(passed(end), end)

    def test_capture_plays_to_the_end(self):
        s = self.serve("--scenario", "team_capture", "--bots", "3", "--seed", "1")
        end = run(capture.Capturer(), s.address)
        self.assertTrue(end.final)
        self.assertIn(end.reason, ("completed", "time_limit"))

    def test_callable_agent_and_episodes(self):
        s = self.serve("--scenario", "foraging", "--agents", "1", "--episodes", "2", "--ticks", "20")
        starts, ends = [], []

        class A:
            def decide(self, obs):
                return None  # idle

            def on_episode_start(self, m):
                starts.append(m.episode)

            def on_episode_end(self, m):
                ends.append(m.final)

        end = run(A(), s.address)
        self.assertEqual(starts, [1, 2])
        self.assertEqual(ends, [False, True])
        self.assertEqual(end.episode, 2)


class ProtocolTest(ServerTest):
    def test_wrong_token_is_unauthorized(self):
        import json, os, tempfile
        d = tempfile.mkdtemp()
        path = os.path.join(d, "tokens.json")
        with open(path, "w") as f:
            json.dump({"agent_001": "secret"}, f)
        s = self.serve("--scenario", "foraging", "--agents", "1", "--tokens", path)
        with self.assertRaises(ArenaError) as cm:
            connect(s.address, token="wrong")
        self.assertEqual(cm.exception.code, "UNAUTHORIZED")
        self.assertTrue(cm.exception.fatal)
        self.assertIn("token", cm.exception.message)
        c = connect(s.address, token="secret")
        self.assertEqual(c.agent_id, "agent_001")
        c.close()

    def test_answers_the_servers_pings(self):
        # Its own pings off, the client stays connected only by answering
        # the server's: a client silent for 0.15 s is dropped.
        import time
        s = self.serve("--scenario", "foraging", "--agents", "2", "--ping-interval", "50ms", "--pong-wait", "100ms")
        c = connect(s.address, keepalive=0)
        self.addCleanup(c.close)
        time.sleep(1.0)
        r = c.query_inventory()
        self.assertGreater(r.capacity, 0)

    def test_no_slot(self):
        s = self.serve("--scenario", "foraging", "--agents", "1")
        c = connect(s.address)
        self.addCleanup(c.close)
        with self.assertRaises(ArenaError) as cm:
            connect(s.address)
        self.assertEqual(cm.exception.code, "NO_SLOT")

    def test_bad_tick_is_reported(self):
        s = self.serve("--scenario", "foraging", "--agents", "1", "--ticks", "5")
        errors = []
        c = Client(s.address, on_error=errors.append)
        sent = []

        def agent(obs):
            if not sent:
                sent.append(1)
                c.decide(obs.tick + 100, Decision.idle())
            return Decision.idle()

        c.run(agent)
        self.assertTrue(any(e.code == "UNKNOWN_TICK" for e in errors), errors)
        self.assertIn("UNKNOWN_TICK", [e.code for e in c.errors])

    def test_queries_and_their_limit(self):
        s = self.serve("--scenario", "foraging", "--agents", "1", "--ticks", "3")
        seen = {}

        def agent(obs):
            if seen:
                return Decision.idle()
            with self.assertRaises(ArenaError) as cm:
                query("move_to", target=[1, 0, 1])
            seen["not_a_query"] = cm.exception.code
            for _ in range(9):
                r = query("query_world", radius=10)
                self.assertIn("entities", r["query_result"])
            with self.assertRaises(ArenaError) as cm:
                query("query_inventory")
            seen["limit"] = cm.exception.code
            return Decision.idle()

        run(agent, s.address)
        self.assertEqual(seen, {"not_a_query": "NOT_A_QUERY", "limit": "LIMIT_EXCEEDED"})

    def test_reconnects_after_the_connection_drops(self):
        # A second, slow client keeps the lockstep world from racing to its time limit
        # while the first one is away.
        s = self.serve("--scenario", "foraging", "--agents", "2", "--seed", "1")
        other = Client(s.address, slot="agent_002")
        t = threading.Thread(target=other.run, args=(lambda obs: time.sleep(0.005),), daemon=True)
        t.start()
        c = Client(s.address, slot="agent_001", backoff=0.05)
        f = forager.Forager()
        cuts = []

        def agent(obs):
            if obs.tick in (5, 40) and obs.tick not in cuts:
                cuts.append(obs.tick)
                c._session.sock.shutdown(2)  # the connection goes away mid-episode
            return f.decide(obs)

        end = c.run(agent)
        self.assertEqual(cuts, [5, 40])
        self.assertEqual(c._reconnects, 2)
        mine = [a for a in end.results["agents"] if a["id"] == "agent_001"][0]
        self.assertGreaterEqual(mine["metrics"]["resources_collected"], 5, end)
        t.join(5)

    def test_server_gone_gives_up(self):
        s = self.serve("--scenario", "foraging", "--agents", "1", "--ticks", "1000")
        c = Client(s.address, backoff=0.02, max_reconnects=2)

        def agent(obs):
            if obs.tick == 2:
                s.proc.kill()
            return Decision.idle()

        with self.assertRaises(ConnectionLost):
            c.run(agent)


DYING = {
    "name": "dying", "description": "Agent one walks into lava and dies.",
    "size": [40, 20], "tick_rate": 10,
    "hazards": [{"name": "Lava1", "type": "lava", "position": [-6, 0, 0], "radius": 2, "entry_damage": 0,
                 "damage_per_second": 250}],
    "agents": {"count": 3, "max": 3, "spawns": [[-10, 0, 0], [0, 0, 0], [10, 0, 0]]},
    "objective": {"description": "Survive.", "success_metrics": {"alive": {"target": 1, "weight": 1}},
                  "time_limit": 16},
}


class RosterTest(ServerTest):
    def test_track_rebuilds_agent_ids(self):
        r = Roster()
        r.track({"type": "welcome", "agent_ids": ["a", "b", "c"]})
        o1 = {"type": "observation", "observation": {}}
        r.track(o1)
        self.assertEqual(o1["observation"]["agent_ids"], ["a", "b", "c"])
        o2 = {"type": "observation", "agents_left": ["b", "x"], "observation": {}}
        r.track(o2)
        self.assertEqual(o2["observation"]["agent_ids"], ["a", "c"])
        self.assertEqual(o1["observation"]["agent_ids"], ["a", "b", "c"], "each observation has its own list")
        r.track({"type": "observation", "observation": {"agent_ids": ["c"]}})  # the whole roster replaces it
        o3 = {"type": "observation", "observation": {}}
        r.track(o3)
        self.assertEqual(o3["observation"]["agent_ids"], ["c"])
        r.track({"type": "episode_start", "agent_ids": ["a", "b"]})
        o4 = {"type": "observation", "agents_left": ["a"], "observation": {}}
        r.track(o4)
        self.assertEqual(o4["observation"]["agent_ids"], ["b"])

    def test_agent_ids_match_the_full_roster_while_agents_die(self):
        import json, socket
        from agent_arena_sdk.client import encode_frame, read_frame
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "dying.json")
        with open(path, "w") as f:
            json.dump(DYING, f)
        s = self.serve("--scenario", path, "--episodes", "2")
        truth, seen = {}, {}

        def full_roster_client():  # agent_003 asks for agent_ids in every observation
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(s.sock)
            sock.sendall(encode_frame({"type": "hello", "protocol": 1, "role": "agent", "agent": "agent_003",
                                       "full_roster": True}))
            episode = 0
            while True:
                m = read_frame(sock)
                if m["type"] == "episode_start":
                    episode = m["episode"]
                elif m["type"] == "observation":
                    truth[(episode, m["tick"])] = m["observation"]["agent_ids"]
                    sock.sendall(encode_frame({"type": "decision", "tick": m["tick"], "tool": "idle"}))
                elif m["type"] == "episode_end" and m.get("final"):
                    sock.close()
                    return

        class Walker:  # agent_001 walks into the lava
            def decide(self, obs):
                if obs.tick == 0:
                    return Decision("move_to", {"target_x": -6, "target_z": 0})
                return None

        class Watcher:  # agent_002 records what the SDK gives it
            episode = 0

            def on_episode_start(self, m):
                self.episode = m.episode

            def decide(self, obs):
                seen[(self.episode, obs.tick)] = list(obs.agent_ids)

        threads = [threading.Thread(target=full_roster_client), threading.Thread(target=run, args=(Walker(), s.address),
                                                                                  kwargs={"slot": "agent_001"})]
        for t in threads:
            t.start()
        c = Client(s.address, slot="agent_002")
        c.run(Watcher())
        for t in threads:
            t.join(30)
        self.assertEqual(len(set(map(tuple, truth.values()))), 2, "agent_001 dies: two rosters")
        self.assertGreater(len(seen), 20)
        for k, ids in seen.items():
            self.assertEqual(ids, truth[k], k)


class PitfallsTest(ServerTest):
    """What a new user tripped over (issue 17)."""

    def test_payload_keys_win_over_dict_methods(self):
        s = self.serve("--scenario", "crafting", "--agents", "1", "--ticks", "3")
        got = {}

        def agent(obs):
            if not got:
                got["details"] = query("query_inventory")["inventory_details"]
            return None

        run(agent, s.address)
        d = got["details"]
        self.assertEqual(d.items, [])  # the payload's list, not dict.items
        self.assertEqual(d.capacity, 20)  # crafting.json: inventory_capacity
        self.assertEqual(sorted(dict.keys(d)), ["capacity", "items", "used"])
        r = Record.wrap({"capacity": 1})
        self.assertEqual(list(r.items()), [("capacity", 1)])  # no such key: the dict method
        self.assertEqual(r.get("capacity"), 1)

    def test_entity_type_equality_and_hashing_agree(self):
        st = Entity.wrap({"name": "Furnace1", "type": "station", "station_type": "furnace", "position": [0, 0, 0]})
        self.assertTrue(st.type == "station" and st.type == "furnace" and st.kind == "furnace")
        with self.assertRaisesRegex(TypeError, r"use str\(entity.type\) or entity.kind"):
            {st.type}
        self.assertEqual({str(st.type), st.kind}, {"station", "furnace"})
        ag = Entity.wrap({"name": "agent_002", "type": "agent", "position": [0, 0, 0]})
        self.assertEqual({ag.type}, {"agent"})  # no kind: an ordinary string
        self.assertEqual(hash(ag.type), hash("agent"))

    def test_run_takes_the_slot_option(self):
        s = self.serve("--scenario", "foraging", "--agents", "2", "--ticks", "3")
        seen = set()
        other = threading.Thread(target=run, args=(lambda obs: None, s.address), kwargs={"slot": "agent_001"},
                                 daemon=True)
        other.start()
        run(lambda obs: seen.add(obs.agent_id), s.address, slot="agent_002")
        other.join(10)
        self.assertEqual(seen, {"agent_002"})

    def test_first_connect_waits_for_the_server_and_names_the_socket(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d, True)
        sock = os.path.join(d, "late.sock")
        with self.assertRaisesRegex(ConnectionError, f"cannot connect to unix:{sock}: no socket file"):
            Client("unix:" + sock, connect_retry=0.1).connect()
        arena_binary()  # built before the clock starts
        late = []
        t = threading.Timer(0.5, lambda: late.append(Server("--scenario", "foraging", "--agents", "1",
                                                              "--ticks", "2", "--listen", "unix:" + sock)))
        t.start()
        try:
            end = run(lambda obs: None, "unix:" + sock)  # retries the first connect for 5 s
            self.assertEqual(end.reason, "time_limit")
        finally:
            t.join()
            for srv in late:
                srv.stop()

    def test_the_sdk_works_without_gymnasium(self):
        code = ("import sys; sys.modules['gymnasium'] = sys.modules['numpy'] = None\n"
                "import agent_arena_sdk\n"
                "from agent_arena_sdk import Decision, run, Client, LLMAgent\n"
                "try:\n"
                "    agent_arena_sdk.ArenaParallelEnv\n"
                "except ImportError as e:\n"
                "    print('ImportError', e)\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "sdk", "python"))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("ImportError agent_arena_sdk.ArenaParallelEnv needs numpy and gymnasium", p.stdout)


if __name__ == "__main__":
    unittest.main()
