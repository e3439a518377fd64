"""A crafting agent built from the seed's attempt_craft and error-handling decide: it
plans backwards from the items its objective asks for (crafted.<item>) through
available_recipes, collects the raw materials, and crafts at the right stations. It
finds what is out of sight with mid-turn query_world scans.

    arena serve --scenario crafting --agents 1 --seed 1 --listen unix:arena.sock
    PYTHONPATH=sdk/python python3 sdk/python/examples/crafter.py unix:arena.sock
"""

import sys

from agent_arena_sdk import ArenaError, Decision, query, run

COLLECTION_RANGE = 2.0


class Crafter:
    def __init__(self):
        self.last_target = None
        self.resources = {}  # name -> (resource_type, position), seen or scanned
        self.stations = {}   # name -> (station_type, position)
        self.scanned_at = -1000

    def on_episode_start(self, msg):
        self.__init__()

    # -- the seed's example, unchanged --------------------------------------------------
    def attempt_craft(self, obs, item_name):
        # Check if we have the recipe requirements
        recipe = obs.available_recipes.get(item_name)
        if not recipe:
            return None  # Unknown recipe

        # Check materials
        for material, count in recipe.inputs.items():
            if obs.inventory.get(material, 0) < count:
                return None  # Missing materials

        # Find nearest station of correct type
        for station in obs.nearby_stations:
            if station.type == recipe.station_type:
                if station.distance < 3.0:
                    return Decision(
                        tool="craft",
                        params={"item_name": item_name, "station_name": station.name}
                    )
                else:
                    # Move to station first
                    return Decision(tool="move_to", params={"target": station.position})

        return None  # No suitable station found

    # -- planning -----------------------------------------------------------------------
    def goals(self, obs):
        out = {}
        for metric, spec in obs.objective.get("success_metrics", {}).items():
            kind, _, item = metric.partition(".")
            if kind in ("crafted", "inventory") and item:
                done = obs.current_progress.get(metric, 0)
                left = int(spec.get("target", 1) - done + 0.999)
                if left > 0:
                    out[item] = left
        return out

    def plan(self, obs):
        """Returns (crafts still to do, inputs first; raw materials still missing: type -> count)."""
        have = dict(obs.inventory)
        crafts, raw = [], {}

        def need(item, count):
            use = min(have.get(item, 0), count)
            have[item] = have.get(item, 0) - use
            count -= use
            if count <= 0:
                return
            recipe = obs.available_recipes.get(item)
            if recipe is None:
                raw[item] = raw.get(item, 0) + count
                return
            runs = -(-count // max(1, recipe.output_count))
            for material, n in recipe.inputs.items():
                need(material, n * runs)
            crafts.extend([item] * runs)

        for item, count in self.goals(obs).items():
            need(item, count)
        return crafts, raw

    def learn(self, obs):
        for r in obs.nearby_resources:
            self.resources[r.name] = (r.resource_type, r.position)
        for s in obs.nearby_stations:
            self.stations[s.name] = (s.station_type, s.position)

    def scan(self, obs):
        if obs.tick - self.scanned_at < 30:
            return
        self.scanned_at = obs.tick
        try:
            found = query("query_world", radius=50)
        except ArenaError:
            return  # e.g. LIMIT_EXCEEDED: try again later
        for e in found["query_result"]["entities"]:
            if e["type"] == "resource":
                self.resources[e["name"]] = (e.get("resource_type"), e["position"])
            elif e["type"] == "station":
                self.stations[e["name"]] = (e.get("station_type"), e["position"])

    @staticmethod
    def dist(a, b):
        return ((a[0] - b[0]) ** 2 + (a[2] - b[2]) ** 2) ** 0.5

    def move(self, target, why):
        self.last_target = target
        return Decision(tool="move_to", params={"target": target}, reasoning=why)

    # -- deciding -----------------------------------------------------------------------
    def decide(self, obs):
        self.learn(obs)
        if obs.current_action and obs.current_action.get("status") == "crafting":
            return Decision.idle("crafting")

        # Check if last action failed
        if obs.last_action_result and not obs.last_action_result.success:
            error = obs.last_action_result.error_code
            if error == "OUT_OF_RANGE" and self.last_target is not None:
                # Move closer and retry
                return Decision(tool="move_to", params={"target": self.last_target})

        crafts, raw = self.plan(obs)
        if not crafts and not raw:
            return Decision.idle("objective met")

        # Craft whatever the plan can craft now (inputs before outputs).
        for item in dict.fromkeys(crafts):
            d = self.attempt_craft(obs, item)
            if d is not None:
                if d.tool == "move_to":
                    self.last_target = d.params["target"]
                return d

        # Collect a needed resource within reach.
        for r in sorted(obs.nearby_resources, key=lambda r: r.distance):
            if raw.get(r.resource_type, 0) > 0 and r.distance < COLLECTION_RANGE:
                self.resources.pop(r.name, None)
                return Decision(tool="collect", params={"target_name": r.name})

        # Walk to the nearest needed resource, or to a station for a craft we have inputs for.
        if raw:
            wanted = [(self.dist(obs.position, pos), name, pos) for name, (t, pos) in self.resources.items()
                      if raw.get(t, 0) > 0]
            if not wanted:
                self.scan(obs)
                wanted = [(self.dist(obs.position, pos), name, pos) for name, (t, pos) in self.resources.items()
                          if raw.get(t, 0) > 0]
            if wanted:
                _, name, pos = min(wanted)
                if self.dist(obs.position, pos) < 1.0:
                    self.resources.pop(name, None)  # gone: it would be in nearby_resources
                    return Decision.idle()
                return self.move(pos, f"walking to {name}")
        for item in dict.fromkeys(crafts):
            recipe = obs.available_recipes[item]
            if all(obs.inventory.get(m, 0) >= n for m, n in recipe.inputs.items()):
                spots = [(self.dist(obs.position, pos), name, pos) for name, (t, pos) in self.stations.items()
                         if t == recipe.station_type]
                if not spots:
                    self.scan(obs)
                    spots = [(self.dist(obs.position, pos), name, pos) for name, (t, pos) in self.stations.items()
                             if t == recipe.station_type]
                if spots:
                    _, name, pos = min(spots)
                    return self.move(pos, f"walking to {name} to craft {item}")
        self.scan(obs)
        return Decision.idle("looking for what the plan needs")


if __name__ == "__main__":
    end = run(Crafter(), sys.argv[1] if len(sys.argv) > 1 else "unix:arena.sock", name="py-crafter")
    if end:
        print(end.reason, end.tick, [a["score"] for a in end.results["agents"]])
