"""Sloppy clients: replies of any shape to the server's own requests, replies to ids it never
sent, notifications with params of the wrong types. The server logs each kind once, never
exits, and the request waiting for a bad reply fails in a way it handles.

Two levels: the real `copilot-lsp --stdio` process spoken to in raw JSON (its own request is
`workspace/configuration`, asked again on every `workspace/didChangeConfiguration` without
settings), and the protocol object with the real reader loop for the other requests a server
may send (`window/workDoneProgress/create`, `client/registerCapability`,
`window/showMessageRequest`).
"""

from __future__ import annotations

import asyncio
import io
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from copilot_lsp.lsp import methods
from copilot_lsp.lsp.pygls_guard import CopilotProtocol, read_messages
from copilot_lsp.lsp.server import CopilotServer

pytestmark = pytest.mark.timeout(300)

FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "jsonrpc",
                    "id",
                    "result",
                    "error",
                    "code",
                    "message",
                    "data",
                    "title",
                    "copilot",
                    "engine",
                    "url",
                ]
            )
            | st.text(max_size=8),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
SERVER_REQUESTS: dict[str, Any] = {
    types.WORKSPACE_CONFIGURATION: types.ConfigurationParams(
        [types.ConfigurationItem(section="copilot")]
    ),
    types.WINDOW_WORK_DONE_PROGRESS_CREATE: types.WorkDoneProgressCreateParams(token="warmup"),
    types.CLIENT_REGISTER_CAPABILITY: types.RegistrationParams(
        [types.Registration(id="1", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION)]
    ),
    types.WINDOW_SHOW_MESSAGE_REQUEST: types.ShowMessageRequestParams(
        types.MessageType.Info, "engine down", [types.MessageActionItem("Retry")]
    ),
}
CLIENT_NOTIFICATIONS = [
    types.INITIALIZED,
    types.TEXT_DOCUMENT_DID_OPEN,
    types.TEXT_DOCUMENT_DID_CHANGE,
    types.TEXT_DOCUMENT_DID_CLOSE,
    types.TEXT_DOCUMENT_DID_SAVE,
    types.TEXT_DOCUMENT_WILL_SAVE,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION,
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS,
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
    types.WORKSPACE_DID_CREATE_FILES,
    types.CANCEL_REQUEST,
    types.SET_TRACE,
    types.PROGRESS,
    types.WINDOW_WORK_DONE_PROGRESS_CANCEL,
    types.NOTEBOOK_DOCUMENT_DID_OPEN,
    types.NOTEBOOK_DOCUMENT_DID_CHANGE,
    methods.DID_SHOW,
    methods.DID_PARTIALLY_ACCEPT,
    methods.DID_DISMISS,
    methods.COPILOT_DID_SHOW,
    methods.COPILOT_DID_PARTIALLY_ACCEPT,
    "no/such/notification",
]


@st.composite
def replies(draw: st.DrawFn, msg_id: str) -> dict[str, Any]:
    """A reply to request `msg_id`: any result, any error, odd ids and versions, no body."""
    shape = draw(st.integers(0, 7))
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
    if shape == 0:
        reply["result"] = draw(JSON)
    elif shape == 1:
        reply["error"] = draw(JSON)
    elif shape == 2:
        reply["error"] = {"code": draw(JSON), "message": draw(JSON), "data": draw(JSON)}
    elif shape == 3:
        reply["result"] = [draw(JSON)]  # a list, as workspace/configuration's result is
    elif shape == 4:
        reply["jsonrpc"] = draw(JSON)
        reply["result"] = draw(JSON)
    elif shape == 5:
        # An id the server never sent, or no valid id at all.
        reply["id"] = draw(st.integers() | st.text(max_size=8) | JSON)
        reply[draw(st.sampled_from(["result", "error"]))] = draw(JSON)
    elif shape == 6:
        reply.update(draw(st.dictionaries(st.text(max_size=6), JSON, max_size=3)))
        reply.pop("method", None)
    # shape 7: neither result nor error
    return reply


