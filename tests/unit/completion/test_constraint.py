"""Holding a completion after `module.` to the module's names (completion/constraint.py)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncGenerator

import pytest

from copilot_lsp.completion.constraint import FIELD, MemberConstraint, member_regex
from copilot_lsp.completion.mode import Mode
from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.completion.request import InlineRequest, inline_request
from copilot_lsp.completion.stages import InlineStages
from copilot_lsp.context.members import Members
from copilot_lsp.engine.types import CompletionRequest, StreamChunk
from copilot_lsp.errors import EngineHTTPError
from copilot_lsp.settings import Settings
from copilot_lsp.telemetry.timeline import Timeline
from tests.fakes.scripted import ScriptedEngine

NAMES = Members("", ("compute_total", "compute", "Ledger", "RATE"), "pkg.mod")


@pytest.mark.parametrize(
    ("members", "text", "allowed"),
    [
        (NAMES, "compute_total(items)", True),
        (NAMES, "compute(1)\n    return x", True),
        (NAMES, "Ledger", True),
        (NAMES, "RATE * 2", True),
        (NAMES, "computer(1)", False),  # goes on with an identifier no name is
        (NAMES, "load_config(path)", False),
        (NAMES, "", False),  # a name must come
        (NAMES, " compute", False),
        (Members("comp", ("compute", "compute_total"), "m"), "ute(1)", True),
        (Members("comp", ("compute", "compute_total"), "m"), "ute_total", True),
        (Members("comp", ("compute", "compute_total"), "m"), "ress()", False),
        (Members("compute", ("compute", "compute_total"), "m"), "(1)", True),
        (Members("compute", ("compute", "compute_total"), "m"), "", True),
        (Members("compute", ("compute", "compute_total"), "m"), "_total", True),
        (Members("compute", ("compute", "compute_total"), "m"), "r()", False),
        (Members("RATE", ("RATE",), "m"), " + 1", True),
        (Members("RATE", ("RATE",), "m"), "S", False),
    ],
)
def test_the_pattern_admits_a_name_then_anything_but_more_identifier(
    members: Members, text: str, allowed: bool
) -> None:
    assert (re.fullmatch(member_regex(members), text) is not None) is allowed


def test_apply_adds_the_pattern_unless_refused_or_set_by_the_user() -> None:
    constraint = MemberConstraint()
    request = CompletionRequest("p", 8, extra={"top_p": 0.9})
    held = constraint.apply(request, NAMES, "http://a/v1")
    assert held.extra[FIELD] == {"regex": member_regex(NAMES)} and held.extra["top_p"] == 0.9
    assert constraint.apply(request, None, "http://a/v1") is request
    own = CompletionRequest("p", 8, extra={FIELD: {"choice": ["x"]}})
    assert constraint.apply(own, NAMES, "http://a/v1") is own
    assert not constraint.refused(EngineHTTPError(500, "boom"), "http://a/v1")
    assert constraint.refused(EngineHTTPError(400, "unknown field"), "http://a/v1")
    assert constraint.apply(request, NAMES, "http://a/v1") is request
    assert constraint.apply(request, NAMES, "http://b/v1").extra[FIELD]


class RefusingEngine(ScriptedEngine):
    """Answers 400 to a request with structured outputs, like a server that does not know
    the field."""

    def stream(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        if FIELD in request.extra:
            return self._refuse(request)
        return super().stream(request)

    async def _refuse(self, request: CompletionRequest) -> AsyncGenerator[StreamChunk, None]:
        self.requests.append(request)
        raise EngineHTTPError(400, "structured_outputs: extra fields not permitted")
        yield StreamChunk("")  # pragma: no cover


TEXT = "import pkg.mod as m\n\nx = m."


def request_with(members: Members | None) -> InlineRequest:
    return dataclasses.replace(
        inline_request(
            "file:///a.py",
            "python",
            TEXT,
            len(TEXT),
            automatic=True,
            options=Settings().completion,
        ),
        members=lambda: members,
    )


async def test_prepare_holds_the_request_to_the_names_the_index_gives() -> None:
    stages = InlineStages(ScriptedEngine([]), PromptFormats())
    settings = Settings()
    held = await stages.prepare(request_with(NAMES), Mode.SINGLE_LINE, settings)
    assert held.constrained and held.request.extra[FIELD] == {"regex": member_regex(NAMES)}
    free = await stages.prepare(request_with(None), Mode.SINGLE_LINE, settings)
    assert not free.constrained and FIELD not in free.request.extra
    off = Settings.model_validate({"context": {"workspace": {"memberNames": False}}})
    plain = await stages.prepare(request_with(NAMES), Mode.SINGLE_LINE, off)
    assert not plain.constrained and FIELD not in plain.request.extra


async def test_an_engine_that_refuses_the_field_is_asked_again_without_it() -> None:
    engine = RefusingEngine(["compute_total(", "items)\n"])
    stages = InlineStages(engine, PromptFormats())
    settings = Settings()
    marks = Timeline.start("file:///a.py", "python", "automatic")
    prepared = await stages.prepare(request_with(NAMES), Mode.SINGLE_LINE, settings)
    streamed = await stages.stream_and_cut(
        prepared, settings.completion, True, marks, lambda _: None
    )
    assert streamed.text == "compute_total(items)"
    assert [FIELD in request.extra for request in engine.requests] == [True, False]
    again = await stages.prepare(request_with(NAMES), Mode.SINGLE_LINE, settings)
    assert not again.constrained  # not asked with it again
