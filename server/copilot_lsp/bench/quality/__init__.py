"""`copilot-lsp bench quality`: SAFIM's Python tasks through the real server and engine.

command.py holds the options and the run from them, run.py completes and scores the tasks
(safim.py loads them, sandbox.py runs the filled-in programs on their unit tests),
report.py sums up and prints.
"""
