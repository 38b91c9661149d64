// End-to-end test of the VS Code extension in real VS Code (code-server), driven by headless
// Chromium through puppeteer-core, against the real embedded engine. Run by run.sh
// (`make test-vscode-e2e`) with Node 24.
//
// 1. Starts the embedded engine with its own state dir on VSCODE_E2E_ENGINE_PORT (8452).
// 2. Installs dist/copilot-lsp.vsix into a fresh code-server profile whose settings point
//    copilotLsp.client.serverPath at .venv/bin/copilot-lsp and copilotLsp.engine.url at that engine.
// 3. Opens a workspace of Python files in code-server (VSCODE_E2E_PORT, 8453) in Chromium.
// 4. For each file (one warm-up, then VSCODE_E2E_TRIES timed): opens it, puts the cursor at the
//    end of its last line (a function header), presses Enter (a new body line) and times the
//    keystroke to the first ghost text in the editor DOM; then presses Tab, saves, and checks
//    that the file on disk contains the suggestion. A try fails when its ghost text vanishes:
//    seen, then empty when settled or for longer than VSCODE_E2E_BLIP_MS before being replaced.
// 4b. With VSCODE_E2E_SCRIPTED=1: the engine is the scripted one of tests/fakes/nextedit_engine.py
//    (the embedded 135M model cannot produce right next edits), next edits are on, and after
//    the tries one more file is opened where the user renames a parameter: the server's next
//    edit renames its use on the next line, away from the cursor; the run checks that it is
//    drawn as a decoration (the old name struck through, the new one after it), that Escape
//    dismisses it and a change brings it back, that Tab applies it (the saved file holds it)
//    and that the server recorded it dismissed, shown and accepted. Then, in another file, a
//    next edit on the cursor's line after the cursor shows as ghost text and Tab applies it.
// 5. Checks the extension's status bar item (shown, with a latency from copilot/stats).
// 6. Prints the median keystroke-to-first-ghost-text and writes it as JSON to VSCODE_E2E_JSON
//    (default docs/benchmarks/vscode-first-ghost.json); stops everything, also on failure.
//
// Environment: VSCODE_E2E_JSON, VSCODE_E2E_TRIES (5), VSCODE_E2E_ENGINE_PORT (8452),
// VSCODE_E2E_PORT (8453), VSCODE_E2E_ENGINE_URL (an engine already running: start none),
// VSCODE_E2E_SETTLE_MS (5000), VSCODE_E2E_BLIP_MS (300),
// VSCODE_E2E_KEEP=1 (keep the temporary folder: logs, screenshots), VSCODE_E2E_SCRIPTED=1 (the
// scripted engine and the next-edit scenario; the JSON only where VSCODE_E2E_JSON names it),
// COPILOT_LSP_BIN (default <repo>/.venv/bin/copilot-lsp).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import chromium from "@sparticuz/chromium";
import puppeteer from "puppeteer-core";
import { vanishing } from "./vanish.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const EXTENSION = resolve(HERE, "..");
const REPO = resolve(EXTENSION, "../..");
const BIN = process.env.COPILOT_LSP_BIN ?? join(REPO, ".venv/bin/copilot-lsp");
const VSIX = process.env.VSCODE_E2E_VSIX ?? join(EXTENSION, "dist/copilot-lsp.vsix");
const CODE_SERVER_PKG = join(HERE, "code-server/node_modules/code-server");
const CODE_SERVER = join(CODE_SERVER_PKG, "out/node/entry.js");
const TRIES = Number(process.env.VSCODE_E2E_TRIES ?? "5");
const ENGINE_PORT = Number(process.env.VSCODE_E2E_ENGINE_PORT ?? "8452");
const PORT = Number(process.env.VSCODE_E2E_PORT ?? "8453");
const JSON_OUT = resolve(REPO, process.env.VSCODE_E2E_JSON ?? "docs/benchmarks/vscode-first-ghost.json");
const KEEP = process.env.VSCODE_E2E_KEEP === "1";
// VSCODE_E2E_SCRIPTED=1: the scripted engine (deterministic completions and next edits).
const SCRIPTED = process.env.VSCODE_E2E_SCRIPTED === "1";
// VSCODE_E2E_ENGINE_URL: use an engine that is already running instead of starting one.
const OWN_ENGINE = !process.env.VSCODE_E2E_ENGINE_URL && !SCRIPTED;
let ENGINE_URL = process.env.VSCODE_E2E_ENGINE_URL ?? `http://127.0.0.1:${ENGINE_PORT}/v1`;
const WRITE_JSON = !SCRIPTED || Boolean(process.env.VSCODE_E2E_JSON);
const PYTHON = join(REPO, ".venv/bin/python");
// The next-edit scenario's file: the user renames `x` to `count` on line 1; the scripted
// engine's next edit renames its use on line 2.
const RENAME_FILE = "rename.py";
const RENAME_TEXT = "def scale(x, factor):\n    return x * factor\n\n\nprint(scale(2, 3))\n";
const RENAMED_TEXT = RENAME_TEXT.replaceAll("x", "count");
// The inline one: the user annotates `width`; the next edit annotates `height` on the same
// line, after the cursor: an insertion, which VS Code shows as ghost text.
const ANNOTATE_FILE = "annotate.py";
const ANNOTATE_TEXT = "def area(width, height):\n    return width * height\n";
const ANNOTATED_TEXT = ANNOTATE_TEXT.replace("width, height", "width: int, height: int");
const STATUS_ID = "copilot-lsp.copilot-lsp"; // publisher.name: the status bar item's DOM id
const GHOST_WAIT_MS = 30_000;
// After opening the first file: VS Code creates its inline-suggestion controller lazily, and a
// keystroke before that asks no provider at all.
const OPEN_WAIT_MS = Number(process.env.VSCODE_E2E_OPEN_WAIT_MS ?? "3000");
// Quiet time that counts as settled: longer than a preview waits for its final block here.
const SETTLE_MS = Number(process.env.VSCODE_E2E_SETTLE_MS ?? "5000");
// Ghost text once seen may be gone this long (the swap of preview for final block hides it and
// draws the block: a few ms); longer, or gone when settled, and the try fails: it vanished.
const BLIP_MS = Number(process.env.VSCODE_E2E_BLIP_MS ?? "300");

