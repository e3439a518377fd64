import unittest

from arena_server import arena_binary

from agent_arena_sdk import ArenaParallelEnv, Decision


class EnvTest(unittest.TestCase):
    def test_lockstep_steps(self):
        env = ArenaParallelEnv("foraging", agents=2, arena=arena_binary(), ticks=5)
        self.addCleanup(env.close)
        obs, infos = env.reset(seed=1)
        self.assertEqual(env.possible_agents, ["agent_001", "agent_002"])
        self.assertEqual(set(obs), set(env.agents))
        self.assertEqual(obs["agent_001"].tick, 0)
        steps = 0
        while env.agents:
            actions = {}
            for a in env.agents:
                r = obs[a].nearby_resources
                actions[a] = Decision("move_to", {"target": r[0].position}) if r else Decision.idle()
            obs, rewards, terms, truncs, infos = env.step(actions)
            steps += 1
            self.assertEqual(set(rewards), set(terms))
            if env.agents:
                self.assertEqual(obs["agent_001"].tick, steps)
        self.assertEqual(steps, 5)
        self.assertTrue(all(truncs.values()))


if __name__ == "__main__":
    unittest.main()
