"""Settings sections of the features beside inline completion: next-edit suggestions and the
workspace index (the settings tree itself is in settings.py)."""

from __future__ import annotations

from pydantic import Field, SecretStr

from copilot_lsp.settings_section import Section


class NextEditEngineSettings(Section):
    """A second engine for next edits alone (`nextEditSuggestions.engine`): a model trained
    for them (docs/serving.md, "Next edits in production") beside the completion engine.
    Timeouts and TLS (`engine.connectTimeoutS`, `readTimeoutS`, `backoffMaxS`, `tlsVerify`,
    `caFile`) are the main engine's; it is one endpoint, with no pool and no failover."""

    url: str | None = None
    """OpenAI-compatible base URL next-edit requests go to, e.g. http://127.0.0.1:8001/v1;
    the next-edit format follows the model it serves. Unset: next edits go to the main engine
    (`engine.url`) like inline completions. When it fails, next edits stay quiet (one message
    says so) and inline completions carry on."""
    api_key: SecretStr | None = None
    """Sent to that engine as `Authorization: Bearer …`; never logged. Unset: none (the main
    engine's key is not sent to another server)."""
    model: str | None = None
    """Model name to request from it. Unset: the first model it lists at /v1/models."""


class NextEditSettings(Section):
    """Next-edit suggestions (`textDocument/copilotInlineEdit`, docs/protocol.md): the model
    rewrites a window of lines around the cursor and the server offers the difference."""

    enabled: bool = False
    """Answer next-edit requests at all. Off by default until the next-edit quality suite
    (issue 29) shows the shipped formats help more than they distract: off, every request is
    answered with no edits. GitHub Copilot's clients send `nextEditSuggestions.enabled` at the
    top of their settings; that name is read too."""
    format: str | None = None
    """Prompt format: a file name in configs/nextedit (`qwen-repo`, `zeta`, `fenced`,
    `plain`). Unset: the one that fits the served model (Zed's Zeta, Qwen2.5-Coder and the
    Sweep models; `fenced` for the embedded SmolLM2), else `plain`."""
    lines_above: int = Field(default=10, ge=0, le=100)
    """Lines above the cursor's line in the window the model rewrites."""
    lines_below: int = Field(default=10, ge=0, le=100)
    """Lines below the cursor's line in the window the model rewrites."""
    history_chars: int = Field(default=3000, ge=0, le=100_000)
    """Characters of recent edits (as diffs, newest first, over all files) in the prompt."""
    max_changed_lines: int = Field(default=8, ge=1, le=200)
    """The confidence rule: an answer changing more lines of the window than this is taken
    for a model that lost its way, and nothing is offered. An answer that grows more lines
    than the window's and this many is not read further: its engine stream is closed."""
    min_confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    """The confidence gate: an edit is offered only when the model's tokens that write it
    (its new text; for a deletion, the token written in its place) have a geometric-mean
    probability of at least this. The engine is asked for the answer's token
    log-probabilities (OpenAI `logprobs`); an engine that sends none is not judged by them.
    0 turns the gate off and asks for none. The default is a guess: the embedded model's
    edits on the suite are all wrong, which gives no right edits to set it against
    (docs/benchmarks/nextedit)."""
    engine: NextEditEngineSettings = Field(default_factory=NextEditEngineSettings)
    """The engine next edits go to, when it is not the main one."""


class WorkspaceIndexSettings(Section):
    """The workspace index (`context.workspace`)."""

    enabled: bool = True
    """Index the workspace folders the editor names (`initialize`); off: completions see the
    open documents only."""
    exclude: list[str] = Field(default_factory=list)
    """Globs (gitignore syntax, relative to the workspace folder) never indexed, on top of the
    built-in list of secrets."""
    max_file_bytes: int = Field(default=1_000_000, ge=1, le=100_000_000)
    """Larger files are not indexed."""
    max_files: int = Field(default=20_000, ge=0, le=1_000_000)
    """Files indexed at most, over all workspace folders (in path order)."""
    member_names: bool = True
    """After `module.` (Python, a module the index holds and knows every name of), hold the
    completion to a name that module binds: the engine's structured outputs (vLLM's
    `structured_outputs` regex) let it write nothing else. An engine that refuses the field
    is asked without it from then on (completion/constraint.py)."""
    warm_prefix: bool = False
    """With the index on, send a prompt's head (the code from other files, before the current
    file's) to the engine in the background when a keystroke's request carrying a new head
    was closed before its first token, once per head, while no completion is open: a request
    for one token, so that the next keystroke's request finds the head in the engine's prefix
    cache (completion/prefix_warmup.py); a completion that starts closes it. Off by default:
    on the embedded CPU engine it cost more than it saved (replayed sessions with the index
    on: ghost text at 79 % of typing pauses against 93 % without it, first line there 565
    against 460 ms at the median; docs/benchmarks/replay/prefix-warmup), since vLLM aborts a
    request only between steps and a warm-up whose prefill has begun holds up the next
    keystroke's request. Behind a router,
    whether that request lands on the replica that was warmed is the router's call
    (prefix-aware routing)."""


class ContextSettings(Section):
    """What completions draw on besides the open documents. The workspace index reads the
    other files of the workspace folders in the background (imported modules' API,
    definitions, similar code): the files git would track (or that no `.gitignore` excludes)
    in the languages with a grammar, and never secrets: `.env*`, `*.pem`, `*.key`, `id_rsa*`,
    `*.p12`, `*.pfx`, `.npmrc`, `.pypirc`, `.netrc`, credentials files, nor the `exclude`
    globs (docs/reliability.md)."""

    workspace: WorkspaceIndexSettings = Field(default_factory=WorkspaceIndexSettings)
    """The workspace index."""
