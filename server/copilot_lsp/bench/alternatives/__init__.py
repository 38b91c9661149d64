"""What alternatives cost: invoked completions with 1 suggestion vs N, side by side.

`python -m copilot_lsp.bench.alternatives`: command.py holds the options and the run from
them, run.py measures, report.py sums up and prints.
"""
