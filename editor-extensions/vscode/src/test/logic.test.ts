import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DEFAULTS, enabledFor, engineUpCommand, initializationOptions, KEYS, Lookup, readFrom } from "../logic/settings";
import { statusView } from "../logic/status";
import { LspItem, offered, reusable } from "../logic/items";
import { Partial, StreamState } from "../logic/stream";
import { chars, nextLine, nextWord, remainder } from "../logic/text";

describe("partial accepts", () => {
  it("takes blanks then a word, or a run of symbols", () => {
    assert.equal(nextWord("result = 0"), "result");
    assert.equal(nextWord(" = 0"), " =");
    assert.equal(nextWord("  émoji_1(x)"), "  émoji_1");
    assert.equal(nextWord("\n    return x"), "\n    return");
  });

  it("takes the rest of the line, or the next line when at its end", () => {
    assert.equal(nextLine("a = 1\nb = 2"), "a = 1");
    assert.equal(nextLine("\n    b = 2\nc"), "\n    b = 2");
    assert.equal(nextLine("last"), "last");
  });

  it("counts code points like the server", () => {
    assert.equal(chars("a😀b"), 3);
  });

  it("keeps the rest of a suggestion only while typing matches it", () => {
    assert.equal(remainder("result = 0", "res"), "ult = 0");
    assert.equal(remainder("result = 0", "rex"), undefined);
    assert.equal(remainder("x", "x"), "");
  });
});

describe("settings", () => {
  it("turns settings into the server's initializationOptions", () => {
    assert.deepEqual(initializationOptions(DEFAULTS), {
      completion: { debounceMs: 40 },
      editor: { streaming: true },
      nextEditSuggestions: { enabled: false },
    });
    assert.deepEqual(initializationOptions({ ...DEFAULTS, nextEdits: true }).nextEditSuggestions, { enabled: true });
    const remote = initializationOptions({ ...DEFAULTS, engineUrl: "http://gpu:8000/v1", streaming: false });
    assert.deepEqual(remote.engine, { url: "http://gpu:8000/v1" });
    assert.deepEqual(remote.editor, { streaming: false });
  });

  it("falls back on the defaults package.json declares, under the keys it reads", () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, "..", "..", "package.json"), "utf8")) as {
      contributes: { configuration: { properties: Record<string, { default: unknown }> } };
    };
    const declared = manifest.contributes.configuration.properties;
    for (const [name, { key }] of Object.entries(KEYS)) {
      assert.deepEqual(declared[`copilotLsp.${key}`]?.default, DEFAULTS[name as keyof typeof KEYS], key);
    }
    const read = Object.values(KEYS).map(({ key }) => `copilotLsp.${key}`);
    assert.deepEqual(Object.keys(declared).sort(), read.sort());
  });

  it("reads a setting from its 0.1.0 key only where the user set that one alone", () => {
    const user: Record<string, unknown> = {
      serverPath: "/old/copilot-lsp", // renamed client.serverPath, not set under its new key
      debounceMs: 90, // set under both names: the new one wins
      "completion.debounceMs": 60,
      "client.statusIntervalS": 2,
    };
    const lookup: Lookup = {
      get: <T>(key: string, fallback: T) => (key in user ? (user[key] as T) : fallback),
      isSet: (key) => key in user,
    };
    const settings = readFrom(lookup);
    assert.equal(settings.serverPath, "/old/copilot-lsp");
    assert.equal(settings.debounceMs, 60);
    assert.equal(settings.statusIntervalS, 2);
    assert.deepEqual(settings.enable, DEFAULTS.enable);
  });

  it("starts the engine with the command line's default profile unless one is set", () => {
    assert.equal(engineUpCommand(DEFAULTS), '"copilot-lsp" engine up');
    assert.equal(engineUpCommand({ ...DEFAULTS, engineProfile: "local-cpu" }), '"copilot-lsp" engine up --profile local-cpu');
  });

  it("enables per language with a default", () => {
    const enable = { "*": true, markdown: false };
    assert.equal(enabledFor(enable, "python"), true);
    assert.equal(enabledFor(enable, "markdown"), false);
    assert.equal(enabledFor({ "*": false, python: true }, "go"), false);
    assert.equal(enabledFor({}, "go"), true);
  });
});

