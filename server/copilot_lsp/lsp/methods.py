"""Our own LSP method and command names, for the server and for clients that drive it."""

ACCEPT_COMMAND = "copilot.acceptCompletion"
"""The item command an editor runs when the user accepts a suggestion."""
STATS_REQUEST = "copilot/stats"
"""Rolling latency percentiles, outcome counts, recent timelines and engine state."""
