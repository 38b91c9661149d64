"""`copilot-lsp bench latency`: N completions at one cursor through the real server.

command.py holds the options and the run from them, run.py measures, report.py prints.
"""
