// The VS Code provider (src/common/provider.ts) against a scripted language client and a
// stand-in `vscode` module: the requests it builds, the streamed preview and its swap for
// the final answer, and what it reports (shown, accepted, partially accepted, dismissed).
import "../testing/register";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import type * as vscodeTypes from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { Provider } from "../common/provider";
import { DEFAULTS, Settings } from "../logic/settings";
import { Partial } from "../logic/stream";
import { ScriptedClient } from "../testing/client";
import * as vscode from "../testing/vscode";

const URI = "file:///work/demo.py";
const SOURCE = "def total(items):\n    \n";
const FULL = "result = 0\n    return result";

interface Harness {
  client: ScriptedClient;
  provider: Provider;
  document: vscode.TextDocument;
  settings: Settings;
}

function harness(): Harness {
  const client = new ScriptedClient();
  const settings: Settings = { ...DEFAULTS, enable: { "*": true, markdown: false } };
  const provider = new Provider(
    () => client as unknown as LanguageClient,
    () => settings,
  );
  const document = new vscode.TextDocument({ toString: () => URI }, SOURCE);
  vscode.window.activeTextEditor = new vscode.TextEditor(document, new vscode.Position(1, 4));
  return { client, provider, document, settings };
}

function provide(
  h: Harness,
  position = new vscode.Position(1, 4),
  triggerKind: vscode.InlineCompletionTriggerKind = vscode.InlineCompletionTriggerKind.Automatic,
  source = new vscode.CancellationTokenSource(),
): Promise<vscodeTypes.InlineCompletionItem[] | undefined> {
  return h.provider.provideInlineCompletionItems(
    h.document as unknown as vscodeTypes.TextDocument,
    position as unknown as vscodeTypes.Position,
    { triggerKind, selectedCompletionInfo: undefined },
    source.token as unknown as vscodeTypes.CancellationToken,
  );
}

function lspItem(text: string, id: string) {
  return {
    insertText: text,
    range: { start: { line: 1, character: 4 }, end: { line: 1, character: 4 } },
    command: { title: "Accept completion", command: "copilot.acceptCompletion", arguments: [id] },
  };
}

function partial(text: string, id: string, done = false): Partial {
  return {
    uri: URI,
    completionId: id,
    version: 1,
    text,
    done,
    range: { start: { line: 1, character: 4 }, end: { line: 1, character: 4 } },
  };
}

/** Let promise callbacks run (the provider's `.then`/`.finally` chains). */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function commandNames(): string[] {
  return vscode.executed.filter((call) => call.command !== "setContext").map((call) => call.command);
}

function visible(): unknown {
  const calls = vscode.executed.filter((call) => call.command === "setContext");
  return calls[calls.length - 1]?.args;
}

beforeEach(() => {
  vscode.executed.length = 0;
});

afterEach(() => {
  mock.timers.reset();
});

