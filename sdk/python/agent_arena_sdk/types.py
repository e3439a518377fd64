"""Decisions and typed observations.

Observations arrive as CBOR maps. They are wrapped in :class:`Record`, a ``dict``
that also allows attribute access (``obs.nearby_resources[0].distance``), with the
nested parts typed: entities, recipes, messages, the last action result. Fields the
SDK does not know are kept (read them as ``obs["new_field"]`` or ``obs.new_field``);
optional fields that the server left out read as their default (``None``, ``[]``,
``{}``).
"""

from __future__ import annotations

from typing import Any


class Decision:
    """One decision: a tool, its parameters and, optionally, the reasoning behind it."""

    __slots__ = ("tool", "params", "reasoning")

    def __init__(self, tool: str, params: dict | None = None, reasoning: str | None = None):
        self.tool = tool
        self.params = dict(params) if params else {}
        self.reasoning = reasoning

    @classmethod
    def idle(cls, reasoning: str | None = None) -> "Decision":
        """A decision to do nothing new this tick (a move in progress goes on)."""
        return cls("idle", {}, reasoning)

    def to_message(self, tick: int) -> dict:
        msg = {"type": "decision", "tick": int(tick), "tool": self.tool or "idle"}
        if self.params:
            msg["params"] = plain(self.params)
        if self.reasoning:
            msg["reasoning"] = str(self.reasoning)
        return msg

    def __eq__(self, other):
        return isinstance(other, Decision) and (self.tool, self.params, self.reasoning) == (
            other.tool, other.params, other.reasoning)

    def __repr__(self):
        r = f", reasoning={self.reasoning!r}" if self.reasoning else ""
        return f"Decision(tool={self.tool!r}, params={self.params!r}{r})"


