"""`copilot-lsp bench load`: replayed typing over stdio, what it costs the server and engine.

command.py holds the options and the run from them, run.py types and measures (the typing
editor itself is client/typing.py), report.py prints.
"""
