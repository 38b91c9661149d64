"""`copilot-lsp bench overhead`: the server's own cost per completion.

command.py holds the options and the run from them, run.py measures, report.py prints the
table and writes the Markdown page.
"""
