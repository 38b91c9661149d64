"""`copilot-lsp engine status`: the engine the server would complete with, as it would pick it.

The server takes `engine.url` from its settings (settings file < `COPILOT_LSP_ENGINE_URL`),
else the embedded engine `engine up` recorded, else http://127.0.0.1:8000/v1; an editor's own
settings can still override that once it starts the server. The report says which of these
it is, whether `engine up` started it, whether it answers, what it serves, which prompt family
the server would use for it (and why), and its speculative-decoding counters.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from copilot_lsp.completion.prompt_format import PromptFormats
from copilot_lsp.engine.client import EngineClient
from copilot_lsp.engine.endpoint import EngineUrl
from copilot_lsp.engine.state import pid_alive, read_state
from copilot_lsp.engine.tls import verify_option
from copilot_lsp.errors import CopilotLspError
from copilot_lsp.settings import Settings, settings_file
from copilot_lsp.settings_layers import load_base

ENV_URL = "COPILOT_LSP_ENGINE_URL"


def status_report(
    *, timeout_s: float = 2.0, window_s: float = 0.0, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The report `engine status` prints (`--json` prints it as it is)."""
    environ = os.environ if environ is None else environ
    loaded = load_base(environ)
    settings = loaded.settings
    state = read_state()
    url = EngineUrl().resolve(settings.engine.url)
    started = state is not None and _same(state.url, url)
    report: dict[str, Any] = {
        "url": url,
        "source": _source(settings, environ, started),
        "started_by_engine_up": started,
        "running": pid_alive(state.pid) if started and state is not None else None,
        "endpoints": settings.engine.endpoints or None,
        "messages": loaded.messages,
    }
    if started and state is not None:
        report.update(profile=state.profile, pid=state.pid, log=state.log_path)
    report.update(asyncio.run(_ask(settings, url, timeout_s)))
    if report["healthy"]:
        from copilot_lsp.serving.launcher import engine_metrics

        report.update(engine_metrics(url, timeout_s, window_s))
    return report


def _source(settings: Settings, environ: Mapping[str, str], started: bool) -> str:
    configured = settings.engine.url
    if configured:
        if _same(environ.get(ENV_URL, ""), configured):
            return ENV_URL
        return f"engine.url in {settings_file()}"
    if started:
        return "the embedded engine (`copilot-lsp engine up`)"
    return "the default (no engine.url set, no engine started by `copilot-lsp engine up`)"


async def _ask(settings: Settings, url: str, timeout_s: float) -> dict[str, Any]:
    """Whether the engine answers /v1/models, what it serves, and the prompt format."""
    options = settings.engine
    client = EngineClient(
        url,
        api_key=options.api_key.get_secret_value() if options.api_key else None,
        model=options.model,
        connect_timeout_s=min(options.connect_timeout_s, timeout_s),
        read_timeout_s=timeout_s,
        verify=verify_option(options),
    )
    found: dict[str, Any] = {"healthy": False, "model": None, "error": None, "prompt": None}
    try:
        try:
            served = await client.served_model()
        except CopilotLspError as error:
            found["error"] = str(error)
        else:
            found.update(healthy=True, model=served.id, model_root=served.root)
        try:
            chosen = await PromptFormats(timeout_s=timeout_s).resolve(settings.prompt, client)
            found["prompt"] = chosen.describe()
        except CopilotLspError as error:  # a broken model family file
            found["prompt"] = {"error": str(error)}
    finally:
        await client.aclose()
    return found


def _same(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def print_status(report: dict[str, Any]) -> None:
    state = "healthy" if report["healthy"] else "NOT reachable"
    print(f"engine:  {state} at {report['url']}")
    print(f"from:    {report['source']}")
    if report["started_by_engine_up"]:
        alive = "running" if report.get("running") else "NOT running"
        print(
            f"started by `copilot-lsp engine up`: profile {report.get('profile')}, pid "
            f"{report.get('pid')} ({alive}), log {report.get('log')}"
        )
    else:
        print("started by `copilot-lsp engine up`: no")
    if report.get("endpoints"):
        print(f"pool:    {', '.join(report['endpoints'])} (engine.endpoints)")
    if report.get("error"):
        print(f"error:   {report['error']}")
        if not report["started_by_engine_up"] and report["source"].startswith("the default"):
            print("         start one with `copilot-lsp engine up`, or set engine.url")
    if report.get("model"):
        root = report.get("model_root")
        print(
            f"model:   {report['model']}"
            + (f" ({root})" if root and root != report["model"] else "")
        )
    prompt = report.get("prompt") or {}
    if "error" in prompt:
        print(f"prompt:  {prompt['error']}")
    elif prompt:
        print(f"prompt:  family {prompt.get('family')} ({_origin(prompt.get('origin'))})")
    _print_counters(report)


def _origin(origin: str | None) -> str:
    return {
        "prompt.family": "set by prompt.family",
        "served model": "fits the served model",
        "default": "default: the engine could not be asked",
    }.get(origin or "", origin or "unknown")


def _print_counters(report: dict[str, Any]) -> None:
    if "spec_decode" in report:
        print(
            f"running requests: {report['requests_running']}  generated tokens: "
            f"{report['generation_tokens']}"
        )
        spec = report["spec_decode"]
        if spec["drafts"]:
            print(
                f"speculative: acceptance {spec['acceptance_rate']}, mean accepted length "
                f"{spec['mean_accepted_length']}, per position {spec['accepted_per_position']}"
            )
        else:
            print("speculative: no drafts (plain decoding)")
    window = report.get("window")
    if window:
        print(
            f"last {window['window_s']:.0f} s: acceptance {window['acceptance_rate']}, mean "
            f"accepted length {window['mean_accepted_length']}, per position "
            f"{window['per_position']} over {window['drafts']} drafts"
        )
