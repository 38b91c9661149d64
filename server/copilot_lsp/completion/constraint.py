"""Holding a completion after `module.` to the names that module binds.

The names come from the workspace index (context/members.py); the engine enforces them
with vLLM's structured outputs: a regular expression the generated text must match, here
one of the names (less what is typed of it already), then anything that does not continue
the identifier. An engine that answers such a request with 400 or 422 (another server, an
older vLLM) is asked without the field from then on, and the request is sent again without
it, so that the user still gets the unconstrained completion.
"""

from __future__ import annotations

import dataclasses
import logging
import re

from copilot_lsp.context.members import Members
from copilot_lsp.engine.types import CompletionRequest
from copilot_lsp.errors import EngineHTTPError

logger = logging.getLogger(__name__)

FIELD = "structured_outputs"
REFUSED = frozenset({400, 422})
"""Statuses an engine answers a body it does not take with."""
REST = r"(?:[^A-Za-z0-9_][\s\S]*)?"
"""After the name: nothing, or anything that does not go on with the identifier."""


def member_regex(members: Members) -> str:
    """The pattern the completion after the cursor must match."""
    rests = sorted({name[len(members.typed) :] for name in members.names})
    alternatives = [re.escape(rest) for rest in rests if rest]
    if not alternatives:
        return REST
    group = "(?:" + "|".join(alternatives) + ")"
    return group + ("?" if "" in rests else "") + REST


class MemberConstraint:
    """Adds the member pattern to engine requests, for the engines that take it."""

    def __init__(self) -> None:
        self._refused: set[str] = set()
        """Engines (base URLs) that refused a structured-outputs request."""

    def apply(
        self, request: CompletionRequest, members: Members | None, engine_url: str
    ) -> CompletionRequest:
        """`request` held to `members` (unchanged without them, for an engine that refused,
        or when the user's `completion.extraBody` sets structured outputs itself)."""
        if members is None or engine_url in self._refused or FIELD in request.extra:
            return request
        extra = {**request.extra, FIELD: {"regex": member_regex(members)}}
        return dataclasses.replace(request, extra=extra)

    def refused(self, error: BaseException, engine_url: str) -> bool:
        """Whether `error`, the answer to a request this class constrained, is the engine
        refusing the constraint; if so that engine is not asked with it again."""
        if not isinstance(error, EngineHTTPError) or error.status_code not in REFUSED:
            return False
        if engine_url not in self._refused:
            self._refused.add(engine_url)
            logger.warning(
                "%s refused a completion held to a module's names (%s); asking it without "
                "them from now on (context.workspace.memberNames)",
                engine_url,
                error.detail[:200],
            )
        return True


def unconstrained(request: CompletionRequest) -> CompletionRequest:
    return dataclasses.replace(
        request, extra={key: value for key, value in request.extra.items() if key != FIELD}
    )
