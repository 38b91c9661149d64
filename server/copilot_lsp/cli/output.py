"""What every command module shares: progress on stderr, and help that shows defaults."""

from __future__ import annotations

import argparse
import sys


def say(message: str) -> None:
    """Progress for the user: stderr, so stdout stays the command's result."""
    print(message, file=sys.stderr, flush=True)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Each option's default from its definition, shown once in its help; none shown for an
    unset option (None), a switch (False) or an empty list, whose help says what that means."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or action.default == []:
            return action.help
        return super()._get_help_string(action)
