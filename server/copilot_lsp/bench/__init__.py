"""Benchmarks: commands that print a table and write JSON, never timed tests.

One subpackage per benchmark, each with the same parts: command.py (its options and the run
from them, what `copilot-lsp bench NAME` calls), run.py (the measurement), report.py (the
table, and for some the Markdown page):

context/       parse and context-build latency on large real files
engine/        speculative profiles against plain decoding on the engine alone
latency/       N completions at one cursor through the real server
load/          replayed typing over stdio: engine requests, in-flight, latency, RSS
overhead/      the server's own cost per completion
quality/       SAFIM's Python tasks through the server, scored on their unit tests
crossfile/     completions that need another module of an installed package, four arms
replay/        editing sessions typed into the server, arms side by side
alternatives/  one suggestion against N (`python -m copilot_lsp.bench.alternatives`)

harness.py holds what they share: the engines a benchmark starts for itself (in a state
folder of the run's, never the user's) and the raw results saved and reloaded; naive.py the
prefix-only request straight to the engine that quality and crossfile compare with.
"""
