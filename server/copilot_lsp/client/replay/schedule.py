"""The seeded typing schedule: when each keystroke comes, how fast the user reacts.

Everything is drawn per position of the session's target text, so the schedule does not
depend on the engine: after a Tab accept jumps ahead, typing resumes with the draws of the
position it landed on, and every arm of a run types the same keys at the same gaps wherever
they type at all.

Keys: one character each, except Enter, which inserts the newline and the next line's
indentation in one edit (editors auto-indent). Gaps: bursts of quick keys (log-normal around
`key_s`), a thinking pause after some word boundaries, and a longer one after many line ends.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass

_WORD_ENDS = frozenset(" .,(:=[")


@dataclass(frozen=True, slots=True)
class TypingModel:
    key_s: float = 0.14
    """Median gap between keys within a burst (about 85 words per minute)."""
    key_spread: float = 0.4
    """Log-normal sigma of that gap."""
    word_pause_p: float = 0.08
    """Chance of a pause after a space, `.`, `,`, `(`, `:`, `=` or `[`."""
    line_pause_p: float = 0.6
    """Chance of a pause after Enter."""
    pause_s: float = 1.0
    """Median pause."""
    pause_spread: float = 0.5
    first_pause_s: float = 1.0
    """Before the first key: the user has just put the cursor there."""
    reaction_s: float = 0.3
    """Median time between ghost text appearing and the user acting on it."""
    type_ahead: tuple[float, ...] = (0.5, 0.25, 0.15, 0.1)
    """Chances of typing 0, 1, 2, 3 more characters of a good suggestion before Tab."""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Typing:
    """Draws for every position of one session's target text."""

    delays_s: tuple[float, ...]
    """Gap before the key that starts at this position."""
    pauses: tuple[bool, ...]
    """That gap is a thinking pause, not part of a burst."""
    reactions_s: tuple[float, ...]
    type_ahead: tuple[int, ...]


def key_at(target: str, position: int) -> str:
    """The text of the keystroke that types `target` from `position`."""
    if target[position] != "\n":
        return target[position]
    end = position + 1
    while end < len(target) and target[end] == " ":
        end += 1
    return target[position:end]


def keys(target: str, start: int = 0) -> list[tuple[int, str]]:
    """(position, key text) of every keystroke typing `target[start:]`."""
    out: list[tuple[int, str]] = []
    position = start
    while position < len(target):
        key = key_at(target, position)
        out.append((position, key))
        position += len(key)
    return out


def draw(target: str, seed: int, session_id: str, model: TypingModel) -> Typing:
    """The session's draws; the same (target, seed, session_id, model) give the same ones."""
    rng = random.Random(f"replay-typing:{seed}:{session_id}")
    delays: list[float] = []
    pauses: list[bool] = []
    reactions: list[float] = []
    ahead: list[int] = []
    for position in range(len(target)):
        gap = _lognormal(rng, model.key_s, model.key_spread, 0.04, 0.6)
        previous = target[position - 1] if position else ""
        chance = 0.0
        if previous == "\n" or _after_indent(target, position):
            chance = model.line_pause_p
        elif previous in _WORD_ENDS:
            chance = model.word_pause_p
        pause = rng.random() < chance
        if pause:
            gap = _lognormal(rng, model.pause_s, model.pause_spread, 0.3, 4.0)
        if position == 0:
            gap, pause = model.first_pause_s, True
        delays.append(round(gap, 4))
        pauses.append(pause)
        reactions.append(round(_lognormal(rng, model.reaction_s, 0.3, 0.15, 1.0), 4))
        ahead.append(_choice(rng, model.type_ahead))
    return Typing(tuple(delays), tuple(pauses), tuple(reactions), tuple(ahead))


def _after_indent(target: str, position: int) -> bool:
    """`position` is the first character after an auto-indented line start."""
    line_start = target.rfind("\n", 0, position) + 1
    return line_start > 0 and position > line_start and not target[line_start:position].strip()


def _lognormal(rng: random.Random, median: float, sigma: float, low: float, high: float) -> float:
    return min(high, max(low, rng.lognormvariate(math.log(median), sigma)))


def _choice(rng: random.Random, weights: tuple[float, ...]) -> int:
    pick = rng.random() * sum(weights)
    for index, weight in enumerate(weights):
        pick -= weight
        if pick < 0:
            return index
    return len(weights) - 1
