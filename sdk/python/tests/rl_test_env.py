"""The reinforcement-learning environments, checked with PettingZoo's and Gymnasium's own
test code. Needs numpy, gymnasium and pettingzoo (test.sh puts ../shared/third_party/python
on PYTHONPATH); run as `python3 -m unittest discover -s sdk/python/tests -p 'rl_test*.py'`."""

import gc
import json
import os
import shutil
import subprocess
import sys
import unittest
import warnings

from arena_server import REPO, arena_binary

import gymnasium
import numpy as np
from gymnasium.utils.env_checker import check_env
from pettingzoo import ParallelEnv
from pettingzoo.test import parallel_api_test, parallel_seed_test

import forager
from agent_arena_sdk import ArenaError, ConnectionLost, Decision
from agent_arena_sdk import env as arena_env
from agent_arena_sdk.env import ArenaEnv, ArenaParallelEnv, make_vec


def penv(scenario="foraging", agents=None, **kw):
    return ArenaParallelEnv(scenario, agents, arena=arena_binary(), **kw)


def masked_actions(env, obs, infos):
    out = {}
    for a in env.agents:
        mask = obs[a]["action_mask"] if env.observation_mode == "dict" else infos[a]["action_mask"]
        out[a] = env.action_space(a).sample(mask=mask)
    return out


def assert_same_encoding(test, got, want, where):
    """Two encoded observations are equal: integers exactly, floats to float32's last
    bit or so (the server's cos and sin may differ from Python's in the last place)."""
    if isinstance(want, dict):
        test.assertEqual(sorted(got), sorted(want), where)
        for k in want:
            assert_same_encoding(test, got[k], want[k], f"{where} [{k}]")
    elif isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            assert_same_encoding(test, g, w, where)
    elif isinstance(want, (np.ndarray, np.generic)):
        g, w = np.asarray(got), np.asarray(want)
        test.assertEqual((g.dtype, g.shape), (w.dtype, w.shape), where)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)
    else:
        test.assertEqual(got, want, where)


