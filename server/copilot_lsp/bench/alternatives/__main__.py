"""`python -m copilot_lsp.bench.alternatives`: see command.py."""

import sys

from copilot_lsp.bench.alternatives.command import main

sys.exit(main())
