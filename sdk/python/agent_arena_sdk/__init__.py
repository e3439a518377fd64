"""agent_arena_sdk: Python agents for Arena tick servers (docs/python.md).

    from agent_arena_sdk import Decision, run

    def decide(obs):
        if not obs.nearby_resources:
            return Decision.idle()
        r = min(obs.nearby_resources, key=lambda r: r.distance)
        if r.distance < 2.0:
            return Decision("collect", {"target_name": r.name})
        return Decision("move_to", {"target": r.position})

    run(decide, "unix:arena.sock")
"""

from .client import (VERSION, ArenaError, Client, ConnectionLost, connect, current_client, query, run)
from .types import (ActionResult, Decision, Entity, Message, Observation, QueryResult, Recipe, Record, Vec3, plain)

__version__ = VERSION
__all__ = ["Decision", "Observation", "Record", "Entity", "Recipe", "Message", "ActionResult", "QueryResult", "Vec3", "plain",
           "Client", "ArenaError", "ConnectionLost", "connect", "run", "query", "current_client",
           "ArenaParallelEnv", "ArenaEnv", "make_vec", "LLMAgent"]


_ENV = ("ArenaParallelEnv", "ArenaEnv", "make_vec")


def __getattr__(name):
    if name in _ENV:  # numpy and gymnasium are needed only here
        try:
            from . import env
        except ImportError as e:
            raise ImportError(f"agent_arena_sdk.{name} needs numpy and gymnasium (and pettingzoo for the "
                              f"PettingZoo base class): pip install gymnasium pettingzoo ({e})") from e
        return getattr(env, name)
    if name == "LLMAgent":
        from .llm import LLMAgent
        return LLMAgent
    raise AttributeError(name)