describe("provider requests", () => {
  // The LSP trigger kind sent for each VS Code trigger kind (LSP numbers them Invoked 1,
  // Automatic 2; VS Code Invoke 0, Automatic 1).
  const TRIGGER_KINDS: Array<[string, vscode.InlineCompletionTriggerKind, number]> = [
    ["Invoke", vscode.InlineCompletionTriggerKind.Invoke, 1],
    ["Automatic", vscode.InlineCompletionTriggerKind.Automatic, 2],
  ];

  for (const [name, vscodeKind, lspKind] of TRIGGER_KINDS) {
    it(`asks textDocument/inlineCompletion at the cursor (${name} trigger)`, async () => {
      const h = harness();
      const pending = provide(h, new vscode.Position(1, 4), vscodeKind);
      assert.deepEqual(h.client.sent("textDocument/inlineCompletion"), [
        { textDocument: { uri: URI }, position: { line: 1, character: 4 }, context: { triggerKind: lspKind } },
      ]);
      h.client.reply("textDocument/inlineCompletion", { items: [] });
      assert.deepEqual(await pending, []);
    });
  }

  it("turns the answer into items that report their acceptance, and reports each shown once", async () => {
    const h = harness();
    const pending = provide(h);
    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(FULL, "c1")] });
    const items = (await pending)!;
    assert.equal(items.length, 1);
    const item = items[0] as unknown as vscode.InlineCompletionItem;
    assert.equal(item.insertText, FULL);
    assert.deepEqual([item.range!.start, item.range!.end], [new vscode.Position(1, 4), new vscode.Position(1, 4)]);
    assert.deepEqual(item.command, { title: "Accept", command: "copilotLsp.accepted", arguments: ["c1"] });
    assert.deepEqual(visible(), ["copilotLsp.suggestionVisible", true]);
    // VS Code asks again at the same place (a redraw): no new request, no second report.
    assert.equal(((await provide(h))![0] as unknown as vscode.InlineCompletionItem).insertText, FULL);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 1);
    assert.deepEqual(h.client.notified("copilot/didShowCompletion"), [{ completionId: "c1" }]);
  });

  it("accepts a bare list of items as the answer too", async () => {
    const h = harness();
    const pending = provide(h);
    h.client.reply("textDocument/inlineCompletion", [lspItem("x", "c2")]);
    assert.equal(((await pending)![0] as unknown as vscode.InlineCompletionItem).insertText, "x");
  });

  it("asks nothing for a disabled language or without a running server", async () => {
    const h = harness();
    h.settings.enable = { "*": true, python: false };
    assert.equal(await provide(h), undefined);
    h.settings.enable = { "*": true };
    h.client.running = false;
    assert.equal(await provide(h), undefined);
    assert.deepEqual(h.client.requests, []);
  });

  it("a newer position cancels the older request", async () => {
    const h = harness();
    const first = provide(h);
    const second = provide(h, new vscode.Position(1, 3));
    const [older, newer] = h.client.requests;
    assert.equal(older.token?.isCancellationRequested, true);
    assert.equal(newer.token?.isCancellationRequested, false);
    older.resolve(null);
    newer.resolve({ items: [lspItem("y", "c3")] });
    assert.deepEqual(await first, []);
    assert.equal(((await second)![0] as unknown as vscode.InlineCompletionItem).insertText, "y");
  });

  it("Alt+] after a typed suggestion asks again as Invoked and offers every alternative in order", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const h = harness();
    const typed = provide(h);
    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(FULL, "c1")] });
    assert.equal((await typed)!.length, 1);
    const invoke = vscode.InlineCompletionTriggerKind.Invoke;
    const cycled = provide(h, new vscode.Position(1, 4), invoke);
    const kinds = h.client
      .sent("textDocument/inlineCompletion")
      .map((params) => (params as { context: { triggerKind: number } }).context.triggerKind);
    assert.deepEqual(kinds, [2, 1]);
    h.client.reply("textDocument/inlineCompletion", {
      items: [lspItem(FULL, "c4"), lspItem("return sum(items)", "c4#2"), lspItem("pass", "c4#3")],
    });
    const items = (await cycled)! as unknown as vscode.InlineCompletionItem[];
    assert.deepEqual(
      items.map((item) => [item.insertText, item.command!.arguments![0]]),
      [
        [FULL, "c4"],
        ["return sum(items)", "c4#2"],
        ["pass", "c4#3"],
      ],
    );
    // VS Code asks again while cycling: the explicit answer serves, no third request.
    assert.equal((await provide(h, new vscode.Position(1, 4), invoke))!.length, 3);
    assert.equal((await provide(h))!.length, 3);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 2);
    // Nothing to swap: VS Code's cycling stays on screen (no hide and re-trigger).
    mock.timers.tick(100);
    await flush();
    assert.deepEqual(commandNames(), []);
  });

  it("gives up when VS Code cancels the call", async () => {
    const h = harness();
    const source = new vscode.CancellationTokenSource();
    const pending = provide(h, undefined, undefined, source);
    source.cancel();
    assert.equal(await pending, undefined);
  });
});