const started = Date.now();
const work = mkdtempSync(join(tmpdir(), "copilot-vscode-e2e-"));
const dirs = {
  state: join(work, "state"),
  data: join(work, "user-data"),
  extensions: join(work, "extensions"),
  workspace: join(work, "workspace"),
};
for (const dir of Object.values(dirs)) {
  mkdirSync(dir, { recursive: true });
}
const engineEnv = { ...process.env, COPILOT_LSP_STATE_DIR: dirs.state };

function log(message) {
  process.stderr.write(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
}

function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ["ignore", 2, 2], env: engineEnv, ...options });
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status ?? result.signal}`);
  }
  return result;
}

async function waitFor(what, predicate, timeoutMs, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await sleep(everyMs);
  }
}

function summary(values) {
  const sorted = values.filter((v) => typeof v === "number").sort((a, b) => a - b);
  if (sorted.length === 0) {
    return { n: 0 };
  }
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const round = (v) => Math.round(v * 10) / 10;
  return { n: sorted.length, median: round(median), min: round(sorted[0]), max: round(sorted.at(-1)) };
}

// The workspace: the first 18 lines of examples/sample.py, then a function header per file (as
// editor-extensions/neovim/bench/first_ghost.lua does), so every try is a fresh completion.
function writeWorkspace() {
  const base = readFileSync(join(REPO, "examples/sample.py"), "utf8").split("\n").slice(0, 18).join("\n");
  const files = [];
  for (let index = 0; index <= TRIES; index += 1) {
    const name = `scale_${index}.py`;
    const header = `def scale_${index}(items: list[Item], factor: float) -> list[Item]:`;
    const text = `${base}\n\n\n${header}`; // no final newline: Ctrl+End lands after the header
    writeFileSync(join(dirs.workspace, name), text);
    files.push({ name, path: join(dirs.workspace, name), text });
  }
  if (SCRIPTED) {
    writeFileSync(join(dirs.workspace, RENAME_FILE), RENAME_TEXT);
    writeFileSync(join(dirs.workspace, ANNOTATE_FILE), ANNOTATE_TEXT);
  }
  return files;
}

function writeSettings() {
  const settings = {
    "copilotLsp.client.serverPath": BIN,
    "copilotLsp.client.serverArgs": [process.env.VSCODE_E2E_SERVER_VERBOSITY ?? "-v", "--log-file", join(work, "server.log")],
    "copilotLsp.engine.url": ENGINE_URL,
    "copilotLsp.client.statusIntervalS": 1,
    "copilotLsp.nextEditSuggestions.enabled": SCRIPTED,
    "editor.inlineSuggest.enabled": true,
    // Nothing else may take Tab or cover the ghost text.
    "editor.quickSuggestions": { other: "off", comments: "off", strings: "off" },
    "editor.suggestOnTriggerCharacters": false,
    "editor.wordBasedSuggestions": "off",
    "editor.parameterHints.enabled": false,
    "editor.hover.enabled": false,
    "editor.formatOnSave": false,
    "files.insertFinalNewline": false,
    "files.trimTrailingWhitespace": false,
    "files.autoSave": "off",
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.disableAIFeatures": true,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
  };
  // code-server is a remote window: settings of scope machine(-overridable), such as
  // copilotLsp.client.serverPath and engine.url, are read from the remote's Machine settings, not User.
  for (const scope of ["User", "Machine"]) {
    mkdirSync(join(dirs.data, scope), { recursive: true });
    writeFileSync(join(dirs.data, scope, "settings.json"), JSON.stringify(settings, null, 2));
  }
}

function codeServerArgs() {
  return [
    CODE_SERVER,
    "--config", join(work, "code-server.yaml"), // not ~/.config/code-server
    "--user-data-dir", dirs.data,
    "--extensions-dir", dirs.extensions,
    "--disable-telemetry",
    "--disable-update-check",
  ];
}

async function startCodeServer() {
  const out = openSync(join(work, "code-server.log"), "a");
  const child = spawn(
    process.execPath,
    [
      ...codeServerArgs(),
      "--bind-addr", `127.0.0.1:${PORT}`,
      "--auth", "none",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--ignore-last-opened",
      dirs.workspace,
    ],
    { stdio: ["ignore", out, out], env: engineEnv, detached: true },
  );
  child.on("exit", (code, signal) => log(`code-server exited (${code ?? signal})`));
  await waitFor(
    `code-server on port ${PORT} (${join(work, "code-server.log")})`,
    async () => {
      if (child.exitCode !== null) {
        throw new Error(`code-server exited with ${child.exitCode}; see ${join(work, "code-server.log")}`);
      }
      try {
        return (await fetch(`http://127.0.0.1:${PORT}/healthz`)).ok;
      } catch {
        return false;
      }
    },
    60_000,
  );
  return child;
}