describe("status bar", () => {
  it("shows first-line p50 and the acceptance rate", () => {
    const view = statusView({
      stages: { first_token: { p50: 98.4 }, first_line: { p50: 351.6 }, finished: { p50: 1200 } },
      acceptance: { offered: 10, accepted: 3, rate: 0.3 },
      engine: { url: "http://127.0.0.1:8000/v1", healthy: true },
    });
    assert.equal(view.text, "$(sparkle) 352 ms · 30%");
    assert.match(view.tooltip, /first token p50: 98 ms/);
    assert.match(view.tooltip, /accepted: 3 of 10 shown/);
    assert.equal(view.healthy, true);
  });

  it("warns when the engine does not answer or the server is down", () => {
    assert.equal(statusView({ engine: { healthy: false } }).text, "$(warning) – · –");
    const down = statusView(undefined, "spawn copilot-lsp ENOENT");
    assert.equal(down.healthy, false);
    assert.equal(down.tooltip, "spawn copilot-lsp ENOENT");
  });
});

describe("streamed text", () => {
  const anchor = { uri: "file:///a.py", version: 3, line: 1, character: 4 };
  const partial = (text: string, extra: Partial_ = {}): Partial => ({
    uri: anchor.uri,
    completionId: "c1",
    version: 3,
    text,
    done: false,
    range: { start: { line: 1, character: 4 }, end: { line: 1, character: 4 } },
    ...extra,
  });
  type Partial_ = { [K in keyof Partial]?: Partial[K] };

  it("follows the completion requested at the anchor", () => {
    const state = new StreamState();
    let changes = 0;
    state.onChange(() => changes++);
    state.start(anchor);
    assert.equal(state.accept(partial("res")), true);
    assert.equal(state.accept(partial("res")), false);
    assert.equal(state.accept(partial("result = 0")), true);
    assert.equal(state.textAt(anchor), "result = 0");
    assert.equal(changes, 2);
  });

  it("ignores updates for another version, place or document", () => {
    const state = new StreamState();
    state.start(anchor);
    assert.equal(state.accept(partial("x", { version: 2 })), false);
    assert.equal(state.accept(partial("x", { uri: "file:///b.py" })), false);
    const elsewhere = { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } };
    assert.equal(state.accept(partial("x", { range: elsewhere })), false);
    assert.equal(state.textAt(anchor), undefined);
    assert.equal(state.textAt({ ...anchor, version: 4 }), undefined);
  });

  it("an empty final update clears the preview", () => {
    const state = new StreamState();
    state.start(anchor);
    state.accept(partial("res"));
    state.accept(partial("", { done: true }));
    assert.equal(state.textAt(anchor), undefined);
    assert.equal(state.done, true);
  });

  it("previews once the first line is complete, or when the stream ends", () => {
    const state = new StreamState();
    state.start(anchor);
    state.accept(partial('"""Retu'));
    assert.equal(state.previewAt(anchor), undefined);
    state.accept(partial('"""Return the scaled list."""\n    ret'));
    assert.equal(state.previewAt(anchor), '"""Return the scaled list."""\n    ret');
    assert.equal(state.previewAt({ ...anchor, character: 5 }), undefined);
    const single = new StreamState();
    single.start(anchor);
    single.accept(partial("x + 1"));
    assert.equal(single.previewAt(anchor), undefined);
    single.accept(partial("x + 1", { done: true }));
    assert.equal(single.previewAt(anchor), "x + 1");
  });
});

describe("alternatives", () => {
  const at = (line: number, character: number) => ({ line, character });
  const items: LspItem[] = [
    { insertText: "return n", range: { start: at(2, 4), end: at(2, 4) }, command: { command: "copilot.acceptCompletion", arguments: ["c1"] } },
    { insertText: { value: "return n * 2" }, range: { start: at(2, 4), end: at(2, 4) }, command: { command: "copilot.acceptCompletion", arguments: ["c1#2"] } },
    { insertText: "pass)", range: { start: at(2, 4), end: at(2, 5) }, command: { command: "copilot.acceptCompletion", arguments: ["c1#3"] } },
  ];

  it("hands every item to VS Code in the server's order, each with its own id", () => {
    const shown = offered(items);
    assert.deepEqual(
      shown.map((item) => [item.text, item.id]),
      [
        ["return n", "c1"],
        ["return n * 2", "c1#2"],
        ["pass)", "c1#3"],
      ],
    );
    assert.deepEqual(shown[2].range, { start: at(2, 4), end: at(2, 5) });
    assert.deepEqual(offered([]), []);
  });

  it("asks again when an explicit request finds only a typing one at the same place", () => {
    assert.equal(reusable(undefined, false), false);
    assert.equal(reusable({ sameAnchor: true, invoked: false }, false), true);
    assert.equal(reusable({ sameAnchor: true, invoked: false }, true), false);
    assert.equal(reusable({ sameAnchor: true, invoked: true }, false), true);
    assert.equal(reusable({ sameAnchor: false, invoked: true }, true), false);
    // Explicit again where an explicit one was made: its answer (alternatives included) serves.
    assert.equal(reusable({ sameAnchor: true, invoked: true }, true), true);
  });
});