class PettingZooTest(unittest.TestCase):
    def test_pettingzoo_api_and_seed_tests(self):
        cases = [("foraging", {}), ("crafting", {"agents": 2}), ("team_capture", {}),
                 ("market", {"observation": "text"})]
        for scenario, kw in cases:
            with self.subTest(scenario=scenario):
                env = penv(scenario, ticks=30, **kw)
                self.addCleanup(env.close)
                self.assertIsInstance(env, ParallelEnv)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # the API test's complaints are warnings
                    parallel_api_test(env, num_cycles=40)
                # the test went through whole episodes (30 ticks < 40 cycles)
                self.assertEqual(env.agents, [])
                self.assertEqual(env.episode_end["reason"], "time_limit")
                parallel_seed_test(lambda: penv(scenario, ticks=30, **kw))

    def test_agents_and_spaces_before_reset(self):
        env = penv("team_capture")
        self.addCleanup(env.close)
        self.assertEqual(env.possible_agents, ["red_1", "blue_1", "red_2", "blue_2"])
        self.assertEqual((env.agents, env.num_agents, env.max_num_agents), ([], 0, 4))
        self.assertIs(env.unwrapped, env)
        self.assertIsNone(env._rt.proc, "no server before reset")
        for a in env.possible_agents:
            self.assertIs(env.observation_space(a), env.observation_space(a))
            self.assertIs(env.action_space(a), env.action_space(a))
        self.assertIsNot(env.action_space("red_1"), env.action_space("blue_1"))
        with self.assertRaisesRegex(ValueError, "unknown agent 'green_1'"):
            env.action_space("green_1")
        bots = penv("team_capture", bots=3)
        self.addCleanup(bots.close)
        self.assertEqual(bots.possible_agents, ["red_1"])
        self.assertEqual(env.tools[env.action_space("red_1").sample()["tool"]] in env.tools, True)
        self.assertEqual(str(env), "arena_parallel_v0")

    def test_observations_stay_in_their_spaces_and_masks_hold(self):
        # Whole episodes of every built-in scenario with actions drawn under the masks;
        # every observation must be in its space. In the spatial scenarios the masks
        # must keep collect and craft from failing for reasons a mask can see.
        cases = [(s, {}) for s in arena_env.BUILTIN_SCENARIOS] + [("market", {"observation": "dict"})]
        maskable = {"NOT_FOUND", "OUT_OF_RANGE", "MISSING_MATERIALS", "INVALID_PARAMS", "INVENTORY_FULL",
                    "NOT_ALLOWED", "UNKNOWN_TOOL"}
        for scenario, kw in cases:
            with self.subTest(scenario=scenario, **kw):
                env = penv(scenario, **kw)
                self.addCleanup(env.close)
                obs, infos = env.reset(seed=3)
                steps, failures, last = 0, {}, None
                while env.agents:
                    for a in env.agents:
                        self.assertTrue(env.observation_space(a).contains(obs[a]), f"{a} at step {steps}")
                        r = env.raw_observation(a).last_action_result
                        if r and not r.success and r.tool in ("collect", "craft"):
                            failures[r.error_code] = failures.get(r.error_code, 0) + 1
                    obs, rewards, terms, truncs, infos = env.step(masked_actions(env, obs, infos))
                    last = obs
                    steps += 1
                for a, o in last.items():
                    self.assertTrue(env.observation_space(a).contains(o), f"final observation of {a}")
                self.assertGreater(steps, 10)
                if env.observation_mode == "dict" and not env.info["components"]:
                    self.assertFalse(set(failures) & maskable, failures)

    def test_the_servers_arrays_equal_the_python_encoding(self):
        # Every built-in scenario, "dict" observations, whole episodes under the masks:
        # each observation the server encoded (rlarrays) equals the Python codec's
        # encoding of the same raw observation, the final ones included.
        for scenario in arena_env.BUILTIN_SCENARIOS:
            with self.subTest(scenario=scenario):
                env = penv(scenario, observation="dict", ticks=80)
                self.addCleanup(env.close)
                seen = []
                encode = env.codec.encode
                env.codec.encode = lambda o, r=None, arrays=None: (seen.append(arrays is not None), encode(o, r, arrays))[1]
                obs, infos = env.reset(seed=5)
                steps = 0
                while True:
                    for a, o in obs.items():
                        assert_same_encoding(self, o, encode(env._raw_of(a)), f"{scenario} {a} step {steps}")
                    if not env.agents:
                        break
                    obs, _, _, _, infos = env.step(masked_actions(env, obs, infos))
                    steps += 1
                self.assertGreater(steps, 10)
                self.assertTrue(all(seen), f"{seen.count(False)} of {len(seen)} observations came without arrays")

    def test_lazy_decoding_changes_nothing(self):
        # Two envs play the same episodes, one decoding every observation as it comes
        # and one (the default) only when something needs the map: the same
        # observations, rewards, ends and raw observations, roster included. The agents
        # walk to the nearest resource and collect it with an entity slot (the map is
        # decoded for that), else take sampled actions.
        slots = 0
        for scenario in ("foraging", "crafting", "team_capture"):
            with self.subTest(scenario=scenario):
                lazy = penv(scenario, observation="dict", ticks=60)
                eager = penv(scenario, observation="dict", ticks=60, lazy_decode=False)
                self.addCleanup(lazy.close)
                self.addCleanup(eager.close)
                self.assertTrue(lazy._lazy)
                self.assertFalse(eager._lazy)
                (lo, li), (eo, ei) = lazy.reset(seed=9), eager.reset(seed=9)
                tools = lazy.codec.tools
                undecoded = step = 0
                while True:
                    assert_same_encoding(self, lo, eo, f"{scenario} step {step}")
                    self.assertEqual(li, ei)
                    if not lazy.agents:
                        break
                    la, ea = masked_actions(lazy, lo, li), masked_actions(eager, eo, ei)
                    for a in la:
                        assert_same_encoding(self, la[a], ea[a], f"{scenario} action of {a}")
                        allowed = lo[a]["action_mask"]["tool"]
                        if "collect" in tools and allowed[tools.index("collect")]:
                            la[a]["tool"] = ea[a]["tool"] = tools.index("collect")
                            slots += 1
                        elif step % 10 == 0:
                            near = lazy.raw_observation(a).nearby_resources
                            if near:
                                la[a] = ea[a] = {"tool": "move_to", "params": {"target": list(near[0].position)}}
                    lo, lr, lt, ltr, li = lazy.step(la)
                    eo, er, et, etr, ei = eager.step(ea)
                    step += 1
                    undecoded += len(lazy._undecoded)
                    self.assertEqual((lr, lt, ltr), (er, et, etr))
                    for a in lazy.agents:
                        self.assertEqual(lazy.raw_observation(a), eager.raw_observation(a))
                        self.assertIn("agent_ids", lazy.raw_observation(a))
                self.assertGreater(undecoded, 0, "every observation was decoded at once")
                self.assertFalse(eager._undecoded)
        self.assertGreater(slots, 0, "no action named an entity slot")

    def test_masks_allow_collect_when_in_range(self):
        # foraging seed 1: agent_001 walks to Berry11 with a Decision; then the mask
        # offers collect and its slot, and the sampled action collects the berry.
        env = penv("foraging", 1, ticks=60)
        self.addCleanup(env.close)
        obs, _ = env.reset(seed=1)
        a = "agent_001"
        collect = env.tools.index("collect")
        self.assertEqual(obs[a]["action_mask"]["tool"][collect], 0)
        berry = env.raw_observation(a).nearby_resources[0]
        obs, *_ = env.step({a: Decision("move_to", {"target": berry.position})})
        for _ in range(30):
            if obs[a]["action_mask"]["tool"][collect]:
                break
            obs, *_ = env.step({a: None})
        mask = obs[a]["action_mask"]
        self.assertEqual(mask["tool"][collect], 1)
        self.assertEqual(mask["collect"]["target_name"].tolist()[:2], [1, 0])
        action = env.action_space(a).sample(mask=mask)
        action["tool"] = collect
        obs, rewards, *_ = env.step({a: action})
        r = env.raw_observation(a).last_action_result
        self.assertEqual((r.tool, r.success), ("collect", True), r)
        self.assertEqual(obs[a]["inventory"][env.codec.items.index("berry")], 1)


