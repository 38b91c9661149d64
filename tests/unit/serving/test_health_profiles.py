"""The health rule a profile carries (`[speculative.health]`), how `engine up` records it,
and how the server finds it again: from the state file to the judgement of its primary."""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from copilot_lsp.engine.health import HealthRule
from copilot_lsp.engine.provider import EngineProvider
from copilot_lsp.engine.state import read_state
from copilot_lsp.serving import launcher
from copilot_lsp.serving.profiles import Profile, available_profiles, load_profile
from copilot_lsp.settings import EngineSettings
from tests.conftest import REPO

DOCS = REPO / "docs"


def suffix_profile(health: dict[str, float] | None) -> dict[str, object]:
    speculative: dict[str, object] = {"method": "suffix", "num_speculative_tokens": 16}
    if health is not None:
        speculative["health"] = health
    return {
        "name": "s",
        "model": {"source": "/models/none", "served_name": "m"},
        "speculative": speculative,
    }


def test_a_profile_without_a_table_gets_its_methods_rule() -> None:
    spec = Profile.model_validate(suffix_profile(None)).speculative
    assert spec is not None and spec.health_rule() == HealthRule("mean_accepted_length", 1.1, 1.35)
    custom = Profile.model_validate(suffix_profile({"threshold": 1.3, "recovery": 1.9}))
    assert custom.speculative is not None
    assert custom.speculative.health_rule() == HealthRule("mean_accepted_length", 1.3, 1.9)


@pytest.mark.parametrize(
    ("method", "health", "message"),
    [
        ("suffix", {"threshold": 0.45}, "mean accepted length (tokens per verification step)"),
        ("suffix", {"threshold": 18}, "1 to 17 with 16 speculative tokens"),
        ("eagle", {"threshold": 1.5}, "acceptance rate (accepted / drafted tokens), 0 to 1"),
        ("suffix", {"threshold": 1.5, "recovery": 1.2}, "between the threshold 1.5 and 17"),
        ("eagle", {"threshold": 0.2, "recovery": 0.1}, "between the threshold 0.2 and 1"),
    ],
)
def test_a_threshold_the_signal_cannot_reach_is_refused_naming_the_range(
    method: str, health: dict[str, float], message: str
) -> None:
    data = suffix_profile(health)
    if method == "eagle":
        data["speculative"] = {
            "method": "eagle",
            "model": "/drafts/e",
            "num_speculative_tokens": 3,
            "health": health,
        }
    with pytest.raises(ValidationError) as refused:
        Profile.model_validate(data)
    assert message in str(refused.value)


def test_every_shipped_profiles_rule_is_the_one_the_docs_derive() -> None:
    """docs/speculative.md's table "Health per method" lists each speculative profile with its
    signal and threshold: the numbers a team reads are the ones the server applies."""
    text = (DOCS / "speculative.md").read_text(encoding="utf-8")
    section = text[text.index("## Health per method") :]
    rows = dict(re.findall(r"^\| `([a-z0-9.-]+)` \| [^|]+ \| ([0-9.]+) \|", section, re.M))
    speculative = [n for n in available_profiles() if load_profile(n).speculative is not None]
    assert sorted(rows) == sorted(speculative)
    for name in speculative:
        spec = load_profile(name).speculative
        assert spec is not None
        assert float(rows[name]) == spec.health_rule().threshold, name


# Serves /health on the port it is given: stands in for vLLM (as in test_launcher).
HEALTHY = """
import http.server, sys
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(60)
def test_engine_up_records_the_rule_and_the_server_judges_the_engine_by_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "engine.py"
    script.write_text(HEALTHY)

    def command(self: Profile, model_path: str, port: int | None = None, *_: object) -> list[str]:
        return [sys.executable, str(script), str(port)]

    monkeypatch.setattr(Profile, "command", command)
    profile = load_profile("local-cpu-suffix")
    state_dir = tmp_path / "state"
    state = launcher.engine_up(profile, port=free_port(), state_dir=state_dir)
    try:
        recorded = read_state(launcher.state_file(state_dir))
        assert recorded is not None and recorded.speculative_method == "suffix"
        assert recorded.health == {
            "signal": "mean_accepted_length",
            "threshold": 1.2,
            "recovery": 1.45,
        }
        provider = EngineProvider(EngineSettings(), state_file=launcher.state_file(state_dir))
        judgement = provider.current().primaries[0].judgement
        assert judgement is not None and judgement.method == "suffix"
        assert judgement.rule == HealthRule("mean_accepted_length", 1.2, 1.45)
        assert judgement.source == "profile local-cpu-suffix (engine up)"
        # Another engine than the embedded one is not judged by the embedded profile.
        other = EngineProvider(
            EngineSettings(url="http://elsewhere:8000/v1"),
            state_file=launcher.state_file(state_dir),
        )
        elsewhere = other.current().primaries[0].judgement
        assert elsewhere is not None and elsewhere.method is None
    finally:
        assert launcher.engine_down(state_dir=state_dir) == state


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_accepted_length": 0.8}, "engine.minAcceptedLength (0.8) is below 1"),
        (
            {"min_accepted_length": 1.5, "recovery_accepted_length": 1.2},
            "set it to 1.5 or more",
        ),
        ({"recovery_accepted_length": 0.9}, "is below 1, so a primary would flap"),
        ({"speculative_method": "lookahead"}, "speculative_method"),
    ],
)
def test_a_wrong_health_setting_is_refused_naming_the_fix(
    fields: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        EngineSettings(**fields)  # type: ignore[arg-type]
    assert message in str(refused.value)