describe("streaming", () => {
  it("answers with the preview once its first line is complete, then swaps it for the final item", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const h = harness();
    let answered = false;
    const pending = provide(h).then((items) => {
      answered = true;
      return items;
    });
    h.provider.onPartial(partial("result", "c1"));
    await flush();
    assert.equal(answered, false, "a preview without a whole line is not drawn");
    h.provider.onPartial(partial("result = 0\n    ret", "c1"));
    const preview = (await pending)![0] as unknown as vscode.InlineCompletionItem;
    assert.equal(preview.insertText, "result = 0\n    ret");
    // Tab on the preview takes what is shown: a partial accept of the completion.
    assert.deepEqual(preview.command!.arguments, ["c1", [..."result = 0\n    ret"].length]);
    assert.deepEqual(h.client.notified("copilot/didShowCompletion"), [{ completionId: "c1" }]);

    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(FULL, "c1")] });
    await flush();
    assert.deepEqual(commandNames(), []);
    mock.timers.tick(100);
    await flush();
    // Hidden first: VS Code draws nothing new for a plain re-trigger at the same place.
    assert.deepEqual(commandNames(), ["editor.action.inlineSuggest.hide", "editor.action.inlineSuggest.trigger"]);
    const final = (await provide(h))![0] as unknown as vscode.InlineCompletionItem;
    assert.equal(final.insertText, FULL);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 1);
  });

  it("keeps the preview when the final item is what is shown", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const h = harness();
    const pending = provide(h);
    h.provider.onPartial(partial(FULL, "c1", true));
    assert.equal(((await pending)![0] as unknown as vscode.InlineCompletionItem).insertText, FULL);
    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(FULL, "c1")] });
    await flush();
    mock.timers.tick(1000);
    await flush();
    assert.deepEqual(commandNames(), []);
  });

  /** The preview of FULL on screen: an automatic call answered at first-line time. */
  async function previewShown(h: Harness): Promise<void> {
    const pending = provide(h);
    h.provider.onPartial(partial("result = 0\n    ret", "c1"));
    assert.equal(((await pending)![0] as unknown as vscode.InlineCompletionItem).insertText, "result = 0\n    ret");
  }

  function text(items: vscodeTypes.InlineCompletionItem[] | undefined | "pending"): unknown {
    return items === "pending" ? items : items?.map((item) => (item as unknown as vscode.InlineCompletionItem).insertText);
  }

  /** The call's answer if it comes without the engine answering anything more, else "pending". */
  function soon<T>(call: Promise<T>): Promise<T | "pending"> {
    return Promise.race([call, flush().then(() => "pending" as const)]);
  }

  it("the swap's own re-trigger (explicit in VS Code) is served the final answer, no new request", async () => {
    // VS Code runs editor.action.inlineSuggest.trigger as an explicit trigger: the call it
    // makes is an Invoke. Asking the engine again there hid the preview until a whole new
    // (Invoked, with alternatives) answer came: seconds on a slow engine, or never.
    mock.timers.enable({ apis: ["setTimeout"] });
    const h = harness();
    await previewShown(h);
    h.provider.onPartial(partial(FULL, "c1", true));
    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(FULL, "c1")] });
    await flush();
    mock.timers.tick(100);
    await flush();
    assert.deepEqual(commandNames(), ["editor.action.inlineSuggest.hide", "editor.action.inlineSuggest.trigger"]);
    const swapped = provide(h, new vscode.Position(1, 4), vscode.InlineCompletionTriggerKind.Invoke);
    await flush();
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 1, "no second request");
    assert.deepEqual(text(await soon(swapped)), [FULL]);
    assert.deepEqual(visible(), ["copilotLsp.suggestionVisible", true]);
  });

  it("an empty final answer keeps the preview on screen (no hide, served again at its place)", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const h = harness();
    await previewShown(h);
    // The server ends the stream with "" (cancelled, superseded or nothing left after its cuts).
    h.provider.onPartial(partial("", "c1", true));
    assert.deepEqual(text(await soon(provide(h))), ["result = 0\n    ret"], "asked again before the answer");
    h.client.reply("textDocument/inlineCompletion", { items: [] });
    await flush();
    mock.timers.tick(1000);
    await flush();
    assert.deepEqual(commandNames(), [], "nothing hides the preview");
    const again = await soon(provide(h));
    assert.notEqual(again, "pending");
    assert.deepEqual(text(again), ["result = 0\n    ret"]);
    // Tab takes what is shown, as on the preview: a partial accept of the completion.
    assert.deepEqual(((again as vscodeTypes.InlineCompletionItem[])[0] as unknown as vscode.InlineCompletionItem).command!.arguments, [
      "c1",
      [..."result = 0\n    ret"].length,
    ]);
    assert.deepEqual(visible(), ["copilotLsp.suggestionVisible", true]);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 1);
  });

  it("a failed final answer keeps the preview on screen", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    const h = harness();
    await previewShown(h);
    h.client.requests[0].reject(new Error("Request cancelled by the server"));
    await flush();
    mock.timers.tick(1000);
    await flush();
    assert.deepEqual(commandNames(), []);
    assert.deepEqual(text(await soon(provide(h))), ["result = 0\n    ret"]);
    // An explicit ask there goes to the server again; empty too, the preview still stands.
    const invoked = provide(h, new vscode.Position(1, 4), vscode.InlineCompletionTriggerKind.Invoke);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 2);
    h.client.reply("textDocument/inlineCompletion", null);
    assert.deepEqual(text(await soon(invoked)), ["result = 0\n    ret"]);
  });

  it("an explicit ask at the shown place that comes back empty leaves the suggestion shown", async () => {
    // VS Code triggers explicitly on its own too (the hint toolbar on hover asks for the
    // alternatives): an empty answer to that is no reason to take the suggestion away.
    const h = harness();
    const typed = provide(h);
    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(FULL, "c1")] });
    assert.deepEqual(text(await typed), [FULL]);
    const invoked = provide(h, new vscode.Position(1, 4), vscode.InlineCompletionTriggerKind.Invoke);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 2);
    h.client.reply("textDocument/inlineCompletion", { items: [] });
    const items = (await invoked)!;
    assert.deepEqual(text(items), [FULL]);
    assert.deepEqual((items[0] as unknown as vscode.InlineCompletionItem).command!.arguments, ["c1"]);
    assert.deepEqual(visible(), ["copilotLsp.suggestionVisible", true]);
  });

  it("typing elsewhere still replaces a kept preview", async () => {
    const h = harness();
    await previewShown(h);
    h.client.reply("textDocument/inlineCompletion", { items: [] });
    await flush();
    const cursor = h.document.insert(new vscode.Position(1, 4), "x");
    const pending = provide(h, cursor);
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 2, "a new request for the new text");
    h.client.reply("textDocument/inlineCompletion", { items: [] });
    assert.deepEqual(await pending, []);
  });

  it("ignores partials of another document or place", async () => {
    const h = harness();
    let answered = false;
    const pending = provide(h).then((items) => {
      answered = true;
      return items;
    });
    h.provider.onPartial({ ...partial("a\nb", "c9"), uri: "file:///work/other.py" });
    h.provider.onPartial({ ...partial("a\nb", "c9"), range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } });
    await flush();
    assert.equal(answered, false);
    h.client.reply("textDocument/inlineCompletion", { items: [] });
    assert.deepEqual(await pending, []);
  });
});

