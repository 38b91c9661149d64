"""The replay's scripted editor: editing sessions typed into the real server over stdio as
a user at VS Code would (the benchmark around it: bench/replay/).

session.py    one session: the document, the cursor, the text the user types
schedule.py   the seeded typing schedule: key times, bursts and pauses, reactions
judge.py      what the user does with a shown suggestion, and the accepted-characters proxy
editor.py     the editor: didChange, automatic requests, cancels, Tab and partial accepts
wire.py       its server process (this checkout's or another's, client/connection.py)
"""
