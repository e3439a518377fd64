"""A team capture agent built from the seed's coordinate_capture: it tells its team which
point it is going for, and a teammate's claim sends it to another point.

    arena serve --scenario team_capture --bots 3 --listen unix:arena.sock
    PYTHONPATH=sdk/python python3 sdk/python/examples/capture.py unix:arena.sock
"""

import sys

from agent_arena_sdk import Decision, run


class Capturer:
    def __init__(self):
        self.current_target = None
        self.announced = None
        self.claimed = set()  # points teammates said they are capturing

    def on_episode_start(self, msg):
        self.__init__()

    def decide(self, obs):
        # Check if last action failed
        if obs.last_action_result and not obs.last_action_result.success:
            if obs.last_action_result.error_code == "NO_PATH":
                self.current_target = None
        return self.coordinate_capture(obs)

    def coordinate_capture(self, obs):
        # Check for messages from teammates
        for msg in obs.messages:
            if "capturing" in msg.content.lower():
                # Teammate is capturing, go to different point
                self.claimed.add(msg.content.split()[-1])
                if self.current_target in self.claimed and self.announced != self.current_target:
                    return self.find_unclaimed_point(obs)

        if self.current_target is None or self.owned(obs, self.current_target):
            return self.find_unclaimed_point(obs)

        # Announce our intention
        if self.current_target and self.announced != self.current_target:
            self.announced = self.current_target
            return Decision(
                tool="send_message",
                params={"message": f"Capturing {self.current_target}", "target_agent": "team"}
            )
        return self.go_to(obs, self.current_target)

    def owned(self, obs, name):
        return any(p.name == name and p.owner == obs.team for p in obs.capture_points)

    def find_unclaimed_point(self, obs):
        points = [p for p in obs.capture_points if p.owner != obs.team]
        free = [p for p in points if p.name not in self.claimed] or points or list(obs.capture_points)
        if not free:
            return Decision.idle("no capture points")
        target = min(free, key=lambda p: p.distance)
        self.current_target = target.name
        return self.go_to(obs, target.name)

    def go_to(self, obs, name):
        p = next((p for p in obs.capture_points if p.name == name), None)
        if p is None:
            self.current_target = None
            return Decision.idle()
        if p.distance < 1.5:
            return Decision.idle(f"holding {name}")
        return Decision(tool="move_to", params={"target": p.position}, reasoning=f"going to {name}")


if __name__ == "__main__":
    end = run(Capturer(), sys.argv[1] if len(sys.argv) > 1 else "unix:arena.sock", name="py-capture")
    if end:
        print(end.reason, end.tick, [(a["id"], a.get("team"), a["score"]) for a in end.results["agents"]])