class EpisodeTest(unittest.TestCase):
    def test_completed_episode_with_decisions_terminates_and_rewards_sum_to_the_score(self):
        # The forager example as a policy over raw observations: foraging seed 1 is
        # completed at tick 131 (docs/python.md), a termination.
        env = penv("foraging", 1)
        self.addCleanup(env.close)
        obs, _ = env.reset(seed=1)
        saved = forager.query  # its mid-turn scans go through the env
        forager.query = lambda tool, **params: env.query("agent_001", tool, **params)
        self.addCleanup(setattr, forager, "query", saved)
        policy, total, steps = forager.Forager(), 0.0, 0
        while env.agents:
            obs, rewards, terms, truncs, infos = env.step({"agent_001": policy.decide(env.raw_observation("agent_001"))})
            total += rewards["agent_001"]
            steps += 1
        end = infos["agent_001"]["episode_end"]
        self.assertEqual((steps, end["reason"], terms["agent_001"], truncs["agent_001"]), (131, "completed", True, False))
        self.assertTrue(end["passed"])
        self.assertAlmostEqual(total, end["score"], places=9)
        self.assertAlmostEqual(total, env.episode_end["results"]["agents"][0]["score"], places=9)
        final = obs["agent_001"]
        self.assertTrue(env.observation_space("agent_001").contains(final))
        self.assertEqual(final["self"][env.codec.SELF.index("tick")], 131)
        self.assertEqual(final["self"][env.codec.SELF.index("score")], np.float32(end["score"]))

    def test_time_limit_truncates_and_final_observation_is_real(self):
        env = penv("foraging", 2, ticks=25)
        self.addCleanup(env.close)
        obs, infos = env.reset(seed=4)
        totals = dict.fromkeys(env.agents, 0.0)
        while env.agents:
            obs, rewards, terms, truncs, infos = env.step(masked_actions(env, obs, infos))
            for a, r in rewards.items():
                totals[a] += r
        for a in env.possible_agents:
            self.assertEqual((terms[a], truncs[a]), (False, True))
            self.assertIsNotNone(obs[a])
            self.assertEqual(obs[a]["self"][env.codec.SELF.index("tick")], 25)
            self.assertAlmostEqual(totals[a], infos[a]["episode_end"]["score"], places=5)
        with self.assertRaisesRegex(RuntimeError, "call reset"):
            env.step({})


