"""Scoring one answer of the next-edit suite.

- exact: the buffer after applying the offered edit equals the expected buffer (for a
  scenario that wants no edit: nothing offered).
- delta chrF: chrF (character n-grams 1-6, beta 2) between the change the model made and the
  change expected, each taken as the n-grams it adds and removes (Zed's "delta chrF"); the
  n-grams both buffers share cancel, so only the edits are compared. Both empty: 1.
- quiet: no edit offered where no edit is right.
- reversal: the share of an offered edit's word tokens that undo the user's edits (take out a
  word the user typed, or put back one they deleted).
"""

from __future__ import annotations

import re
from collections import Counter

MAX_N = 6
BETA = 2.0
_WORD = re.compile(r"\w+|[^\w\s]")


def apply_edit(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _ngrams(text: str, n: int) -> Counter[str]:
    return Counter(text[i : i + n] for i in range(len(text) - n + 1))


def _delta(old: str, new: str, n: int) -> Counter[tuple[str, int]]:
    """The n-grams `new` has more of (+1) and fewer of (-1) than `old`, with their counts."""
    before, after = _ngrams(old, n), _ngrams(new, n)
    delta: Counter[tuple[str, int]] = Counter()
    for gram, count in (after - before).items():
        delta[(gram, 1)] = count
    for gram, count in (before - after).items():
        delta[(gram, -1)] = count
    return delta


def delta_chrf(current: str, predicted: str, expected: str) -> float:
    """chrF between the change current -> predicted and the change current -> expected."""
    if predicted == expected:
        return 1.0
    scores = []
    for n in range(1, MAX_N + 1):
        made, wanted = _delta(current, predicted, n), _delta(current, expected, n)
        total_made, total_wanted = sum(made.values()), sum(wanted.values())
        if not total_made and not total_wanted:
            continue
        if not total_made or not total_wanted:
            scores.append(0.0)
            continue
        matched = sum((made & wanted).values())
        precision, recall = matched / total_made, matched / total_wanted
        if not matched:
            scores.append(0.0)
            continue
        beta2 = BETA * BETA
        scores.append((1 + beta2) * precision * recall / (beta2 * precision + recall))
    return sum(scores) / len(scores) if scores else 1.0


def _words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(text))


def reversal(before: str, current: str, predicted: str) -> float:
    """The share of the offered edit's tokens (current -> predicted) that undo the user's
    edits (before -> current); 0 when nothing is offered."""
    was, now, next_ = _words(before), _words(current), _words(predicted)
    user_added, user_removed = now - was, was - now
    taken_out, put_in = now - next_, next_ - now
    total = sum(taken_out.values()) + sum(put_in.values())
    if not total:
        return 0.0
    undone = sum((taken_out & user_added).values()) + sum((put_in & user_removed).values())
    return undone / total
