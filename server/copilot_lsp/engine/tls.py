"""TLS towards a remote engine: verified by default, a private CA on request, and an explicit,
loudly logged escape hatch.

`engine.tls_verify` (default true) checks the engine's certificate against the system's and
certifi's CAs; `engine.ca_file` trusts a PEM bundle of your own CA instead (a GPU server with
an internal certificate); `engine.tls_verify=false` turns checking off, with a warning in the
log, since the API key and the source code in every prompt then travel to whoever answers.
"""

from __future__ import annotations

import functools
import logging
import ssl

import httpx

from copilot_lsp.errors import ConfigError
from copilot_lsp.settings import EngineSettings

logger = logging.getLogger(__name__)


def verify_option(options: EngineSettings) -> ssl.SSLContext | bool:
    """What httpx's `verify=` gets for these engine settings."""
    if not options.tls_verify:
        logger.warning(
            "engine.tls_verify is false: the engine's TLS certificate is NOT checked; the API "
            "key and the prompts can be read by anyone who can intercept the connection"
        )
        return False
    if options.ca_file is None:
        return default_context()
    path = options.ca_file.expanduser()
    try:
        return ssl.create_default_context(cafile=str(path))
    except (OSError, ssl.SSLError) as error:
        raise ConfigError(f"engine.ca_file {path} is not a readable PEM bundle: {error}") from None


@functools.cache
def default_context() -> ssl.SSLContext:
    """The verifying context httpx would make (system and certifi CAs), made once: loading
    the CA bundle takes 100-250 ms here, and every client of the pool (each endpoint, the
    metrics scraper) would otherwise load it again, on the first keystroke's path."""
    return httpx.create_ssl_context()