class SeedingTest(unittest.TestCase):
    def trajectory(self, env, seed, steps=15):
        obs, infos = env.reset(seed=seed)
        out = [(env.episode_seed, obs)]
        for _ in range(steps):
            obs, rewards, *_ = env.step({a: env.action_space(a).sample() for a in env.agents})
            out.append((obs, rewards))
        return out

    def same(self, x, y):
        return gymnasium.utils.env_checker.data_equivalence(x, y, exact=True)

    def test_same_seed_same_episode_and_fresh_seeds_without_one(self):
        e1, e2 = penv("foraging", 2), penv("foraging", 2)
        self.addCleanup(e1.close)
        self.addCleanup(e2.close)
        self.assertTrue(self.same(self.trajectory(e1, 5), self.trajectory(e2, 5)))
        self.assertFalse(self.same(self.trajectory(e1, 5)[0][0], self.trajectory(e2, 6)[0][0]))
        e1.reset()
        e2.reset()
        self.assertNotEqual(e1.episode_seed, e2.episode_seed, "reset() after a seeded reset must draw a new seed")
        f1, f2 = penv("foraging", 2), penv("foraging", 2)
        self.addCleanup(f1.close)
        self.addCleanup(f2.close)
        f1.reset()
        f2.reset()
        self.assertNotEqual(f1.episode_seed, f2.episode_seed, "reset() draws a fresh seed, not always the same")

    def test_reset_after_an_episode_continues_reproducibly(self):
        seeds = []
        for _ in range(2):
            env = penv("foraging", 1, ticks=5)
            self.addCleanup(env.close)
            env.reset(seed=9)
            proc = env._rt.proc
            while env.agents:
                env.step({"agent_001": None})
            first = env.episode_seed
            obs, _ = env.reset()
            self.assertIs(env._rt.proc, proc, "the server's next episode, not a new server")
            self.assertNotEqual(env.episode_seed, first)
            seeds.append((first, env.episode_seed, obs))
        self.assertTrue(self.same(seeds[0], seeds[1]))

    def test_the_secret_seed_follows_reset_seed(self):
        # The role deal comes from the secret seed: the same seed deals the same roles.
        def roles(seed):
            env = penv("role_game")
            try:
                env.reset(seed=seed)
                return [env.raw_observation(a).components["roles"]["you"]["role"] for a in env.agents]
            finally:
                env.close()
        r11 = roles(11)
        self.assertEqual(r11, roles(11))
        self.assertNotEqual(r11, roles(12))

    def test_action_spaces_are_seeded_by_reset(self):
        e1, e2 = penv("crafting", 2), penv("crafting", 2)
        self.addCleanup(e1.close)
        self.addCleanup(e2.close)
        e1.reset(seed=21)
        e2.reset(seed=21)
        for a in e1.possible_agents:
            self.assertTrue(self.same(e1.action_space(a).sample(), e2.action_space(a).sample()))
        self.assertFalse(self.same(e1.action_space("agent_001").sample(), e1.action_space("agent_002").sample()))


