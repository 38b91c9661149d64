"""Code that drives the language server from outside, as an editor does (over stdio):
the one-shot `complete` command and the benchmarks' scripted editors.

connection.py  the server process every one of them starts, initializes and stops
driver.py      an editor session: open, edit, ask (`complete`, latency, quality, overhead)
oneshot.py     one completion through a fresh server (`complete`)
typing.py      the typist of `bench load`: many documents, a key at a time
replay/        the scripted editor of `bench replay` (`draft prompts` types its sessions)
"""
