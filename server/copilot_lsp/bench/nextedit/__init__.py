"""`copilot-lsp bench nextedit`: the next-edit quality suite (issue 29) through the real
server: scenarios.py builds it, run.py drives the server and scores, report.py writes the
page."""