class RobustnessTest(unittest.TestCase):
    def test_a_bad_action_raises_before_anything_is_sent(self):
        env = penv("foraging", 2)
        self.addCleanup(env.close)
        env.reset(seed=1)
        good = Decision.idle()
        bad = [({"agent_001": good, "agent_002": {"tool": 99}}, ValueError, "tool index"),
               ({"agent_001": good, "agent_002": Decision("fly")}, ValueError, "unknown tool 'fly'"),
               ({"agent_001": good, "agent_002": {"tool": env.tools.index("move_to")}}, ValueError, "move_to"),
               ({"agent_001": good, "agent_002": {"tool": env.tools.index("move_to"),
                                                  "move_to": {"target": [5, 0], "speed": [0]}}}, ValueError, "not in"),
               ({"agent_001": good, "agent_002": 3}, TypeError, "an action is"),
               ({"agent_001": good, "nobody": good}, ValueError, "not playing")]
        for actions, exc, msg in bad:
            with self.assertRaisesRegex(exc, msg):
                env.step(actions)
        # Nothing was sent: had agent_001's idle gone out, this step's decision would be
        # refused as a duplicate and raise ArenaError.
        obs, *_ = env.step({"agent_001": Decision("move_to", {"target": [3, 0, 3]}), "agent_002": good})
        self.assertEqual(env.raw_observation("agent_001").tick, 1)
        self.assertEqual(env.raw_observation("agent_001").last_action_result.tool, "move_to")

    def test_server_errors_raise(self):
        env = penv("foraging", 1)
        self.addCleanup(env.close)
        env.reset(seed=1)
        env._rt.slots["agent_001"].tick = 7  # a decision for a tick the agent was not sent
        with self.assertRaises(ArenaError) as cm:
            env.step({"agent_001": None})
        self.assertEqual(cm.exception.code, "UNKNOWN_TICK")

    def test_cleanup_on_close_garbage_collection_crash_and_context(self):
        env = penv("foraging", 1)
        env.reset(seed=1)
        proc, folder = env._rt.proc, env._rt.dir
        env.close()
        self.assertIsNotNone(proc.poll())
        self.assertFalse(os.path.exists(folder))
        env.close()  # twice is fine

        env = penv("foraging", 1)
        env.reset(seed=1)
        proc, folder = env._rt.proc, env._rt.dir
        del env
        gc.collect()
        proc.wait(5)
        self.assertFalse(os.path.exists(folder))

        with penv("foraging", 1) as env:
            env.reset(seed=1)
            proc, folder = env._rt.proc, env._rt.dir
        self.assertIsNotNone(proc.poll())
        self.assertFalse(os.path.exists(folder))

        env = penv("foraging", 1)
        self.addCleanup(env.close)
        env.reset(seed=1)
        proc, folder = env._rt.proc, env._rt.dir
        proc.kill()
        proc.wait()
        with self.assertRaisesRegex(ConnectionLost, "arena serve exited"):
            env.step({"agent_001": None})
        self.assertFalse(os.path.exists(folder))
        env.reset(seed=1)  # usable again
        self.assertEqual(env.agents, ["agent_001"])

    def test_a_server_that_cannot_start_is_reported(self):
        env = penv("foraging", 1, extra_args=("--mode", "sideways"))
        self.addCleanup(env.close)
        with self.assertRaisesRegex(RuntimeError, "sideways"):
            env.reset(seed=1)
        with self.assertRaisesRegex(ValueError, "no-such-scenario"):
            penv("no-such-scenario")


