"""A foraging agent built from the seed's examples (pursue_resources, move_away_from and
the error-handling decide).

    arena serve --scenario foraging --agents 1 --seed 1 --listen unix:arena.sock
    PYTHONPATH=sdk/python python3 sdk/python/examples/forager.py unix:arena.sock
"""

import sys

from agent_arena_sdk import Decision, query, run

COLLECTION_RANGE = 2.0


class Forager:
    def __init__(self):
        self.last_target = None
        self.known = {}  # resource name -> position, from scans beyond perception

    def on_episode_start(self, msg):
        self.__init__()  # a new world: forget everything

    def decide(self, obs):
        # Check if last action failed
        if obs.last_action_result and not obs.last_action_result.success:
            error = obs.last_action_result.error_code
            if error == "OUT_OF_RANGE" and self.last_target is not None:
                # Move closer and retry
                return Decision(tool="move_to", params={"target": self.last_target})
            if error == "NOT_FOUND":
                self.last_target = None  # someone else took it

        # Step out of a hazard first.
        for hazard in obs.nearby_hazards:
            if hazard.radius is not None and hazard.distance < hazard.radius + 0.5:
                return self.move_away_from(hazard, obs)

        # Normal logic
        if not obs.nearby_resources:
            return self.search(obs)
        return self.pursue_resources(obs)

    def pursue_resources(self, obs):
        if not obs.nearby_resources:
            return Decision.idle()

        closest = min(obs.nearby_resources, key=lambda r: r.distance)
        self.known.pop(closest.name, None)

        if closest.distance < COLLECTION_RANGE:
            # In range - collect it
            return Decision(tool="collect", params={"target_name": closest.name})
        else:
            # Not in range - move closer
            self.last_target = closest.position
            return Decision(tool="move_to", params={"target": closest.position})

    def move_away_from(self, hazard, obs):
        # Calculate direction away from hazard
        dx = obs.position[0] - hazard.position[0]
        dz = obs.position[2] - hazard.position[2]
        # Normalize and scale
        dist = (dx**2 + dz**2) ** 0.5
        if dist > 0:
            dx, dz = dx/dist * 5, dz/dist * 5  # Move 5 units away
        else:
            dx = 5.0
        target = [obs.position[0] + dx, 0, obs.position[2] + dz]
        return Decision(tool="move_to", params={"target": target}, reasoning=f"leaving {hazard.name}")

    def search(self, obs):
        """Nothing in sight: scan further with a mid-turn query and walk to the nearest find."""
        if not self.known:
            try:
                found = query("query_world", radius=50, filter_type="resource")
            except Exception:
                found = None
            if found:
                for e in found["query_result"]["entities"]:
                    self.known[e["name"]] = (e["position"], e["distance"])
        if not self.known:
            return Decision.idle("nothing left to collect in sight")
        name, (pos, _) = min(self.known.items(), key=lambda kv: kv[1][1])
        self.last_target = pos
        return Decision(tool="move_to", params={"target": pos}, reasoning=f"walking to {name}, seen by a scan")


if __name__ == "__main__":
    end = run(Forager(), sys.argv[1] if len(sys.argv) > 1 else "unix:arena.sock", name="py-forager")
    if end:
        print(end.reason, end.tick, [a["score"] for a in end.results["agents"]])
