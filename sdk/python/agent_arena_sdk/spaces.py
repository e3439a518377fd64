"""Gymnasium spaces for Arena: observations as fixed-size arrays or text, actions over tools.

Built from what ``arena scenarios --format json`` says about a scenario (its slot ids,
vocabularies, rules and tools), so every space is known before the first episode.
:class:`Codec` turns an observation (the protocol's map) into a value of the
observation space and an action of the action space into a :class:`Decision`.
Needs numpy and gymnasium; the rest of the SDK does not import this module.

Actions are a ``Dict``: ``"tool"`` (``Discrete``, an index into :attr:`Codec.tools`)
and, for each tool with parameters, a ``Dict`` of them: an entity in sight as the
index of its slot in the observation (``Discrete``), a recipe or an agent as an index
into the scenario's list, an enum as ``Discrete``, a number as a ``Box`` in [-1, 1]
scaled to the parameter's range, ``move_to``'s target as a ``Box`` in [-1, 1]² over
the world's bounds, free text as ``Text``. Only the chosen tool's parameters are read.
The observation's ``action_mask`` has the action space's structure and marks the
choices that the server would accept now (see :meth:`Codec.mask`), so that
``action_space.sample(mask=obs["action_mask"])`` draws a valid action.
"""

from __future__ import annotations

import array
import math
import re
import string
from typing import Any

import numpy as np
from gymnasium import spaces

from .types import Decision

__all__ = ["Codec", "MaskableBox", "TEXT_CHARSET", "fit_text"]

# Characters of the text spaces: printable ASCII, Latin-1 and Latin Extended-A,
# Greek, punctuation, currency, arrows, mathematical operators, box drawing,
# geometric shapes and symbols. Anything else (emoji, CJK) reads as "?".
_RANGES = [(0x20, 0x7E), (0xA0, 0x17F), (0x391, 0x3C9), (0x2010, 0x205E), (0x20A0, 0x20BF),
           (0x2100, 0x214F), (0x2190, 0x23FF), (0x2500, 0x27BF)]
TEXT_CHARSET = "\n\t" + "".join(chr(c) for lo, hi in _RANGES for c in range(lo, hi + 1))
_NOT_CHARSET = re.compile("[^" + re.escape(TEXT_CHARSET) + "]")
PARAM_CHARSET = string.ascii_letters + string.digits + " "

STATUSES = ["idle", "moving", "arrived", "failed", "crafting", "completed", "dead"]
ERROR_CODES = ["OUT_OF_RANGE", "NOT_FOUND", "MISSING_MATERIALS", "INVALID_PARAMS", "BUSY", "UNKNOWN_TOOL",
               "NOT_ALLOWED", "NO_PATH", "INVENTORY_FULL", "NOT_A_QUERY", "DEAD", "LIMIT_EXCEEDED", "TIMEOUT"]
BIG = float(np.finfo(np.float32).max)  # the bound of unbounded quantities: float32's range, never clipped
EMPTY_SLOT = "-"  # the name sent for an entity slot that holds nothing (the server answers NOT_FOUND)

_AGENT_PARAM = re.compile(r"\bagent id\b|\bagent_\d{3}\b|e\.g\. agent_", re.I)


def _f32(values: list) -> np.ndarray:  # array.array converts a list twice as fast as np.array
    return np.frombuffer(array.array("f", values), np.float32)


def _i64(values: list) -> np.ndarray:
    return np.frombuffer(array.array("q", values), np.int64)


def _i8(values: list) -> np.ndarray:
    return np.frombuffer(array.array("b", values), np.int8)


_LITTLE = {np.float32: np.dtype("<f4"), np.int64: np.dtype("<i8"), np.int8: np.dtype("i1")}


def _wrap(arrays: dict, key: str, dtype, n: int) -> np.ndarray:
    """One of the server's arrays (little-endian bytes) as a writable numpy array of n values."""
    wire = _LITTLE[dtype]
    b = arrays.get(key)
    if not isinstance(b, bytes) or len(b) != n * wire.itemsize:
        got = f"{len(b) // wire.itemsize} values" if isinstance(b, bytes) else repr(type(b).__name__)
        raise RuntimeError(f"the server's {key!r} array has {got}, not {n}: the layout sent and the one used differ")
    a = np.frombuffer(bytearray(b), wire)
    return a if wire.isnative else a.astype(dtype)


