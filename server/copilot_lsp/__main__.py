"""`python -m copilot_lsp` runs the same CLI as the `copilot-lsp` script."""

from copilot_lsp.cli import main

raise SystemExit(main())