function stopProcessGroup(child) {
  if (child && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}

// ---- page-side helpers (run in the browser) -------------------------------------------------

function installProbe() {
  const probe = { armed: false, pressed: null, first: null, last: null, text: "", timeline: [] };
  window.__e2e = probe;
  const read = () => {
    const editor = document.querySelector(".editor-group-container.active .monaco-editor") ?? document;
    const parts = [];
    const inline = [...editor.querySelectorAll(".ghost-text-decoration, .ghost-text-decoration-preview")]
      .filter((node) => !node.closest(".ghost-text-hidden"))
      .map((node) => node.textContent)
      .join("");
    parts.push(inline);
    // Further lines: spans of class ghost-text, one container per line, in document order.
    const lines = new Map();
    for (const span of editor.querySelectorAll("span.ghost-text")) {
      const line = span.closest(".view-line") ?? span.parentElement;
      lines.set(line, (lines.get(line) ?? "") + span.textContent);
    }
    parts.push(...lines.values());
    const text = parts.join("\n").replace(/\u00a0/g, " ");
    return text.trim() ? text : "";
  };
  probe.read = read;
  document.addEventListener(
    "keydown",
    (event) => {
      if (probe.armed && event.key === "Enter") {
        probe.armed = false;
        probe.pressed = performance.now();
      }
    },
    true,
  );
  const check = () => {
    if (probe.pressed === null) {
      return;
    }
    const text = read();
    if (text && probe.first === null) {
      probe.first = performance.now();
    }
    if (text !== probe.text) {
      probe.text = text;
      probe.last = performance.now();
      probe.timeline.push([Math.round(probe.last - probe.pressed), text]);
    }
  };
  new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
}

function statusItem(id) {
  const item = document.getElementById(id);
  if (!item) {
    return null;
  }
  const rect = item.getBoundingClientRect();
  return {
    text: item.textContent.replace(/\u00a0/g, " ").trim(),
    label: item.getAttribute("aria-label") ?? "",
    icon: [...item.querySelectorAll(".codicon")].map((node) => node.className).join(" "),
    visible: rect.width > 0 && rect.height > 0 && getComputedStyle(item).display !== "none",
  };
}

// ---- the test -------------------------------------------------------------------------------

const checks = [];
function check(name, ok, detail = "") {
  checks.push({ name, ok, detail });
  log(`${ok ? "PASS" : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
}

// The warm-up's outcome is only reported: it absorbs the first-time costs (engine caches, and
// VS Code instantiating its inline-suggestion controller lazily after the first editor opens).
function note(name, ok, detail = "") {
  log(`${ok ? "ok" : "NOTE (warm-up, not counted): no"} ${name}${detail ? `: ${detail}` : ""}`);
}

async function openFile(page, file) {
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyP");
  await page.keyboard.up("Control");
  await page.waitForSelector(".quick-input-widget input", { visible: true, timeout: 15_000 });
  await page.keyboard.type(file.name);
  await waitFor(
    `${file.name} focused in quick open`,
    () =>
      page.evaluate(
        // The focused row, not any row: quick open lists recent files first and filters late.
        (name) => document.querySelector(".quick-input-widget .monaco-list-row.focused")?.textContent.includes(name),
        file.name,
      ),
    15_000,
    100,
  );
  await page.keyboard.press("Enter");
  await waitFor(
    `${file.name} in the editor`,
    () =>
      page.evaluate(
        (name) => {
          const tab = document.querySelector(".editor-group-container.active .tab.active");
          const editor = document.querySelector(".editor-group-container.active .monaco-editor.focused");
          return Boolean(tab && tab.textContent.includes(name) && editor);
        },
        file.name,
      ),
    15_000,
  );
  await page.keyboard.down("Control");
  await page.keyboard.press("End");
  await page.keyboard.up("Control");
}

async function oneTry(page, file, index) {
  const verdict = index === 0 ? note : check;
  await openFile(page, file);
  await sleep(index === 0 ? OPEN_WAIT_MS : 300); // let the open settle (didOpen; nothing typed yet)
  await page.evaluate(() => {
    Object.assign(window.__e2e, { armed: true, pressed: null, first: null, last: null, text: "", timeline: [] });
  });
  await page.keyboard.press("Enter");
  const sample = { file: file.name, first_ghost_ms: null, settled_ms: null, accepted: false };
  try {
    await page.waitForFunction(() => window.__e2e.first !== null, { timeout: GHOST_WAIT_MS, polling: 50 });
  } catch {
    verdict(`ghost text appears (${file.name})`, false, `none within ${GHOST_WAIT_MS} ms`);
    await page.screenshot({ path: join(work, `no-ghost-${index}.png`) });
    return sample;
  }
  // Let the preview be swapped for the final block (no change for SETTLE_MS, at most 20 s or
  // three times SETTLE_MS).
  await waitFor(
    "the ghost text to settle",
    () => page.evaluate((quiet) => performance.now() - window.__e2e.last > quiet, SETTLE_MS),
    Math.max(20_000, 3 * SETTLE_MS),
    100,
  ).catch(() => undefined);
  const probe = await page.evaluate(() => {
    const p = window.__e2e;
    const now = performance.now() - p.pressed;
    return { first: p.first - p.pressed, last: p.last - p.pressed, now, text: p.read(), timeline: p.timeline };
  });
  if (process.env.VSCODE_E2E_DEBUG_DOM) {
    const html = await page.evaluate(() =>
      [...document.querySelectorAll("[class*=ghost]")].map((n) => `${n.className} :: ${n.outerHTML.slice(0, 600)}`),
    );
    log(`ghost DOM:\n${html.join("\n")}`);
  }
  sample.first_ghost_ms = Math.round(probe.first * 10) / 10;
  sample.settled_ms = Math.round(probe.last * 10) / 10;
  sample.ghost_text = probe.text;
  // How often the ghost text changed while it streamed (1: VS Code kept the first text shown).
  sample.ghost_texts_seen = new Set(probe.timeline.map(([, text]) => text).filter(Boolean)).size;
  sample.timeline = probe.timeline.map(([ms, text]) => [ms, text.length]); // [ms, characters]
  // The ghost text stays until something replaces it: seen once, it is never gone for longer
  // than the swap's blip, nor gone when settled.
  const vanish = vanishing([...probe.timeline, [Math.round(probe.now), probe.text]], probe.now, BLIP_MS);
  sample.vanished = vanish.vanished;
  sample.vanished_gaps = vanish.gaps; // [ms since Enter, ms without ghost text]
  verdict(
    `ghost text stays until replaced (${file.name})`,
    !vanish.vanished,
    vanish.vanished
      ? `${vanish.gone_when_settled ? "gone when settled" : "gone"}; gaps ${JSON.stringify(vanish.gaps)}`
      : `longest gap ${vanish.longest_gap_ms} ms`,
  );
  verdict(
    `ghost text appears (${file.name})`,
    Boolean(probe.text),
    `${sample.first_ghost_ms} ms: ${JSON.stringify(probe.text.slice(0, 80))}`,
  );
  if (!probe.text) {
    return sample;
  }
  // Tab accepts it; the saved file then holds the suggestion on the new body line.
  await page.keyboard.press("Tab");
  await waitFor("the ghost text to go", () => page.evaluate(() => window.__e2e.read() === ""), 5_000).catch(
    () => undefined,
  );
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyS");
  await page.keyboard.up("Control");
  let saved = file.text;
  await waitFor(
    `${file.name} saved`,
    () => {
      saved = readFileSync(file.path, "utf8");
      return saved !== file.text;
    },
    10_000,
  ).catch(() => undefined);
  const firstLine = probe.text.split("\n")[0].trim();
  const added = saved.startsWith(file.text) ? saved.slice(file.text.length) : "";
  // The body line: Enter's indentation, then the suggestion's first line.
  const bodyLine = added.split("\n")[1] ?? "";
  sample.accepted = added !== "" && bodyLine.trim().startsWith(firstLine);
  sample.document_after = added;
  verdict(`Tab accepts (${file.name})`, sample.accepted, `inserted ${JSON.stringify(added.slice(0, 80))}`);
  return sample;
}

// A next edit the server's record (state/completions.jsonl) has displayed and with
// `feedback`, or null.
function feedbackOf(feedback) {
  const log = join(dirs.state, "completions.jsonl");
  const lines = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").map((line) => JSON.parse(line)) : [];
  const shown = lines.filter((entry) => entry.mode === "next-edit" && entry.outcome === "shown").map((entry) => entry.id);
  const about = (id) => Object.assign({ id }, ...lines.filter((entry) => entry.id === id && !entry.mode));
  return shown.map(about).find((entry) => entry.displayed && entry.feedback === feedback) ?? null;
}

// Saves the active editor and waits until `path` holds something other than `before`.
async function saveAndRead(page, path, before) {
  await page.keyboard.down("Control");
  await page.keyboard.press("KeyS");
  await page.keyboard.up("Control");
  let saved = before;
  await waitFor(
    `${path} saved`,
    () => {
      saved = readFileSync(path, "utf8");
      return saved !== before;
    },
    10_000,
  ).catch(() => undefined);
  return saved;
}

// The user annotates `width`; the next edit, on the cursor's line after the cursor, is shown
// as ghost text (an inline completion over the range from the cursor to the edit), and Tab
// (VS Code's own accept) applies it.
async function inlineNextEditTry(page) {
  const file = { name: ANNOTATE_FILE, path: join(dirs.workspace, ANNOTATE_FILE) };
  await openFile(page, file);
  await sleep(1000);
  await page.keyboard.down("Control");
  await page.keyboard.press("Home");
  await page.keyboard.up("Control");
  for (let i = 0; i < "def area(width".length; i += 1) {
    await page.keyboard.press("ArrowRight");
  }
  await page.keyboard.type(": int");
  const ghost = await waitFor(
    "the next edit as ghost text",
    async () => {
      const text = await page.evaluate(() => window.__e2e.read());
      return text.includes(": int") ? text : null;
    },
    GHOST_WAIT_MS,
    100,
  ).catch(async (error) => {
    await page.screenshot({ path: join(work, "no-inline-next-edit.png") });
    return { error: String(error) };
  });
  const decorated = await page.evaluate(nextEditProbe);
  check(
    "a next edit after the cursor on its line shows as ghost text, not decorations",
    typeof ghost === "string" && decorated.struck.length === 0 && decorated.after.length === 0,
    JSON.stringify({ ghost, decorated }),
  );
  if (typeof ghost !== "string") {
    return { ghost };
  }
  await page.keyboard.press("Tab");
  const saved = await saveAndRead(page, file.path, ANNOTATE_TEXT);
  check("Tab applies the ghost-text next edit", saved === ANNOTATED_TEXT, JSON.stringify(saved));
  return { ghost, applied: saved === ANNOTATED_TEXT };
}

let engineUp = false;
let codeServer;
let scriptedEngine;

// The scripted engine (tests/fakes/nextedit_engine.py) on a free port; resolves to its URL.
async function startScriptedEngine() {
  scriptedEngine = spawn(PYTHON, ["-m", "tests.fakes.nextedit_engine"], {
    cwd: REPO,
    stdio: ["ignore", "pipe", 2],
    env: engineEnv,
    detached: true,
  });
  return new Promise((done, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error("the scripted engine did not start within 30 s")), 30_000);
    scriptedEngine.stdout.on("data", (data) => {
      out += data;
      const found = /^url (\S+)$/m.exec(out);
      if (found) {
        clearTimeout(timer);
        done(found[1]);
      }
    });
    scriptedEngine.on("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`the scripted engine exited with ${code}`));
    });
  });
}

// What the active editor draws as next-edit decorations: text struck through, and the text
// of `after` decorations (CSS ::after content, or injected text).
function nextEditProbe() {
  const editor = document.querySelector(".editor-group-container.active .monaco-editor");
  const struck = [];
  const after = [];
  for (const span of editor?.querySelectorAll(".view-lines span") ?? []) {
    if (getComputedStyle(span).textDecorationLine.includes("line-through") && span.children.length === 0) {
      struck.push(span.textContent);
    }
    const content = getComputedStyle(span, "::after").content;
    if (content && content !== "none" && content !== "normal") {
      after.push(content.replace(/^"|"$/g, ""));
    }
  }
  return { struck, after };
}

// The user renames the parameter `x` to `count` on the first line; the next edit renames its
// use on the second line (away from the cursor): drawn as decorations, applied by Tab.
async function nextEditTry(page) {
  const file = { name: RENAME_FILE, path: join(dirs.workspace, RENAME_FILE) };
  await openFile(page, file);
  await sleep(1000);
  await page.keyboard.down("Control");
  await page.keyboard.press("Home");
  await page.keyboard.up("Control");
  for (let i = 0; i < "def scale(".length; i += 1) {
    await page.keyboard.press("ArrowRight");
  }
  await page.keyboard.down("Shift");
  await page.keyboard.press("ArrowRight");
  await page.keyboard.up("Shift");
  const typed = performance.now();
  await page.keyboard.type("count");
  const decorations = (what) =>
    waitFor(
      what,
      async () => {
        const probe = await page.evaluate(nextEditProbe);
        return probe.struck.includes("x") && probe.after.some((text) => text.includes("count")) ? probe : null;
      },
      GHOST_WAIT_MS,
      100,
    ).catch(async (error) => {
      await page.screenshot({ path: join(work, "no-next-edit.png") });
      return { error: String(error), ...(await page.evaluate(nextEditProbe)) };
    });
  let drawn = await decorations("the next edit's decorations");
  const sample = { shown_ms: Math.round(performance.now() - typed), drawn, applied: false };
  check("next edit drawn as decorations away from the cursor", !drawn.error, JSON.stringify(drawn));
  if (drawn.error) {
    return sample;
  }
  // Escape dismisses it (the server records it dismissed); a change brings the edit back.
  await page.keyboard.press("Escape");
  const gone = await waitFor("Escape to take the decorations away", async () => {
    const probe = await page.evaluate(nextEditProbe);
    return probe.struck.length === 0 && probe.after.length === 0;
  }, 5_000).catch(() => false);
  const dismissed = await waitFor("the dismissed next edit's record", () => feedbackOf("dismissed"), 5_000).catch(() => null);
  check("Escape dismisses the next edit", gone && Boolean(dismissed), JSON.stringify(dismissed));
  await page.keyboard.type(" ");
  await page.keyboard.press("Backspace");
  drawn = await decorations("the next edit again after a change");
  check("a change brings the next edit back", !drawn.error, JSON.stringify(drawn));
  if (drawn.error) {
    return sample;
  }
  await page.keyboard.press("Tab");
  await waitFor("the decorations to go", async () => (await page.evaluate(nextEditProbe)).struck.length === 0, 5_000).catch(
    () => undefined,
  );
  const saved = await saveAndRead(page, file.path, RENAME_TEXT);
  sample.applied = saved === RENAMED_TEXT;
  sample.document_after = saved;
  check("Tab applies the next edit", sample.applied, JSON.stringify(saved));
  const left = await page.evaluate(nextEditProbe);
  check("the decorations go once it is applied", left.struck.length === 0 && left.after.length === 0, JSON.stringify(left));
  // The server heard it shown (didShowInlineEdit) and accepted (its command): its record says so.
  const record = await waitFor("the next edit's record with its feedback", () => feedbackOf("accepted"), 5_000).catch(
    () => null,
  );
  check("the server records the next edit shown and accepted", Boolean(record), JSON.stringify(record));
  return sample;
}

function engineDown() {
  if (engineUp) {
    engineUp = false;
    log("engine down");
    spawnSync(BIN, ["engine", "down"], { stdio: ["ignore", 2, 2], env: engineEnv });
  }
}

async function main() {
  let browser;
  let page;
  const report = {
    tries: TRIES,
    definition:
      "first_ghost_ms: from the Enter keydown in the page (a new body line under a function " +
      "header) to the first ghost-text DOM node in the editor; settled_ms: to its last change " +
      "before Tab; one warm-up try not counted",
    engine: OWN_ENGINE ? `embedded, port ${ENGINE_PORT}` : ENGINE_URL,
    code_server: JSON.parse(readFileSync(join(CODE_SERVER_PKG, "package.json"), "utf8")).version,
    node: process.version,
  };
  try {
    for (const [what, path] of [["the server", BIN], ["the .vsix (make vscode)", VSIX], ["code-server", CODE_SERVER]]) {
      if (!existsSync(path)) {
        throw new Error(`${what} is missing: ${path}`);
      }
    }
    log(`work folder ${work}`);
    if (OWN_ENGINE) {
      log("engine prepare");
      run(BIN, ["engine", "prepare"]);
      log(`engine up on port ${ENGINE_PORT} (state ${dirs.state}; minutes on a small CPU)`);
      engineUp = true;
      run(BIN, ["engine", "up", "--profile", "local-cpu", "--port", String(ENGINE_PORT)]);
    } else if (SCRIPTED) {
      ENGINE_URL = await startScriptedEngine();
      report.engine = `scripted (tests/fakes/nextedit_engine.py) at ${ENGINE_URL}`;
      log(`scripted engine at ${ENGINE_URL}`);
    } else {
      log(`using the running engine at ${ENGINE_URL}`);
    }

    const files = writeWorkspace();
    writeSettings();
    log("installing the extension into code-server");
    run(process.execPath, [...codeServerArgs(), "--install-extension", VSIX]);
    codeServer = await startCodeServer();
    const vscodeVersion = JSON.parse(
      readFileSync(join(CODE_SERVER_PKG, "lib/vscode/package.json"), "utf8"),
    ).version;
    report.vscode = vscodeVersion;
    log(`code-server ${report.code_server} (Code ${vscodeVersion}) on port ${PORT}`);

    browser = await puppeteer.launch({
      executablePath: await chromium.executablePath(),
      args: await puppeteer.defaultArgs({ args: chromium.args, headless: "shell" }),
      headless: "shell",
      defaultViewport: { width: 1400, height: 900 },
    });
    report.chromium = await browser.version();
    page = await browser.newPage();
    page.on("pageerror", (error) => log(`page error: ${error.message}`));
    await page.goto(`http://127.0.0.1:${PORT}/?folder=${encodeURIComponent(dirs.workspace)}`, {
      waitUntil: "domcontentloaded",
    });
    await page.waitForSelector(".monaco-workbench .part.statusbar", { timeout: 60_000 });
    log("workbench loaded");
    await page.evaluate(installProbe);

    // The status bar item shows, and turns from "not running" to stats once the server runs.
    const ready = await waitFor(
      "the extension's status bar item with stats from the server",
      async () => {
        const item = await page.evaluate(statusItem, STATUS_ID);
        return item && item.visible && !item.text.includes("copilot-lsp") ? item : null;
      },
      60_000,
      250,
    ).catch(async (error) => {
      const ids = await page.evaluate(() =>
        [...document.querySelectorAll(".statusbar-item")].map((n) => `${n.id}: ${n.textContent}`),
      );
      log(`status bar items: ${JSON.stringify(ids)}`);
      throw error;
    });
    log(`status bar: ${JSON.stringify(ready.text)} (${ready.icon})`);

    const samples = [];
    for (const [index, file] of files.entries()) {
      log(index === 0 ? `warm-up: ${file.name}` : `try ${index}/${TRIES}: ${file.name}`);
      const sample = await oneTry(page, file, index);
      if (index > 0) {
        samples.push(sample);
      }
    }
    if (SCRIPTED) {
      log(`next edit: ${RENAME_FILE}`);
      report.next_edit = await nextEditTry(page);
      log(`next edit as ghost text: ${ANNOTATE_FILE}`);
      report.inline_next_edit = await inlineNextEditTry(page);
    }

    // The status bar now shows a latency from copilot/stats (refreshed every second).
    const status = await waitFor(
      "the status bar to show a latency",
      async () => {
        const item = await page.evaluate(statusItem, STATUS_ID);
        return item && item.visible && /\d+ ms/.test(item.text) ? item : null;
      },
      15_000,
      250,
    ).catch(async () => page.evaluate(statusItem, STATUS_ID));
    check(
      "status bar item shows",
      Boolean(status && status.visible && /\d+ ms/.test(status.text)),
      JSON.stringify(status),
    );
    report.status_bar = status;
    // Tab on a suggestion runs its accept command: the server counts it (copilot/stats).
    const accepts = /accepted: (\d+) of (\d+) shown/.exec(status?.label ?? "");
    check(
      "accepted suggestions reach the server's stats",
      Boolean(accepts) && Number(accepts[1]) >= samples.filter((s) => s.accepted).length - 1 && Number(accepts[1]) > 0,
      accepts ? accepts[0] : JSON.stringify(status?.label),
    );
    await page.screenshot({ path: join(work, "final.png") });

    report.first_ghost_ms = summary(samples.map((s) => s.first_ghost_ms));
    report.settled_ms = summary(samples.map((s) => s.settled_ms));
    // The preview drawn at first-line time, then swapped once for the whole block.
    report.preview_swapped_for_final = samples.filter((s) => s.ghost_texts_seen > 1).length;
    report.multiline_suggestions = samples.filter((s) => (s.ghost_text ?? "").includes("\n")).length;
    // Tries whose ghost text was seen and then vanished (see `vanishing`): must be 0.
    report.vanished = samples.filter((s) => s.vanished).length;
    report.blip_ms = BLIP_MS;
    report.settle_ms = SETTLE_MS;
    report.samples = samples;
  } catch (error) {
    check("run", false, String(error?.stack ?? error));
    await page?.screenshot({ path: join(work, "failure.png") }).catch(() => undefined);
  } finally {
    if (browser) {
      await browser.close().catch(() => undefined);
    }
    stopProcessGroup(codeServer);
    stopProcessGroup(scriptedEngine);
    engineDown();
  }

  const failed = checks.filter((c) => !c.ok).length;
  report.passed = checks.length - failed;
  report.failed = failed;
  report.duration_s = Math.round((Date.now() - started) / 100) / 10;
  if (report.first_ghost_ms?.n) {
    const f = report.first_ghost_ms;
    console.log(
      `keystroke-to-first-ghost-text in code-server ${report.code_server} (Code ${report.vscode}): ` +
        `median ${f.median} ms over ${f.n} tries (min ${f.min}, max ${f.max}); ` +
        `last change of the ghost text: median ${report.settled_ms.median} ms`,
    );
    console.log(
      `preview swapped for the final block in ${report.preview_swapped_for_final} of ${f.n} tries; ` +
        `multi-line suggestions: ${report.multiline_suggestions} of ${f.n}; ` +
        `ghost text vanished in ${report.vanished} of ${f.n}`,
    );
    if (WRITE_JSON) {
      mkdirSync(dirname(JSON_OUT), { recursive: true });
      writeFileSync(JSON_OUT, JSON.stringify(report, null, 2) + "\n");
      console.log(`wrote ${JSON_OUT}`);
    }
  }
  if (report.next_edit) {
    console.log(`next edit: drawn ${report.next_edit.shown_ms} ms after typing began; applied: ${report.next_edit.applied}`);
  }
  if (KEEP || failed) {
    console.log(`logs and screenshots: ${work}`);
  } else {
    rmSync(work, { recursive: true, force: true });
  }
  console.log(`took ${report.duration_s} s`);
  console.log(`vscode-e2e: ${report.passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    log(`${signal}: stopping`);
    stopProcessGroup(codeServer);
    stopProcessGroup(scriptedEngine);
    engineDown();
    process.exit(130);
  });
}

await main();
