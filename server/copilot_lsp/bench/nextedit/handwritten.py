"""The hand-written next-edit scenarios: a changed signature and its call sites, and the
like, where static transformations of real source do not reach."""

from __future__ import annotations

from copilot_lsp.bench.nextedit.suite import Scenario, Step


def _hand(
    kind: str, before: str, user: list[tuple[str, str]], after: str | None, note: str
) -> Scenario:
    """A scenario from the file, the user's replacements (old, new: each the first occurrence
    of `old` in the buffer at the time) and the expected buffer."""
    steps, text, cursor = [], before, 0
    for old, new in user:
        at = text.index(old)
        steps.append(Step(at, at + len(old), new))
        text = text[:at] + new + text[at + len(old) :]
        cursor = at + len(new)
    return Scenario("", kind, "hand", before, tuple(steps), cursor, after, note)


_SHAPES = """import math


def area(radius):
    return math.pi * radius ** 2


def describe(shapes):
    total = 0.0
    for shape in shapes:
        total += area(shape.radius)
    print("largest", area(max(s.radius for s in shapes)))
    return total
"""

_CONFIG = """class Config:
    def __init__(self, host, port):
        self.host = host
        self.port = port

    def url(self):
        return f"http://{self.host}:{self.port}/"


def local():
    return Config("localhost", 8080)


def remote():
    return Config("example.org", 443)
"""

_LOG = """def report(rows, out):
    out.write("name,size\\n")
    for row in rows:
        out.write(f"{row.name},{row.size}\\n")
    out.write("total,%d\\n" % sum(r.size for r in rows))
"""


def hand_written() -> list[Scenario]:
    """A changed signature and its call sites, and its complete and unrelated twins."""
    area2 = _SHAPES.replace("def area(radius):", "def area(radius, scale):")
    return [
        _hand(
            "signature",
            _SHAPES,
            [
                ("def area(radius):", "def area(radius, scale=1.0):"),
                ("    return math.pi * radius ** 2", "    return math.pi * (radius * scale) ** 2"),
            ],
            None,
            "a defaulted parameter: the call sites need nothing",
        ),
        _hand(
            "signature",
            _SHAPES,
            [
                ("def area(radius):", "def area(radius, scale):"),
                ("    return math.pi * radius ** 2", "    return math.pi * (radius * scale) ** 2"),
                ("def describe(shapes):", "def describe(shapes, scale):"),
            ],
            area2.replace("radius ** 2", "(radius * scale) ** 2")
            .replace("def describe(shapes):", "def describe(shapes, scale):")
            .replace("area(shape.radius)", "area(shape.radius, scale)")
            .replace(
                "area(max(s.radius for s in shapes))", "area(max(s.radius for s in shapes), scale)"
            ),
            "a required parameter passed on: both call sites take it",
        ),
        _hand(
            "signature",
            _CONFIG,
            [
                ("def __init__(self, host, port):", "def __init__(self, host, port, scheme):"),
                (
                    "        self.port = port",
                    "        self.port = port\n        self.scheme = scheme",
                ),
            ],
            _CONFIG.replace(
                "def __init__(self, host, port):", "def __init__(self, host, port, scheme):"
            )
            .replace(
                "        self.port = port", "        self.port = port\n        self.scheme = scheme"
            )
            .replace('return f"http://{', 'return f"{self.scheme}://{'),
            "a new field used where it belongs",
        ),
        _hand(
            "signature-done",
            _CONFIG,
            [
                ("def __init__(self, host, port):", "def __init__(self, host, port, scheme):"),
                (
                    "        self.port = port",
                    "        self.port = port\n        self.scheme = scheme",
                ),
                ('return f"http://{', 'return f"{self.scheme}://{'),
            ],
            None,
            "the new field is stored and used: done",
        ),
        _hand(
            "repeated-edit",
            _LOG,
            [('out.write("name,size\\n")', 'out.write("name;size\\n")')],
            _LOG.replace("name,size", "name;size")
            .replace("{row.name},{row.size}", "{row.name};{row.size}")
            .replace("total,%d", "total;%d"),
            "the separator changed in the header: the rows and total follow",
        ),
        _hand(
            "unrelated",
            _LOG,
            [
                (
                    "def report(rows, out):\n",
                    'def report(rows, out):\n    """Write rows as CSV."""\n',
                )
            ],
            None,
            "a docstring added",
        ),
    ]
