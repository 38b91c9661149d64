"""Per-completion timelines, the JSON-lines log and rolling latency percentiles."""
