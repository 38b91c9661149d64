"""The private members of pygls that lsp/pygls_guard.py relies on are still there: a pygls
upgrade that moves one fails here, by name, instead of in a stuck editor."""

from __future__ import annotations

import inspect

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from copilot_lsp.lsp.pygls_guard import RELIES_ON, CopilotProtocol


def test_every_private_member_relied_on_exists() -> None:
    server = LanguageServer("probe", "0")
    owners = {"LanguageServerProtocol": server.protocol, "LanguageServer": server}
    missing = [
        f"{owner}.{member}"
        for owner, members in RELIES_ON.items()
        for member in members
        if not hasattr(owners[owner], member)
    ]
    assert missing == []
    assert isinstance(server.protocol, LanguageServerProtocol)
    assert isinstance(server.protocol._request_futures, dict)
    assert isinstance(server.protocol._result_types, dict)
    assert isinstance(server.protocol.fm.features, dict)


def test_the_overridden_handler_runner_keeps_its_signature() -> None:
    ours = inspect.signature(CopilotProtocol._execute_handler)
    theirs = inspect.signature(LanguageServerProtocol._execute_handler)
    assert list(ours.parameters) == list(theirs.parameters)


def test_the_replaced_document_handlers_are_the_ones_pygls_registers() -> None:
    """Our handlers replace pygls' own by method name: the names must still be pygls'."""
    for method, name in [
        (types.TEXT_DOCUMENT_DID_OPEN, "lsp_text_document__did_open"),
        (types.TEXT_DOCUMENT_DID_CHANGE, "lsp_text_document__did_change"),
        (types.TEXT_DOCUMENT_DID_CLOSE, "lsp_text_document__did_close"),
    ]:
        builtin = getattr(LanguageServerProtocol, name)
        assert getattr(builtin, "method_name", None) == method, name
