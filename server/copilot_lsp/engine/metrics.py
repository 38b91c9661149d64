"""Prometheus text-format parsing and the speculative-decoding figures vLLM's counters give.

The exposition is read by `prometheus_client.parser` (escapes in label values, `}` inside
them, timestamps, NaN/Inf), not by a regex: a label value holding `}` used to drop its sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    labels: Labels
    value: float

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


def parse_metrics(text: str) -> list[Sample]:
    """Samples of a Prometheus exposition; comments and unparsable lines are skipped."""
    try:
        return _samples(text_string_to_metric_families(text))
    except ValueError:  # one bad line fails the whole text: read the samples one by one
        samples: list[Sample] = []
        for line in text.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            try:
                samples += _samples(text_string_to_metric_families(line + "\n"))
            except ValueError:
                continue
        return samples


def _samples(families: Iterable[Metric]) -> list[Sample]:
    return [
        Sample(sample.name, tuple(sorted(sample.labels.items())), float(sample.value))
        for family in families
        for sample in family.samples
    ]


def total(samples: list[Sample], name: str) -> float:
    """Sum of every sample called `name` (across engines and models)."""
    return sum(sample.value for sample in samples if sample.name == name)


@dataclass(frozen=True, slots=True)
class SpecDecodeCounters:
    """vLLM's cumulative speculative-decoding counters at one moment."""

    drafts: float
    draft_tokens: float
    accepted_tokens: float
    accepted_per_position: Mapping[int, float]

    @classmethod
    def from_samples(cls, samples: list[Sample]) -> SpecDecodeCounters:
        per_position: dict[int, float] = {}
        for sample in samples:
            if sample.name == "vllm:spec_decode_num_accepted_tokens_per_pos_total":
                position = sample.label("position")
                if position is not None and position.isdigit():
                    key = int(position)
                    per_position[key] = per_position.get(key, 0.0) + sample.value
        return cls(
            drafts=total(samples, "vllm:spec_decode_num_drafts_total"),
            draft_tokens=total(samples, "vllm:spec_decode_num_draft_tokens_total"),
            accepted_tokens=total(samples, "vllm:spec_decode_num_accepted_tokens_total"),
            accepted_per_position=per_position,
        )

    def summary(self) -> dict[str, object]:
        """Acceptance rate and mean accepted length (1 + accepted / drafts), None when idle."""
        rate = self.accepted_tokens / self.draft_tokens if self.draft_tokens else None
        length = 1.0 + self.accepted_tokens / self.drafts if self.drafts else None
        return {
            "drafts": int(self.drafts),
            "draft_tokens": int(self.draft_tokens),
            "accepted_tokens": int(self.accepted_tokens),
            "acceptance_rate": round(rate, 4) if rate is not None else None,
            "mean_accepted_length": round(length, 3) if length is not None else None,
            "accepted_per_position": {
                str(k): int(v) for k, v in sorted(self.accepted_per_position.items())
            },
        }