@st.composite
def notifications(draw: st.DrawFn) -> dict[str, Any]:
    """A client notification whose params have the wrong types (or are any JSON value)."""
    method = draw(st.sampled_from(CLIENT_NOTIFICATIONS))
    if draw(st.booleans()):
        params: Any = draw(JSON)
    else:  # the right field names, wrong values: the usual mistake of a hand-written client
        params = {
            "textDocument": draw(st.one_of(JSON, st.fixed_dictionaries({"uri": JSON}))),
            "contentChanges": draw(JSON),
            "settings": draw(JSON),
            "id": draw(JSON),
            "value": draw(JSON),
            "token": draw(JSON),
            "event": draw(JSON),
            "changes": draw(JSON),
        }
    return {"jsonrpc": "2.0", "method": method, "params": params}


# --- the real server process ----------------------------------------------------------------


class RawClient:
    """`copilot-lsp --stdio` driven in raw JSON by blocking I/O and a reader thread."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "copilot_lsp", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.logs: list[str] = []
        self.popups: list[str] = []
        self._ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = 0
            while True:
                line = stdout.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif line in (b"\r\n", b"\n"):
                    break
            message = json.loads(stdout.read(length))
            if message.get("method") == "window/logMessage":
                self.logs.append(message["params"]["message"])
            elif message.get("method") == "window/showMessage":
                self.popups.append(message["params"]["message"])
            else:
                self.inbox.put(message)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def next(self, timeout_s: float = 20.0) -> dict[str, Any]:
        message = self.inbox.get(timeout=timeout_s)
        assert message is not None, f"the server exited: {self.stderr_tail()}"
        return message

    def request(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request and return its response (server requests meanwhile: answered null)."""
        self._ids += 1
        msg_id = self._ids
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            message = self.next()
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": [None]})

    def server_request(self, method: str) -> dict[str, Any]:
        while True:
            message = self.next()
            if message.get("method") == method and "id" in message:
                return message

    def stderr_tail(self) -> str:
        if self.process.poll() is None or self.process.stderr is None:
            return "(still running)"
        return self.process.stderr.read().decode(errors="replace")[-3000:]


@pytest.fixture
def client(isolated_env: dict[str, str], tmp_path: Path) -> Iterator[RawClient]:
    raw = RawClient(isolated_env)
    try:
        answer = raw.request(
            "initialize",
            {
                "capabilities": {"workspace": {"configuration": True}},
                "rootUri": tmp_path.as_uri(),
                # Nothing listens on port 9: completions fail fast and are still answered.
                "initializationOptions": {"engine": {"url": "http://127.0.0.1:9/v1"}},
            },
        )
        assert "capabilities" in answer["result"]
        raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        first = raw.server_request(types.WORKSPACE_CONFIGURATION)
        raw.send({"jsonrpc": "2.0", "id": first["id"], "result": [None]})
        raw.send(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": DOC,
                        "languageId": "python",
                        "version": 1,
                        "text": "def f():\n    return ",
                    }
                },
            }
        )
        yield raw
    finally:
        if raw.process.poll() is None:
            raw.process.kill()
        raw.process.wait()


DOC = "file:///fuzz/replies.py"


def still_serving(client: RawClient) -> None:
    answer = client.request(
        types.TEXT_DOCUMENT_INLINE_COMPLETION,
        {
            "textDocument": {"uri": DOC},
            "position": {"line": 1, "character": 11},
            "context": {"triggerKind": 1},
        },
    )
    assert "result" in answer or "error" in answer


def shut_down_cleanly(client: RawClient) -> None:
    assert client.request("shutdown", None).get("result") is None
    client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
    assert client.process.wait(timeout=20) == 0
    stderr = client.stderr_tail()
    assert "Traceback" not in stderr, stderr
    dropped = [m for m in client.logs if "dropped a message" in m]
    assert len(dropped) == len(set(dropped)), "a kind of bad message was logged twice"


def test_replies_of_any_shape_to_workspace_configuration(client: RawClient) -> None:
    @FUZZ
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        client.send(
            {
                "jsonrpc": "2.0",
                "method": "workspace/didChangeConfiguration",
                "params": {"settings": None},
            }
        )
        asked = client.server_request(types.WORKSPACE_CONFIGURATION)
        reply = data.draw(replies(asked["id"]))
        client.send(reply)
        if reply.get("id") != asked["id"]:  # the request of ours still waits: answer it
            client.send({"jsonrpc": "2.0", "id": asked["id"], "result": [None]})
        still_serving(client)

    one()
    shut_down_cleanly(client)
    dropped = [m for m in client.logs if "dropped a message" in m]
    assert any("reply to workspace/configuration" in m for m in dropped)
    assert any("unknown request id" in m for m in dropped), dropped