class RenderAndStateTest(unittest.TestCase):
    def test_render_without_a_display_warns_and_returns_none(self):
        env = penv("foraging", 1, render_mode="rgb_array")
        self.addCleanup(env.close)
        env.reset(seed=1)
        saved = os.environ.pop("DISPLAY", None)
        try:
            with self.assertWarnsRegex(RuntimeWarning, "no display"):
                self.assertIsNone(env.render())
        finally:
            if saved is not None:
                os.environ["DISPLAY"] = saved

    def test_render_rgb_array(self):
        # A frame of the viewer: team_capture's four agents in red and blue on green
        # hills. Needs a display: test.sh runs these tests under xvfb-run.
        code = ("import sys; sys.path[:0] = %r\n"
                "from agent_arena_sdk.env import ArenaParallelEnv\n"
                "import numpy as np\n"
                "with ArenaParallelEnv('team_capture', arena=%r, render_mode='rgb_array') as env:\n"
                "    env.reset(seed=1)\n"
                "    img = env.render()\n"
                "    print(img.shape, img.dtype, int(img.std() > 10))\n") % (sys.path, arena_binary())
        cmd = [sys.executable, "-c", code]
        if not os.environ.get("DISPLAY"):
            xvfb = shutil.which("xvfb-run")
            self.assertIsNotNone(xvfb, "rendering needs a display or xvfb-run (apt-get install xvfb)")
            cmd = [xvfb, "-a"] + cmd
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip().splitlines()[-1], "(480, 640, 3) uint8 1")

    def test_state(self):
        env = penv("foraging", 2)
        self.addCleanup(env.close)
        obs, _ = env.reset(seed=2)
        s = env.state()
        self.assertEqual(s.shape, env.state_space.shape)
        half = s.shape[0] // 2
        np.testing.assert_array_equal(
            s[:half], gymnasium.spaces.flatten(env.observation_space("agent_001"), obs["agent_001"]))
        text = penv("market")
        self.addCleanup(text.close)
        with self.assertRaisesRegex(NotImplementedError, "observation='dict'"):
            text.state()


class GymnasiumTest(unittest.TestCase):
    def test_check_env(self):
        for env_id in ("arena/Foraging-v0", "arena/TeamCapture-v0"):
            with self.subTest(env_id=env_id):
                env = gymnasium.make(env_id, arena=arena_binary(), ticks=20)
                self.addCleanup(env.close)
                self.assertIsInstance(env.unwrapped, ArenaEnv)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    # rendering is checked too where there is a display (test.sh: Xvfb)
                    check_env(env.unwrapped, skip_render_check=env_id != "arena/Foraging-v0"
                              or not os.environ.get("DISPLAY"))
                self.assertEqual([str(w.message) for w in caught], [])
        self.assertEqual(env.unwrapped.par.possible_agents, ["red_1"])  # the others are bots

    def test_every_builtin_scenario_is_registered(self):
        out = subprocess.run([arena_binary(), "scenarios", "--format", "json"], capture_output=True, text=True,
                             check=True).stdout
        self.assertEqual(arena_env.BUILTIN_SCENARIOS, sorted(s["name"] for s in json.loads(out)))
        for name in arena_env.BUILTIN_SCENARIOS:
            spec = gymnasium.spec(f"arena/{''.join(p.capitalize() for p in name.split('_'))}-v0")
            self.assertEqual(spec.kwargs, {"scenario": name})

    def test_make_vec(self):
        v = make_vec("foraging", 2, arena=arena_binary(), ticks=10)
        self.addCleanup(v.close)
        obs, infos = v.reset(seed=1)
        self.assertEqual(obs["self"].shape, (2, len(v.envs[0].par.codec.SELF)))
        self.assertTrue(v.observation_space.contains(obs))
        ends, rewards = [], np.zeros(2)
        for step in range(1, 23):
            obs, r, term, trunc, infos = v.step(v.action_space.sample())
            rewards += r
            self.assertTrue(v.observation_space.contains(obs))
            if trunc.any():
                ends.append(step)
                self.assertTrue(trunc.all())
                np.testing.assert_allclose(rewards, infos["episode_end"]["score"])
                rewards[:] = 0
        self.assertEqual(ends, [10, 21], "10 ticks, then the autoreset step, then 10 more")
        g = gymnasium.make_vec("arena/Crafting-v0", num_envs=2, arena=arena_binary(), ticks=5)
        self.addCleanup(g.close)
        obs, _ = g.reset(seed=1)
        self.assertEqual(obs["inventory"].shape[0], 2)


if __name__ == "__main__":
    unittest.main()
