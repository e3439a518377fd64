"""XML tool tags for models without function calling (mirrors sdk/llm/xmltags.go).

    <get_role_details>Investigator</get_role_details>
    <get_investigation_results />

Only registered tool names are tool tags; other tags (<thinking>, <b>) are prose,
except a snake_case name within a small edit distance of a tool, which is reported
as malformed with a "did you mean" diagnostic. The parser reads the text once,
without recursion; sdk/testdata/xmltags.json is the table both SDKs must agree on.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Tag", "TagParser", "NONE", "INCOMPLETE", "COMPLETE", "MALFORMED", "format_observation"]

NONE, INCOMPLETE, COMPLETE, MALFORMED = "none", "incomplete", "complete", "malformed"


@dataclass
class Tag:
    """The first tool tag of a text. ``end`` is one past its last character."""
    status: str = NONE
    tool: str = ""
    arg: str = ""
    start: int = 0
    end: int = 0
    diagnostic: str = ""


def distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
        prev = cur
    return prev[len(b)]


def closest(name: str, candidates) -> str:
    best, best_d = "", 1 << 30
    for c in candidates:
        d = distance(name.lower(), c.lower())
        if d < best_d or (d == best_d and c < best):
            best, best_d = c, d
    if not best or best_d > max(2, len(name) // 3):
        return ""
    return best


def clip(s: str) -> str:
    return s[:64] + "…" if len(s) > 64 else s


_NAME = frozenset("_-.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")

# What an argument is trimmed of, in both SDKs: ASCII white space only.
SPACE = " \t\n\r\f\v"


def _tag_name(text: str, at: int):
    """The tag opening at text[at] ('<'): (closing, name, index past the name)."""
    n = len(text)
    j = at + 1
    closing = j < n and text[j] == "/"
    if closing:
        j += 1
    k = j
    while k < n and text[k] in _NAME:
        k += 1
    return closing, text[j:k], k


def _skip_space(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in SPACE:
        i += 1
    return i


class TagParser:
    """Finds tool tags in model text (the contract of sdk/llm's TagParser: linear time,
    no recursion, the results of sdk/testdata/xmltags.json)."""

    def __init__(self, tools):
        self.tools: list[str] = []
        for t in tools:
            if t and t not in self.tools:
                self.tools.append(t)
        self.known = set(self.tools)
        self.longest = max((len(t) for t in self.tools), default=0)

    def _could_be_tool(self, prefix: str) -> bool:
        return any(t.startswith(prefix) for t in self.tools)

    def _lookalike(self, name: str) -> str:
        if "_" not in name or len(name) > self.longest + max(2, self.longest // 5):
            return ""
        best = closest(name, self.tools)
        if not best or distance(name.lower(), best) > max(2, len(best) // 5):
            return ""
        return best

    def find(self, text: str) -> Tag:
        """The first tool tag of ``text``: complete, incomplete (the text ends inside
        it) or malformed; Tag(NONE) when there is none."""
        n = len(text)
        i = 0
        while i < n:
            at = text.find("<", i)
            if at < 0:
                break
            closing, name, k = _tag_name(text, at)
            if k == n:
                if (name == "" and not closing) or self._could_be_tool(name):
                    return Tag(INCOMPLETE, name, "", at, n,
                               "your tool tag is not finished; close it, e.g. <tool>argument</tool> or <tool />")
                return Tag(NONE)
            i = max(k, at + 1)
            if name == "":
                continue  # "a < b"
            if name not in self.known:
                best = self._lookalike(name)
                if best:
                    return Tag(MALFORMED, name, "", at, k,
                               f"<{clip(name)}> is not a tool; did you mean <{best}>? Tools: {', '.join(self.tools)}")
                continue
            if closing:
                return Tag(MALFORMED, name, "", at, min(k + 1, n),
                           f"</{name}> closes a tag that was never opened; write <{name}>argument</{name}>")
            return self._complete(text, at, k, name)
        return Tag(NONE)

    def _complete(self, text: str, start: int, k: int, name: str) -> Tag:
        n = len(text)
        usage = f"<{name}>argument</{name}> or <{name} />"
        m = _skip_space(text, k)
        if m == n:
            return Tag(INCOMPLETE, name, "", start, n, f"the tag <{name} is not finished; write {usage}")
        if text[m] == "/":
            if m + 1 == n:
                return Tag(INCOMPLETE, name, "", start, n, f"the tag <{name} / is not finished; write <{name} />")
            if text[m + 1] == ">":
                return Tag(COMPLETE, name, "", start, m + 2)
            return Tag(MALFORMED, name, "", start, m + 2, f"malformed self-closing tag; write <{name} />")
        if text[m] != ">":
            end = text.find(">", m)
            if end < 0:
                return Tag(INCOMPLETE, name, "", start, n, f"the tag <{name} is not finished; write {usage}")
            return Tag(MALFORMED, name, "", start, end + 1,
                       f"tool tags take no attributes; put the argument between the tags: {usage}")
        body = m + 1
        close_tag = f"</{name}>"
        unclosed = Tag(INCOMPLETE, name, "", start, n, f"<{name}> was never closed; write {usage}")
        i = body
        while i < n:
            at = text.find("<", i)
            if at < 0:
                break
            closing, inner, k2 = _tag_name(text, at)
            i = max(k2, at + 1)
            if k2 == n:
                break  # the text ends inside a name: still being written
            if inner not in self.known:
                continue  # prose, or a tag that is not a tool
            if closing and inner == name:
                e = _skip_space(text, k2)
                if e == n:
                    return unclosed
                if text[e] == ">":
                    return Tag(COMPLETE, name, text[body:at].strip(SPACE), start, e + 1)
            elif closing:
                return Tag(MALFORMED, name, "", start, min(k2 + 1, n),
                           f"<{name}> is closed by </{inner}>; close it with {close_tag}")
            else:
                c = text.find(close_tag, at)
                return Tag(MALFORMED, name, "", start, c + len(close_tag) if c >= 0 else n,
                           f"tool tags cannot be nested: close <{name}> with {close_tag} before opening "
                           f"<{inner}>, and call one tool at a time")
        return unclosed


def format_observation(s: str) -> str:
    """Wraps a tool's result, or an error message, as the text injected back to the model."""
    return "<observation>\n" + s.strip(SPACE) + "\n</observation>"
