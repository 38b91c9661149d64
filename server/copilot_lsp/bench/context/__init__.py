"""`copilot-lsp bench context`: parse and context-build latency on large real files.

command.py holds the options and the run from them, run.py measures, report.py prints.
"""