def fit_text(s: str, max_length: int) -> str:
    """``s`` made a member of a text space: characters outside TEXT_CHARSET become "?",
    and a text longer than ``max_length`` is cut, ending in "…"."""
    s = _NOT_CHARSET.sub("?", s)
    if len(s) > max_length:
        s = s[:max_length - 1] + "…"
    return s


class MaskableBox(spaces.Box):
    """A ``Box`` whose ``sample`` also takes a mask, so that a ``Dict`` holding it can be
    sampled with one mask for every part: ``mask`` is an int8 array of one element, 1
    (sample uniformly as a Box does) or 0 (the parameter is not used: the middle of the
    box). Everything else is Box's; wrappers and vector envs see a Box."""

    def sample(self, mask=None, probability=None):
        if mask is None:
            return super().sample(probability=probability)
        if not (isinstance(mask, np.ndarray) and mask.shape == (1,) and mask.dtype == np.int8):
            raise ValueError(f"MaskableBox.sample: the mask is an int8 array of shape (1,), not {mask!r}")
        if mask[0]:
            return super().sample()
        return ((self.low + self.high) / 2).astype(self.dtype)


def _box(n, lo, hi):
    return spaces.Box(np.full(n, lo, np.float32), np.full(n, hi, np.float32), dtype=np.float32)


def _entities(k, features, n_types):
    return spaces.Dict({"features": spaces.Box(-BIG, BIG, (k, features), np.float32),
                        "type": spaces.MultiDiscrete(np.full(k, n_types + 1, np.int64)),
                        "mask": spaces.MultiBinary(k)})


class _Param:
    """One encoded parameter of a tool: its space, its mask's space and how to decode it."""

    agents = False  # a choice among agent ids

    def __init__(self, name, kind, space, mask_space, **kw):
        self.name, self.kind, self.space, self.mask_space = name, kind, space, mask_space
        self.__dict__.update(kw)


