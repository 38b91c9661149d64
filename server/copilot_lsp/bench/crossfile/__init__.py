"""`copilot-lsp bench crossfile`: completions that need another file of the repository.

tasks.py builds the tasks from installed packages (imports.py reads what a module takes
from the package's other modules), run.py runs them through the arms, score.py scores a
completion against the rest of its line, report.py sums up, prints and draws, command.py
holds the options and the run from them.
"""
