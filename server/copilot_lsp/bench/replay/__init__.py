"""Replay benchmark: editing sessions typed keystroke by keystroke into the real server.

sessions.py   editing sessions cut from held-out corpus files (write / hole / edit)
schedule.py   the seeded typing schedule: key times, bursts and pauses, reactions
judge.py      what the user does with a shown suggestion, and the accepted-characters proxy
editor.py     the scripted editor over stdio (didChange, triggers, cancels, Tab accepts)
wire.py       the server process over stdio, and reading its answers
figures.py    per-arm figures from the recorded requests (percentiles, tokens, proxy)
run.py        arms (engine profile x server settings) one after another, repeats, one JSON
report.py     Markdown and plots from the JSON
command.py    `copilot-lsp bench replay`
greedy.py     suffix decoding's greedy outputs against plain, token for token
"""