class Codec:
    """Spaces and encodings for the agents of one scenario.

    ``info`` is the scenario's ``arena scenarios --format json`` object; ``observation``
    is ``"dict"`` or ``"text"``; ``k`` the number of entity slots per kind (the k nearest);
    ``text_length`` the longest text of a text space.
    """

    # entity kinds: observation field, feature names after dx, dy, dz, distance
    KINDS = {
        "resources": ("nearby_resources", ["amount"]),
        "stations": ("nearby_stations", ["in_use"]),
        "hazards": ("nearby_hazards", ["radius", "entry_damage", "damage_per_second"]),
        "obstacles": ("nearby_obstacles", ["radius"]),
        "agents": ("nearby_agents", ["health", "ally"]),
        "teammates": ("teammates", ["health"]),
        "capture_points": ("capture_points", ["radius", "progress", "owner", "capturing", "contested"]),
    }
    SIDES = ("ally", "owner", "capturing")
    SELF = ["x", "y", "z", "vx", "vy", "vz", "cos_facing", "sin_facing", "health", "max_health", "alive",
            "inventory_used", "inventory_capacity", "score", "tick", "messages", "events"]

    def __init__(self, info: dict, observation: str = "dict", k: int = 8, text_length: int = 16384):
        if observation not in ("dict", "text"):
            raise ValueError(f"observation must be 'dict' or 'text', not {observation!r}")
        self.info, self.mode, self.k, self.text_length = info, observation, int(k), int(text_length)
        self.all_agents = list(info["agent_ids"])
        self.teams = list(info.get("teams") or [])
        self.items = list(info.get("items") or [])
        self.item_index = {x: i for i, x in enumerate(self.items)}
        self.recipes = list(info.get("recipes") or [])
        self.metrics = list(info.get("metrics") or [])
        self.points = list(info.get("capture_points") or [])
        self.components = list(info.get("components") or [])
        self.rules = info.get("rules") or {}
        self.collect_range = float(self.rules.get("collect_range") or 2.0)
        self.craft_range = float(self.rules.get("craft_range") or 2.5)
        b = info["bounds"]
        self.bounds = (float(b[0]), float(b[1]), float(b[2]), float(b[3]))
        self.tool_specs = list(info.get("tools") or [])
        self.tools = [t["name"] for t in self.tool_specs]
        self.tool_index = {n: i for i, n in enumerate(self.tools)}
        self.queries = {t["name"] for t in self.tool_specs if t.get("query")}
        self.types = {"resources": info.get("resource_types") or [], "stations": info.get("station_types") or [],
                      "hazards": info.get("hazard_types") or [], "obstacles": info.get("obstacle_types") or [],
                      "agents": self.all_agents, "teammates": self.all_agents, "capture_points": self.points}
        self.type_index = {kind: {t: i + 1 for i, t in enumerate(v)} for kind, v in self.types.items()}
        self.type_field = {"resources": "resource_type", "stations": "station_type", "hazards": "hazard_type",
                           "obstacles": "obstacle_type", "agents": "name", "teammates": "name",
                           "capture_points": "name"}
        self.status_index = {s: i + 1 for i, s in enumerate(STATUSES)}
        self.code_index = {c: i + 1 for i, c in enumerate(ERROR_CODES)}
        self.kinds = [kind for kind in self.KINDS if self._has(kind)]
        self.slots = {kind: (len(self.points) if kind == "capture_points" else self.k) for kind in self.kinds}
        self._layout = [(kind, self.KINDS[kind][0], self.slots[kind], 4 + len(self.KINDS[kind][1]), self.KINDS[kind][1],
                         self.type_index[kind], self.type_field[kind]) for kind in self.kinds]
        self._sided = {kind for kind in self.kinds if set(self.KINDS[kind][1]) & set(self.SIDES)}
        self._float_layout = [("self", len(self.SELF))] + [(key, len(v)) for key, v in (
            ("inventory", self.items), ("progress", self.metrics),
            ("team_scores", self.teams if self.points else ())) if v]
        self.params = {t["name"]: self._params(t) for t in self.tool_specs}
        self.params = {n: ps for n, ps in self.params.items() if ps}
        self._mask_layout = [(name, p) for name, ps in self.params.items() for p in ps]
        for _, p in self._mask_layout:
            p.ones = [True] * (len(PARAM_CHARSET) if p.kind == "text" else len(p.values) if p.kind == "choice"
                               else self.k if p.kind == "slot" else 1)
        # where each part of the observation is in its arrays
        self._float_plan, f = [], 0
        for key, n in self._float_layout:
            self._float_plan.append((key, f, f + n))
            f += n
        self._kind_plan, t = [], 4
        for kind, _, n, width, _, _, _ in self._layout:
            self._kind_plan.append((kind, f, f + n * width, (n, width), t))
            f, t = f + n * width, t + n
        # where each part of the mask is: (tool, [(param, start, end, text length or None)])
        self._mask_plan, n = [], len(self.tools)
        for name, p in self._mask_layout:
            size = len(p.ones) if p.kind != "slot" else self.k
            if not self._mask_plan or self._mask_plan[-1][0] != name:
                self._mask_plan.append((name, []))
            self._mask_plan[-1][1].append((p.name, n, n + size, p.length if p.kind == "text" else None))
            n += size
        # the lengths of the four arrays, to check the server's
        self._n_floats = sum(n for _, n in self._float_layout) + sum(n * w for _, _, n, w, _, _, _ in self._layout)
        self._n_ints = 4 + sum(n for _, _, n, _, _, _, _ in self._layout)
        self._n_present = self._n_ints - 4
        self._n_mask = len(self.tools) + sum(len(p.ones) for _, p in self._mask_layout)

    def _has(self, kind):
        if kind == "agents":
            return len(self.all_agents) > 1
        if kind == "teammates":
            return bool(self.teams) and len(self.all_agents) > len(self.teams)
        return bool(self.types[kind])

    # -- spaces ---------------------------------------------------------------------

    def _params(self, spec) -> list:
        tool, out = spec["name"], []
        props = (spec.get("parameters") or {}).get("properties") or {}
        for name in sorted(props):
            p = props[name] or {}
            ty = p.get("type")
            one = spaces.MultiBinary(1)
            if tool == "move_to":
                if name == "target":
                    out.append(_Param(name, "target", MaskableBox(-1.0, 1.0, (2,), np.float32), one))
                elif name == "speed":
                    hi = float(self.rules.get("max_speed_multiplier") or 2.0)
                    out.append(_Param(name, "number", MaskableBox(-1.0, 1.0, (1,), np.float32), one, lo=0.1, hi=hi,
                                      integer=False))
                continue  # target_x/y/z: the same as target
            if tool == "collect" and name == "target_name":
                out.append(_Param(name, "slot", spaces.Discrete(self.k), spaces.MultiBinary(self.k), entity="resources"))
            elif tool == "craft" and name == "station_name":
                out.append(_Param(name, "slot", spaces.Discrete(self.k), spaces.MultiBinary(self.k), entity="stations"))
            elif tool == "craft" and name == "item_name":
                if self.recipes:
                    n = len(self.recipes)
                    out.append(_Param(name, "choice", spaces.Discrete(n), spaces.MultiBinary(n), values=self.recipes))
            elif "enum" in p and p["enum"]:
                vals = list(p["enum"])
                out.append(_Param(name, "choice", spaces.Discrete(len(vals)), spaces.MultiBinary(len(vals)), values=vals))
            elif ty == "boolean":
                out.append(_Param(name, "choice", spaces.Discrete(2), spaces.MultiBinary(2), values=[False, True]))
            elif ty == "string" and (tool, name) == ("send_message", "target_agent"):
                vals = ["all"] + (["team"] if self.teams else []) + self.all_agents
                out.append(_Param(name, "choice", spaces.Discrete(len(vals)), spaces.MultiBinary(len(vals)),
                                  values=vals, agents=True))
            elif ty == "string" and _AGENT_PARAM.search(p.get("description") or ""):
                n = len(self.all_agents)
                out.append(_Param(name, "choice", spaces.Discrete(n), spaces.MultiBinary(n), values=self.all_agents,
                                  agents=True))
            elif ty == "string":
                hi = max(1, min(int(p.get("maxLength") or 64), 4096))
                lo = min(max(int(p.get("minLength") or 0), 0), hi)
                out.append(_Param(name, "text", spaces.Text(hi, min_length=lo, charset=PARAM_CHARSET),
                                  spaces.Tuple((spaces.Discrete(hi + 1), spaces.MultiBinary(len(PARAM_CHARSET)))),
                                  length=max(lo, min(hi, 16))))
            elif ty in ("number", "integer"):
                lo = p.get("minimum", p.get("exclusiveMinimum"))
                hi = p.get("maximum", p.get("exclusiveMaximum"))
                lo = -1e4 if lo is None else max(float(lo), -1e12)
                hi = 1e4 if hi is None else min(float(hi), 1e12)
                if ty == "integer" and hi - lo < 64:
                    vals = list(range(math.ceil(lo), math.floor(hi) + 1))
                    out.append(_Param(name, "choice", spaces.Discrete(len(vals)), spaces.MultiBinary(len(vals)),
                                      values=vals))
                else:
                    out.append(_Param(name, "number", MaskableBox(-1.0, 1.0, (1,), np.float32), one, lo=lo, hi=hi,
                                      integer=ty == "integer"))
            # other parameters (arrays, untyped values) are not encoded: send a Decision for them
        return out

    def action_space(self) -> spaces.Dict:
        d = {"tool": spaces.Discrete(len(self.tools))}
        for tool, ps in self.params.items():
            d[tool] = spaces.Dict({p.name: p.space for p in ps})
        return spaces.Dict(d)

    def mask_space(self) -> spaces.Dict:
        d = {"tool": spaces.MultiBinary(len(self.tools))}
        for tool, ps in self.params.items():
            d[tool] = spaces.Dict({p.name: p.mask_space for p in ps})
        return spaces.Dict(d)

    def observation_space(self) -> spaces.Space:
        if self.mode == "text":
            return spaces.Text(self.text_length, min_length=0, charset=TEXT_CHARSET)
        d = {"self": _box(len(self.SELF), -BIG, BIG)}
        if self.items:
            d["inventory"] = _box(len(self.items), 0, BIG)
        if self.metrics:
            d["progress"] = _box(len(self.metrics), -BIG, BIG)
        d["status"] = spaces.Discrete(len(STATUSES) + 1)
        d["last_action"] = spaces.MultiDiscrete(np.array([len(self.tools) + 1, 3, len(ERROR_CODES) + 2], np.int64))
        for kind in self.kinds:
            d[kind] = _entities(self.slots[kind], 4 + len(self.KINDS[kind][1]), len(self.types[kind]))
        if self.points and self.teams:
            d["team_scores"] = _box(len(self.teams), -BIG, BIG)
        if self.components:
            d["components"] = spaces.Dict({c: spaces.Text(self.text_length, min_length=0, charset=TEXT_CHARSET)
                                           for c in self.components})
        d["action_mask"] = self.mask_space()
        return spaces.Dict(d)

    def feature_names(self) -> dict:
        """The meaning of each column: ``{"self": [...], "resources": [...], ...}``."""
        out = {"self": list(self.SELF), "inventory": list(self.items), "progress": list(self.metrics),
               "status": ["unknown"] + STATUSES, "last_action": ["tool+1", "outcome (1 ok, 2 failed)", "error"],
               "team_scores": list(self.teams)}
        for kind in self.kinds:
            out[kind] = ["dx", "dy", "dz", "distance"] + self.KINDS[kind][1]
        return out

    # -- observations ---------------------------------------------------------------

    def arrays_layout(self) -> dict:
        """This encoding's layout, for the server (an ``observation_arrays`` message): the
        server then sends every observation's arrays with it, computed in Go, and
        :meth:`encode` only wraps them (see docs/python.md, "Where the encoding runs")."""
        params = []
        for name, p in self._mask_layout:
            if p.kind == "slot":
                params.append({"kind": "slot_" + p.entity})
            elif p.kind == "choice" and name == "craft":
                params.append({"kind": "craft", "values": list(p.values)})
            elif p.kind == "choice" and p.agents:
                params.append({"kind": "agents", "values": list(p.values)})
            else:
                params.append({"kind": "ones", "size": len(p.ones)})
        return {"self": list(self.SELF), "inventory": list(self.items), "progress": list(self.metrics),
                "team_scores": list(self.teams) if self.points else [], "statuses": list(STATUSES),
                "error_codes": list(ERROR_CODES), "tools": list(self.tools),
                "kinds": [{"kind": kind, "slots": n, "features": list(extra), "types": list(self.types[kind])}
                          for kind, _, n, _, extra, _, _ in self._layout],
                "k": self.k, "recipes": list(self.recipes), "collect_range": self.collect_range,
                "craft_range": self.craft_range, "queries": sorted(self.queries),
                "queries_allowed": self.mode == "text", "params": params}

    def encode(self, o: dict, renderer=None, arrays: dict | None = None):
        """The observation ``o`` (a protocol map) as a member of the observation space.

        ``arrays`` are the server's encoding of it (the ``arrays`` of an observation
        message, after :meth:`arrays_layout` was sent): they are wrapped, not
        recomputed. Without them, built for speed in Python: every float goes into one
        list and every integer into another, each becomes one numpy array, and the
        observation's parts are views of them."""
        if self.mode == "text":
            return fit_text(renderer(o), self.text_length)
        if arrays is not None:
            return self._views(o, _wrap(arrays, "f32", np.float32, self._n_floats),
                               _wrap(arrays, "i64", np.int64, self._n_ints),
                               _wrap(arrays, "i8", np.int8, self._n_present),
                               _wrap(arrays, "mask", np.int8, self._n_mask))
        get = o.get
        pos = get("position") or (0.0, 0.0, 0.0)
        vel = get("velocity") or (0.0, 0.0, 0.0)
        facing = float(get("facing") or 0.0)
        floats = [pos[0], pos[1], pos[2], vel[0], vel[1], vel[2], math.cos(facing), math.sin(facing),
                  get("health") or 0.0, get("max_health") or 0.0, 0.0 if get("alive") is False else 1.0,
                  get("inventory_used") or 0, get("inventory_capacity") or 0, get("score") or 0.0, get("tick") or 0,
                  len(get("messages") or ()), len(get("events") or ())]
        if self.items:
            inv = [0.0] * len(self.items)
            index = self.item_index
            for item, n in (get("inventory") or {}).items():
                i = index.get(item)
                if i is not None:
                    inv[i] = n
            floats += inv
        if self.metrics:
            prog = get("current_progress") or {}
            floats += [prog.get(m) or 0.0 for m in self.metrics]
        if self.points and self.teams:
            ts = get("team_scores") or {}
            floats += [ts.get(t) or 0 for t in self.teams]
        ca = get("current_action")
        ints = [self.status_index.get(ca.get("status"), 0) if isinstance(ca, dict) else 0]
        r = get("last_action_result")
        if isinstance(r, dict):
            code = r.get("error_code")
            ints += (self.tool_index.get(r.get("tool"), -1) + 1, 1 if r.get("success") else 2,
                     self.code_index.get(code, len(ERROR_CODES) + 1) if code else 0)
        else:
            ints += (0, 0, 0)
        present = []
        self._entities(o, pos, floats, ints, present)
        return self._views(o, _f32(floats), _i64(ints), _i8(present), _i8(self._mask_buf(o)))

    def _views(self, o, fa, ia, pa, ma):
        """The observation's parts as views of its four arrays."""
        out = {key: fa[lo:hi] for key, lo, hi in self._float_plan}
        out["status"], out["last_action"] = ia[0], ia[1:4]
        for kind, lo, hi, shape, t in self._kind_plan:
            out[kind] = {"features": fa[lo:hi].reshape(shape), "type": ia[t:t + shape[0]],
                         "mask": pa[t - 4:t - 4 + shape[0]]}
        if self.components:
            comps = o.get("components") or {}
            out["components"] = {c: fit_text(_section_text(comps.get(c)), self.text_length) for c in self.components}
        out["action_mask"] = self._mask_views(ma)
        return out

    def _entities(self, o, pos, feats, types, present):
        """The k nearest entities of each kind, appended to the lists: features, types,
        presence."""
        px, py, pz = pos[0], pos[1], pos[2]
        my_team = o.get("team")
        for kind, field, n, width, extra, index, key in self._layout:
            es = o.get(field) or ()
            m = min(len(es), n)
            sides = kind in self._sided
            for e in es[:m]:
                get = e.get
                p = get("position") or pos
                feats += (p[0] - px, p[1] - py, p[2] - pz, get("distance") or 0.0)
                if sides:
                    for f in extra:
                        if f in self.SIDES:  # a team: 1 mine, -1 another, 0 none
                            t = get("team" if f == "ally" else f)
                            feats.append(0.0 if not (t and my_team) else (1.0 if t == my_team else -1.0))
                        else:
                            feats.append(get(f) or 0.0)
                else:
                    for f in extra:
                        feats.append(get(f) or 0.0)
                types.append(index.get(get(key), 0))
            if m < n:
                feats += [0.0] * ((n - m) * width)
                types += [0] * (n - m)
            present += [1] * m + [0] * (n - m)

    # -- masks ----------------------------------------------------------------------

    def mask(self, o: dict) -> dict:
        """What the server would accept now: tools and, per tool, the parameter values.

        ``collect``: resources within the collection range, when the inventory has
        room; ``craft``: recipes whose inputs are in the inventory, at a free station
        of their type within the crafting range; ``send_message``: living agents;
        ``move_to``, ``idle`` and the components' tools: always. Query tools are masked
        out in the "dict" encoding (their results are not encoded) and allowed in the
        "text" one. A dead agent has nothing; a busy one (crafting) no move, collect
        or craft.
        """
        return self._mask_views(_i8(self._mask_buf(o)))

    def _mask_buf(self, o: dict) -> list:
        get, k = o.get, self.k
        alive = get("alive") is not False
        ca = get("current_action")
        busy = isinstance(ca, dict) and ca.get("status") == "crafting"
        res = (get("nearby_resources") or ())[:k]
        stations = (get("nearby_stations") or ())[:k]
        reach = [(e.get("distance") or 0) <= self.collect_range for e in res]
        if (get("inventory_used") or 0) >= (get("inventory_capacity") or 0):
            reach = [False] * len(reach)
        craftable, at = [], [False] * len(stations)
        if self.recipes and stations:
            recipes, inv = get("available_recipes") or {}, get("inventory") or {}
            free = {}
            for j, st in enumerate(stations):
                if (st.get("distance") or 0) <= self.craft_range and not st.get("in_use"):
                    free.setdefault(st.get("station_type"), []).append(j)
            for r in self.recipes:
                rec = recipes.get(r)
                if rec and rec.get("station_type") in free and all(
                        inv.get(i, 0) >= n for i, n in (rec.get("inputs") or {}).items()):
                    craftable.append(r)
                    for j in free[rec.get("station_type")]:
                        at[j] = True
        living = set(get("agent_ids") or ()) - {get("agent_id")}
        allowed = {"idle": True, "move_to": not busy, "collect": not busy and any(reach),
                   "craft": not busy and bool(craftable), "send_message": bool(living)}
        default = self.mode == "text"  # query tools
        buf = [alive and allowed.get(t, t not in self.queries or default) for t in self.tools]
        for name, p in self._mask_layout:  # one flat list, one array, a view per part
            if p.kind == "slot":
                got = reach if p.entity == "resources" else at
                buf += got
                buf += [False] * (k - len(got))
            elif p.kind == "choice" and name == "craft":
                buf += [r in craftable for r in p.values]
            elif p.kind == "choice" and p.agents:
                ok = living | {"all"} | ({"team"} if get("team") else set())
                buf += [x in ok for x in p.values]
            else:
                buf += p.ones
        return buf

    def _mask_views(self, arr):
        out = {"tool": arr[:len(self.tools)]}
        for tool, parts in self._mask_plan:
            m = out[tool] = {}
            for name, lo, hi, length in parts:
                m[name] = arr[lo:hi] if length is None else (np.int64(length), arr[lo:hi])
        return out

    # -- actions --------------------------------------------------------------------

    def decode(self, action: Any, last: dict | None) -> Decision:
        """An action (of the action space, a Decision, a ``{"tool": name, "params": ...}``
        dict or None for idle) as a Decision; raises ValueError or TypeError for an
        action that is none of these (an unknown tool, an index out of range, ...).
        ``last`` is the observation the action answers (entity slots refer to it), or a
        function that returns it (called only for an entity slot)."""
        if action is None:
            return Decision.idle()
        if isinstance(action, Decision):
            return self._check_named(action.tool, action.params, action.reasoning)
        if not isinstance(action, dict):
            raise TypeError(f"an action is a dict of the action space, a Decision, a dict "
                            f"{{'tool': name, 'params': {{...}}}} or None, not {type(action).__name__}")
        t = action.get("tool")
        if isinstance(t, str):
            return self._check_named(t, action.get("params"), action.get("reasoning"))
        if isinstance(t, np.ndarray) and t.shape == ():
            t = t.item()
        if not isinstance(t, (int, np.integer)) or isinstance(t, bool) or not 0 <= int(t) < len(self.tools):
            raise ValueError(f"action['tool'] must be a tool index in [0, {len(self.tools)}) or a tool name, not {t!r}")
        name = self.tools[int(t)]
        ps = self.params.get(name)
        params = {}
        if ps:
            sub = action.get(name)
            if not isinstance(sub, dict):
                raise ValueError(f"action for tool {name!r} needs action[{name!r}], a dict of "
                                 f"{', '.join(p.name for p in ps)}")
            for p in ps:
                if p.name not in sub:
                    raise ValueError(f"action[{name!r}] has no {p.name!r}")
                v = sub[p.name]
                if isinstance(v, (list, tuple)) and p.kind in ("target", "number"):
                    v = np.asarray(v, np.float32)
                if not p.space.contains(v):
                    raise ValueError(f"action[{name!r}][{p.name!r}] = {v!r} is not in {p.space}")
                params[p.name] = self._param_value(p, v, last)
        return Decision(name, params)

    def _check_named(self, tool, params, reasoning):
        if not isinstance(tool, str) or tool not in self.tool_index:
            raise ValueError(f"unknown tool {tool!r}; the tools are {', '.join(self.tools)}")
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"the parameters of {tool!r} must be a dict, not {type(params).__name__}")
        return Decision(tool, params, reasoning)

    def _param_value(self, p, v, last):
        if p.kind == "target":
            x0, z0, x1, z1 = self.bounds
            x = x0 + (float(v[0]) + 1) / 2 * (x1 - x0)
            z = z0 + (float(v[1]) + 1) / 2 * (z1 - z0)
            return [round(x, 3), 0.0, round(z, 3)]
        if p.kind == "number":
            x = p.lo + (float(v[0]) + 1) / 2 * (p.hi - p.lo)
            return int(round(x)) if p.integer else x
        if p.kind == "choice":
            return p.values[int(v)]
        if p.kind == "slot":
            if callable(last):
                last = last()
            es = (last or {}).get(self.KINDS[p.entity][0]) or ()
            i = int(v)
            return es[i].get("name") if i < len(es) else EMPTY_SLOT
        return str(v)


def _section_text(sec) -> str:
    if isinstance(sec, dict) and isinstance(sec.get("text"), str):
        return sec["text"]
    return "" if sec is None else str(sec)
