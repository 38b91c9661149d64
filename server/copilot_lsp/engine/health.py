"""Whether a speculative engine's drafting pays: the signal each method is judged by, the
threshold it is held to, and the streaks that turn readings into failover and recovery.

Learned drafts (EAGLE, EAGLE-3, Medusa, a draft model) propose a fixed number of tokens per
step, each the draft's best guess: the share of them accepted (acceptance rate) says how well
the draft still matches the target, and the seed's 45% holds for a head of production quality.
N-gram and suffix decoding propose what earlier text suggests, many tokens at once on first
sight of new text, and are worth it by the tokens each verification step yields (mean
accepted length = 1 + accepted / drafts), not by the share of their proposals accepted: the
embedded suffix engine read an acceptance rate of 0.05 on editing traffic while it was the
fastest method there. docs/speculative.md ("Health per method") derives every threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from copilot_lsp.engine.monitor import AcceptanceWindow
from copilot_lsp.settings import (
    ACCEPTANCE_THRESHOLD,
    ACCEPTED_LENGTH_THRESHOLD,
    LENGTH_RECOVERY_MARGIN,
    RECOVERY_MARGIN,
    EngineSettings,
)

Signal = Literal["acceptance_rate", "mean_accepted_length"]
LOOKUP_METHODS = frozenset({"ngram", "suffix"})
"""Methods that propose from earlier text instead of a learned draft."""
SIGNAL_NAMES: dict[Signal, str] = {
    "acceptance_rate": "acceptance rate",
    "mean_accepted_length": "mean accepted length",
}


def signal_for(method: str | None) -> Signal:
    """The signal `method` is judged by; an unknown method as a learned draft (the seed's)."""
    return "mean_accepted_length" if method in LOOKUP_METHODS else "acceptance_rate"


@dataclass(frozen=True, slots=True)
class HealthRule:
    """Fail over while `signal` stays below `threshold`; come back at or above `recovery`."""

    signal: Signal
    threshold: float
    recovery: float

    def as_dict(self) -> dict[str, object]:
        return {"signal": self.signal, "threshold": self.threshold, "recovery": self.recovery}

    @classmethod
    def from_dict(cls, data: object) -> HealthRule | None:
        """The rule a state file recorded; None when it is missing or malformed."""
        if not isinstance(data, dict):
            return None
        signal, threshold, recovery = (data.get(k) for k in ("signal", "threshold", "recovery"))
        if signal not in SIGNAL_NAMES or not all(
            isinstance(v, int | float) for v in (threshold, recovery)
        ):
            return None
        return cls(signal, float(threshold), float(recovery))  # type: ignore[arg-type]


def default_rule(signal: Signal, threshold: float | None = None) -> HealthRule:
    """The built-in rule for `signal`, at `threshold` if given, recovery at the usual margin."""
    if signal == "acceptance_rate":
        low = ACCEPTANCE_THRESHOLD if threshold is None else threshold
        return HealthRule(signal, low, min(1.0, round(low + RECOVERY_MARGIN, 4)))
    low = ACCEPTED_LENGTH_THRESHOLD if threshold is None else threshold
    return HealthRule(signal, low, round(low + LENGTH_RECOVERY_MARGIN, 4))


def signal_value(window: AcceptanceWindow, signal: Signal) -> float | None:
    if signal == "acceptance_rate":
        return window.acceptance_rate
    return window.mean_accepted_length


@dataclass(frozen=True, slots=True)
class Recorded:
    """What `engine up` recorded of the embedded engine's speculation (engine/state.py)."""

    profile: str
    method: str | None
    """The profile's method; "none" for plain decoding; None when the state file predates it."""
    rule: HealthRule | None


@dataclass(frozen=True, slots=True)
class Judgement:
    """How one primary is judged: its method, its rule (None: never), and why."""

    method: str | None
    rule: HealthRule | None
    source: str
    problem: str | None = None
    """A setting that could not apply (said in the log and in `copilot/stats`)."""

    def as_dict(self) -> dict[str, object]:
        return {
            "method": self.method,
            **(self.rule.as_dict() if self.rule else {"signal": None}),
            "source": self.source,
            "problem": self.problem,
        }


def judge(options: EngineSettings, recorded: Recorded | None) -> Judgement:
    """The rule for a primary: `recorded` is the embedded engine's when this primary is it.

    Method: `engine.speculativeMethod`, else the recorded profile's, else unknown (judged as
    a learned draft). Threshold and recovery: the settings for that signal, else the
    profile's (when the method is the profile's), else the built-in ones.
    """
    method: str | None
    if options.speculative_method != "auto":
        method, source = options.speculative_method, "engine.speculativeMethod"
    elif recorded is not None and recorded.method is not None:
        method, source = recorded.method, f"profile {recorded.profile} (engine up)"
    else:
        method = None
        source = (
            f"profile {recorded.profile} recorded no method (restart it with `engine up`)"
            if recorded is not None
            else "method unknown: judged as a learned draft; set engine.speculativeMethod"
        )
    if method == "none":
        return Judgement(method, None, source)
    signal = signal_for(method)
    profile_rule = recorded.rule if recorded is not None and recorded.method == method else None
    if profile_rule is not None and profile_rule.signal != signal:
        profile_rule = None
    low, high = _configured(options, signal)
    if low is not None:
        rule = default_rule(signal, low)
        source += f"; threshold from {_setting_name(signal)}"
    elif profile_rule is not None:
        rule = profile_rule
    else:
        rule = default_rule(signal)
    if high is None:
        return Judgement(method, rule, source)
    if high < rule.threshold:
        problem = (
            f"{_setting_name(signal, recovery=True)} ({high}) is below the failover threshold "
            f"{rule.threshold} ({source}): ignored, recovery at {rule.recovery}; set it to "
            f"{rule.threshold} or more"
        )
        return Judgement(method, rule, source, problem)
    return Judgement(method, HealthRule(signal, rule.threshold, high), source)


def _configured(options: EngineSettings, signal: Signal) -> tuple[float | None, float | None]:
    if signal == "acceptance_rate":
        return options.acceptance_threshold, options.recovery_threshold
    return options.min_accepted_length, options.recovery_accepted_length


def _setting_name(signal: Signal, *, recovery: bool = False) -> str:
    if signal == "acceptance_rate":
        return "engine.recoveryThreshold" if recovery else "engine.acceptanceThreshold"
    return "engine.recoveryAcceptedLength" if recovery else "engine.minAcceptedLength"


Transition = Literal["tripped", "recovered"]


class HealthTracker:
    """One primary's streaks of low and good readings, and whether it is failed over.

    A window with fewer than `min_drafts` drafts decides nothing either way; `trip_after`
    readings in a row below the threshold fail over, `recover_after` at or above the
    recovery level come back, and between the two nothing changes (no flapping).
    """

    def __init__(self, rule: HealthRule, trip_after: int, recover_after: int, min_drafts: int):
        self.rule = rule
        self.trip_after = trip_after
        self.recover_after = recover_after
        self.min_drafts = min_drafts
        self.degraded = False
        self.low_streak = 0
        self.good_streak = 0
        self.value: float | None = None
        """The signal in the latest window that had enough drafts."""
        self.readings = 0
        """Windows that had enough drafts to count (each may move a streak)."""

    def observe(self, window: AcceptanceWindow | None) -> Transition | None:
        if window is None or window.drafts < self.min_drafts:
            return None
        value = signal_value(window, self.rule.signal)
        if value is None:
            return None
        self.value = value
        self.readings += 1
        if not self.degraded:
            self.low_streak = self.low_streak + 1 if value < self.rule.threshold else 0
            if self.low_streak >= self.trip_after:
                self.degraded, self.good_streak = True, 0
                return "tripped"
            return None
        self.good_streak = self.good_streak + 1 if value >= self.rule.recovery else 0
        if self.good_streak >= self.recover_after:
            self.degraded, self.low_streak = False, 0
            return "recovered"
        return None