def plain(v: Any) -> Any:
    """Converts records, tuples and other mappings/sequences to plain CBOR-able values."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in dict.items(v)}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, str):
        return str(v)
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    return v


class _KeyOrMethod:
    """A dict method's name on Record: the payload's value when the record has that key
    (``details.items`` is the list of items), else the dict method."""

    __slots__ = ("name", "method")

    def __init__(self, name):
        self.name, self.method = name, getattr(dict, name)

    def __get__(self, obj, cls=None):
        if obj is not None and dict.__contains__(obj, self.name):
            return dict.__getitem__(obj, self.name)
        return self.method.__get__(obj, cls) if obj is not None else self.method


class Record(dict):
    """A dict whose keys can also be read as attributes.

    Attribute access reads the payload, even for keys named like dict methods:
    ``details.items`` is the ``items`` list when the record has that key (call the dict
    method as ``dict.items(details)`` then); without such a key ``record.items()`` is the
    dict method. A missing key declared in ``_defaults`` reads as its default; any
    other missing key raises AttributeError.
    """

    items, keys, values, get = (_KeyOrMethod(n) for n in ("items", "keys", "values", "get"))
    pop, popitem, copy, update = (_KeyOrMethod(n) for n in ("pop", "popitem", "copy", "update"))
    clear, setdefault = _KeyOrMethod("clear"), _KeyOrMethod("setdefault")

    _defaults: dict = {}
    _types: dict = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            pass
        for cls in type(self).__mro__:
            d = cls.__dict__.get("_defaults")
            if d and name in d:
                v = d[name]
                return v() if callable(v) else v
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name, value):
        self[name] = value

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dict.keys(self)))

    def __repr__(self):
        return f"{type(self).__name__}({dict.__repr__(self)})"

    @classmethod
    def wrap(cls, data):
        if data is None:
            return None
        if not isinstance(data, dict):
            return data
        out = cls()
        for k, v in dict.items(data):
            t = cls._types.get(k)
            dict.__setitem__(out, k, _convert(t, v))
        return out


def _convert(t, v):
    if v is None:
        return None
    if t is None:
        return _generic(v)
    kind, inner = t if isinstance(t, tuple) else ("one", t)
    if kind == "list" and isinstance(v, list):
        return [inner.wrap(x) if isinstance(x, dict) else _generic(x) for x in v]
    if kind == "map" and isinstance(v, dict):
        return Record({k: inner.wrap(x) if isinstance(x, dict) else _generic(x) for k, x in dict.items(v)})
    if kind == "vec":
        return Vec3(v) if isinstance(v, list) else v
    if isinstance(v, dict):
        return inner.wrap(v)
    return _generic(v)


def _generic(v):
    if isinstance(v, dict):
        return Record.wrap(v)
    if isinstance(v, list):
        return [_generic(x) for x in v]
    return v


class Vec3(list):
    """A position ``[x, y, z]`` (y is up); also readable as ``.x``, ``.y``, ``.z``."""

    @property
    def x(self):
        return self[0]

    @property
    def y(self):
        return self[1]

    @property
    def z(self):
        return self[2]


_VEC = ("vec", None)


class EntityType(str):
    """An entity's ``type`` ("resource", "station", ...) that also compares equal to its
    kind ("berry", "furnace", ...), so that both ``station.type == "station"`` and the
    seed's ``station.type == recipe.station_type`` hold. ``.kind`` is the kind alone.

    Being equal to two different strings, it cannot hash like both, so a type with a
    kind is not hashable: use ``str(e.type)`` (the type) or ``e.kind`` as set members and dict keys.
    """

    kind: str | None

    def __new__(cls, value, kind=None):
        o = super().__new__(cls, value)
        o.kind = kind
        return o

    def __eq__(self, other):
        return str.__eq__(self, other) or (self.kind is not None and self.kind == other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        if self.kind is None or self.kind == str(self):
            return str.__hash__(self)
        raise TypeError(f"an entity type equals both {str(self)!r} and {self.kind!r}, so it is not hashable: "
                        f"use str(entity.type) or entity.kind as a set member or dict key")

    def __reduce__(self):
        return (str, (str(self),))


_KIND_FIELDS = ("resource_type", "station_type", "hazard_type", "obstacle_type")


class Entity(Record):
    """Something the agent perceives: ``name`` (the ID tools take), ``type``, ``position``,
    ``distance`` and the fields of its kind (``resource_type``, ``station_type``, ...)."""

    _defaults = {"resource_type": None, "station_type": None, "hazard_type": None, "obstacle_type": None,
                 "amount": None, "in_use": False, "radius": None, "team": None, "health": None,
                 "action": None, "owner": None, "progress": 0}
    _types = {"position": _VEC}

    @classmethod
    def wrap(cls, data):
        out = super().wrap(data)
        if isinstance(out, dict) and isinstance(dict.get(out, "type"), str):
            kind = next((out[f] for f in _KIND_FIELDS if isinstance(dict.get(out, f), str)), None)
            dict.__setitem__(out, "type", EntityType(out["type"], kind))
        return out

    @property
    def kind(self):
        """The kind-specific type: resource_type, station_type, hazard_type or obstacle_type."""
        t = dict.get(self, "type")
        return getattr(t, "kind", None)


class Recipe(Record):
    """An available recipe: ``inputs`` (item → count), ``station_type``, ``ticks``, ``output_count``."""

    _defaults = {"inputs": dict, "station_type": None, "ticks": 0, "output_count": 1}
    _types = {"inputs": ("one", Record)}


class Message(Record):
    """A message received: ``from_`` (or ``sender``; ``msg["from"]``), ``content``, ``tick``, ``to``."""

    _defaults = {"to": None, "content": "", "tick": 0}

    @property
    def from_(self):
        return dict.get(self, "from")

    @property
    def sender(self):
        return dict.get(self, "from")


class ActionResult(Record):
    """The outcome of the last decision: ``tool``, ``success``, ``error_code``, ``error_message``, ``data``."""

    _defaults = {"error_code": None, "error_message": None, "data": None, "tick": None, "tool": None,
                 "success": False}


class QueryResult(Record):
    _defaults = {"entities": list, "filter_type": None}
    _types = {"entities": ("list", Entity)}


class Observation(Record):
    """What an agent perceives at a decision point. See docs/tools.md#the-observation."""

    _defaults = {"team": None, "last_action_result": None, "query_result": None, "inventory_details": None,
                 "components": dict, "capture_points": list, "messages": list, "nearby_resources": list,
                 "nearby_hazards": list, "nearby_stations": list, "nearby_agents": list, "nearby_agents_more": 0,
                 "nearby_obstacles": list, "available_recipes": dict, "inventory": dict, "agent_ids": list,
                 "current_action": None, "current_progress": dict, "alive": True, "score": 0.0}
    _types = {
        "position": _VEC, "velocity": _VEC,
        "nearby_resources": ("list", Entity), "nearby_hazards": ("list", Entity),
        "nearby_stations": ("list", Entity), "nearby_agents": ("list", Entity),
        "nearby_obstacles": ("list", Entity), "capture_points": ("list", Entity),
        "available_recipes": ("map", Recipe), "messages": ("list", Message),
        "last_action_result": ("one", ActionResult), "query_result": ("one", QueryResult),
    }
