"""Benchmark of the XML tag parser (not a test: run it by hand).

    PYTHONPATH=sdk/python python3 sdk/python/tests/bench_xmltags.py
"""

import timeit

from agent_arena_sdk.xmltags import TagParser

p = TagParser(["get_role_details", "get_investigation_results", "check_will", "speak"])
texts = {
    "20000 nested tool tags": "<check_will>" * 20000 + "P" + "</check_will>" * 20000,
    "20000 nested prose tags in an argument": "<check_will>" + "<b>" * 20000 + "</b>" * 20000 + "</check_will>",
}
for name, text in texts.items():
    n = 20
    t = timeit.timeit(lambda: p.find(text), number=n) / n
    print(f"{name}: {t * 1000:.1f} ms per find ({len(text)} characters)")