describe("accept, partial accept and dismiss reporting", () => {
  async function shown(h: Harness, text = FULL, id = "c1"): Promise<void> {
    h.client.answer["workspace/executeCommand"] = true;
    const pending = provide(h);
    h.client.reply("textDocument/inlineCompletion", { items: [lspItem(text, id)] });
    await pending;
  }

  it("Tab: the item's command reports the accept to the server", async () => {
    const h = harness();
    await shown(h);
    await h.provider.accepted("c1");
    await h.provider.accepted("c1", 6);
    assert.deepEqual(h.client.sent("workspace/executeCommand"), [
      { command: "copilot.acceptCompletion", arguments: ["c1"] },
      { command: "copilot.acceptCompletion", arguments: ["c1", 6] },
    ]);
    assert.deepEqual(visible(), ["copilotLsp.suggestionVisible", false]);
  });

  it("Ctrl+Right accepts the next word, Ctrl+Down the next line, and the last part is an accept", async () => {
    const h = harness();
    await shown(h);
    await h.provider.acceptPart("word");
    assert.equal(h.document.lines[1], "    result");
    assert.deepEqual(h.client.notified("copilot/didPartiallyAccept"), [{ completionId: "c1", acceptedLength: 6 }]);
    assert.deepEqual(commandNames(), ["editor.action.inlineSuggest.trigger"]);
    await h.provider.acceptPart("line");
    assert.equal(h.document.lines[1], "    result = 0");
    assert.deepEqual(h.client.notified("copilot/didPartiallyAccept")[1], { completionId: "c1", acceptedLength: 10 });
    await h.provider.acceptPart("line"); // "\n    return result": the rest, so a full accept
    assert.deepEqual(h.document.lines.slice(1, 3), ["    result = 0", "    return result"]);
    assert.deepEqual(h.client.sent("workspace/executeCommand"), [{ command: "copilot.acceptCompletion", arguments: ["c1"] }]);
    assert.equal(h.client.notified("copilot/didPartiallyAccept").length, 2);
  });

  it("typing into the suggestion is answered from it, without a request", async () => {
    const h = harness();
    await shown(h);
    const cursor = h.document.insert(new vscode.Position(1, 4), "res");
    const items = (await provide(h, cursor))!;
    assert.equal((items[0] as unknown as vscode.InlineCompletionItem).insertText, FULL.slice(3));
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 1);
  });

  it("Escape hides the suggestion and reports it dismissed", async () => {
    const h = harness();
    await shown(h);
    await h.provider.dismiss();
    assert.deepEqual(commandNames(), ["editor.action.inlineSuggest.hide"]);
    assert.deepEqual(h.client.notified("copilot/didDismissCompletion"), [{ completionId: "c1" }]);
    assert.deepEqual(visible(), ["copilotLsp.suggestionVisible", false]);
    await h.provider.dismiss(); // nothing shown any more: nothing more to report
    assert.equal(h.client.notified("copilot/didDismissCompletion").length, 1);
    await h.provider.acceptPart("word"); // and nothing to accept
    assert.deepEqual(h.client.notified("copilot/didPartiallyAccept"), []);
  });
});

describe("key bindings", () => {
  const root = join(__dirname, "..", "..");
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    contributes: { keybindings: Array<{ key: string; command: string; when: string }> };
  };
  const extension = readFileSync(join(root, "src", "extension.ts"), "utf8");

  const KEYS: Array<[string, string, string]> = [
    ["ctrl+right", "copilotLsp.acceptNextWord", 'provider.acceptPart("word")'],
    ["ctrl+down", "copilotLsp.acceptNextLine", 'provider.acceptPart("line")'],
    ["escape", "copilotLsp.dismiss", "provider.dismiss()"],
  ];

  for (const [key, command, call] of KEYS) {
    it(`${key} runs ${command} while our suggestion is visible`, () => {
      const binding = manifest.contributes.keybindings.find((item) => item.key === key);
      assert.equal(binding?.command, command);
      assert.match(binding.when, /inlineSuggestionVisible/);
      assert.match(binding.when, /copilotLsp\.suggestionVisible/);
      assert.ok(extension.includes(`registerCommand("${command}", () => ${call})`), `${command} → ${call}`);
    });
  }
});
