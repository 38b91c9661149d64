"""Replay benchmark: editing sessions typed keystroke by keystroke into the real server.

The scripted editor that types them lives in one place, client/replay/ (only the client
side imports pygls): session.py (a session, its cursor), schedule.py (the seeded typing
schedule), judge.py (what the user does with a suggestion), editor.py (the editor over
stdio) and wire.py (its server process). Here, the benchmark around it:

sessions.py   editing sessions cut from held-out corpus files (write / hole / edit)
run.py        arms (engine profile x server settings) one after another, repeats, one JSON
figures.py    per-arm figures from the recorded requests (percentiles, tokens, proxy)
report.py     Markdown and plots from the JSON
command.py    `copilot-lsp bench replay`
prompts.py    the same sessions typed for `draft prompts` (the server's prompts recorded)
greedy.py     suffix decoding's greedy outputs against plain, token for token
"""
