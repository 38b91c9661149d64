"""`copilot-lsp bench overhead`: the server's own cost per completion, per class of edit.

command.py holds the options and the run from them, edits.py the 5,000-line file and the
edits of each class, run.py measures, report.py prints the table and writes the Markdown
page, inprocess.py runs the same edits in process under cProfile (`--profile`).
"""