def test_notifications_with_params_of_the_wrong_types(client: RawClient) -> None:
    @FUZZ
    @given(message=notifications())
    def one(message: dict[str, Any]) -> None:
        client.send(message)
        answer = client.request(methods.STATS_REQUEST, None)
        assert "result" in answer, answer

    one()
    still_serving(client)
    shut_down_cleanly(client)
    assert not [p for p in client.popups if "Error in server" in p], client.popups


def test_a_null_configuration_reply_is_no_settings_and_is_logged_once(
    client: RawClient,
) -> None:
    for _ in range(3):
        client.send(
            {
                "jsonrpc": "2.0",
                "method": "workspace/didChangeConfiguration",
                "params": {"settings": None},
            }
        )
        asked = client.server_request(types.WORKSPACE_CONFIGURATION)
        client.send({"jsonrpc": "2.0", "id": asked["id"], "result": None})
        still_serving(client)
    stats = client.request(methods.STATS_REQUEST, None)["result"]
    assert stats["engine"]["url"] == "http://127.0.0.1:9/v1"  # the other layers still apply
    bad = [m for m in client.logs if "reply to workspace/configuration" in m]
    assert len(bad) == 1, client.logs
    shut_down_cleanly(client)


def test_the_same_bad_notification_is_logged_once(client: RawClient) -> None:
    for _ in range(3):
        client.send({"jsonrpc": "2.0", "method": "$/setTrace", "params": {"value": 42}})
    client.request(methods.STATS_REQUEST, None)
    assert len([m for m in client.logs if "$/setTrace" in m]) == 1, client.logs
    shut_down_cleanly(client)


# --- the protocol object, for requests the server process does not send today ---------------


class _Reader:
    """Stands in for pygls' StdinAsyncReader over bytes already received."""

    def __init__(self, data: bytes) -> None:
        self._stream = io.BytesIO(data)

    async def readline(self) -> bytes:
        return self._stream.readline()

    async def readexactly(self, n: int) -> bytes:
        return self._stream.read(n)


def _frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.fixture(scope="module")
def protocol() -> CopilotProtocol:
    server = CopilotServer()
    assert isinstance(server.protocol, CopilotProtocol)
    sent: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            sent.append(data)

        def close(self) -> None:
            pass

    server.protocol.set_writer(Writer())
    return server.protocol


@FUZZ
@given(method=st.sampled_from(sorted(SERVER_REQUESTS)), data=st.data())
def test_replies_of_any_shape_to_every_server_request(
    protocol: CopilotProtocol, method: str, data: st.DataObject
) -> None:
    waiting: Future[Any] = protocol.send_request(method, SERVER_REQUESTS[method], msg_id="ours")
    probe: Future[Any] = protocol.send_request(
        types.WORKSPACE_CONFIGURATION, SERVER_REQUESTS[types.WORKSPACE_CONFIGURATION], msg_id="next"
    )
    reply = data.draw(replies("ours"))
    stream = _frame(reply) + _frame({"jsonrpc": "2.0", "id": "next", "result": [{"a": 1}]})
    asyncio.run(read_messages(threading.Event(), _Reader(stream), protocol))
    assert list(probe.result(timeout=0)) == [{"a": 1}]  # the loop read on after the fuzzed reply
    if reply.get("id") != "ours":
        assert not waiting.done()  # still waiting: that reply was not for it
        protocol._request_futures.pop("ours", None)
        return
    assert waiting.done()
    error = waiting.exception(timeout=0)
    assert error is None or isinstance(error, JsonRpcException)


def test_a_reply_must_not_answer_the_clients_own_request(protocol: CopilotProtocol) -> None:
    """pygls files the client's in-flight request ids and ours in one table."""
    theirs: Future[Any] = Future()
    protocol._request_futures[7] = theirs  # as if the client's request 7 were being handled
    stream = _frame({"jsonrpc": "2.0", "id": 7, "result": "not yours"})
    asyncio.run(read_messages(threading.Event(), _Reader(stream), protocol))
    assert not theirs.done() and protocol._request_futures.pop(7) is theirs
