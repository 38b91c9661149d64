// Next edits in VS Code: the pure choice of how to show one (src/logic/nextedit.ts), and the
// controller (src/common/nextedit.ts) with the provider, against a scripted language client
// and the stand-in `vscode` module: when it asks, what it draws, what Tab and Escape do, and
// what the server hears.
import "../testing/register";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import type * as vscodeTypes from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { ACCEPTED_COMMAND, DEBOUNCE_MS, INLINE_KEY, NextEdits, VISIBLE_KEY } from "../common/nextedit";
import { Provider } from "../common/provider";
import {
  display,
  endOf,
  firstEdit,
  keepsInOrder,
  LspInlineEdit,
  MAX_SHOWN,
  shownText,
  tabStep,
} from "../logic/nextedit";
import { DEFAULTS, Settings } from "../logic/settings";
import { ScriptedClient } from "../testing/client";
import * as vscode from "../testing/vscode";

const URI = "file:///work/scale.py";
// The user renamed the parameter on line 0; the server offers to rename its use on line 1.
const SOURCE = "def scale(count, factor):\n    return x * factor\n\n\nprint(scale(2, 3))";

function edit(
  text: string,
  start: [number, number],
  end: [number, number] = start,
  version = 1,
  id = "ne-1",
): LspInlineEdit {
  return {
    text,
    textDocument: { uri: URI, version },
    range: { start: { line: start[0], character: start[1] }, end: { line: end[0], character: end[1] } },
    command: { title: "Accept next edit", command: "copilot.acceptNextEdit", arguments: [id] },
  };
}

const lines = SOURCE.split("\n");
const line = (n: number) => lines[n];

describe("next edit: how it is shown", () => {
  it("takes the first well-formed edit of the answer, and nothing from a malformed one", () => {
    const rename = edit("count", [1, 11], [1, 12]);
    assert.deepEqual(firstEdit({ edits: [rename, edit("other", [0, 0])] }), rename);
    assert.equal(firstEdit({ edits: [] }), undefined);
    assert.equal(firstEdit(null), undefined);
    assert.equal(firstEdit({ edits: [{ ...rename, textDocument: { uri: URI } }] }), undefined);
    assert.equal(firstEdit({ edits: [edit("x", [1, 5], [1, 2])] }), undefined, "a range ending before it starts");
    assert.equal(firstEdit({ edits: [{ ...rename, text: 3 }] }), undefined);
  });

  it("decorates an edit away from the cursor's line: the replaced text struck, the new text after it", () => {
    assert.deepEqual(display(edit("count", [1, 11], [1, 12]), { line: 0, character: 15 }, line), {
      kind: "decoration",
      deleted: { start: { line: 1, character: 11 }, end: { line: 1, character: 12 } },
      at: { line: 1, character: 12 },
      inserted: "count",
    });
    // A pure insertion strikes nothing; a deletion inserts nothing.
    const insertion = display(edit("# scaled\n", [4, 0]), { line: 0, character: 0 }, line);
    assert.deepEqual(insertion, { kind: "decoration", deleted: undefined, at: { line: 4, character: 0 }, inserted: "# scaled⏎" });
    const deletion = display(edit("", [2, 0], [3, 0]), { line: 0, character: 0 }, line);
    assert.equal(deletion.kind === "decoration" && deletion.inserted, "");
  });

  it("shows an insertion at or after the cursor on its line as ghost text over a range from the cursor", () => {
    // Cursor after "print(scale(2"; the edit adds ", 4" after "3": the range covers both.
    const shown = display(edit(", 4", [4, 16]), { line: 4, character: 13 }, line);
    assert.deepEqual(shown, {
      kind: "inline",
      range: { start: { line: 4, character: 13 }, end: { line: 4, character: 16 } },
      insertText: ", 3, 4",
    });
    // Replacing "3" by "3.0" keeps "3": still only insertions, VS Code can draw it.
    const kept = display(edit("3.0", [4, 15], [4, 16]), { line: 4, character: 15 }, line);
    assert.deepEqual(kept, {
      kind: "inline",
      range: { start: { line: 4, character: 15 }, end: { line: 4, character: 16 } },
      insertText: "3.0",
    });
    // New lines after the end of the cursor's line.
    const below = display(edit("\nprint(scale(4, 5))", [4, 18]), { line: 4, character: 18 }, line);
    assert.deepEqual(below, {
      kind: "inline",
      range: { start: { line: 4, character: 18 }, end: { line: 4, character: 18 } },
      insertText: "\nprint(scale(4, 5))",
    });
  });

  it("decorates what ghost text cannot draw on the cursor's line: before the cursor, or replacing text", () => {
    assert.equal(display(edit("count", [1, 11], [1, 12]), { line: 1, character: 21 }, line).kind, "decoration");
    assert.equal(display(edit("4", [4, 15], [4, 16]), { line: 4, character: 10 }, line).kind, "decoration");
    // An insertion before the cursor: ghost text only draws from the cursor on.
    assert.equal(display(edit("1", [4, 13]), { line: 4, character: 16 }, line).kind, "decoration");
    // Several lines in the middle of a line.
    assert.equal(display(edit("2,\n", [4, 12]), { line: 4, character: 0 }, line).kind, "decoration");
  });

  it("gives CRLF text LF line breaks, and cuts long text", () => {
    const shown = display(edit("a\r\nb\r\n", [2, 0]), { line: 0, character: 0 }, line);
    assert.equal(shown.kind === "decoration" && shown.inserted, "a⏎b⏎");
    const long = shownText("y".repeat(MAX_SHOWN + 10));
    assert.equal(long.length, MAX_SHOWN);
    assert.ok(long.endsWith("…"));
    assert.ok(keepsInOrder("ac", "abc") && !keepsInOrder("ca", "abc") && keepsInOrder("", "x"));
  });

  it("puts the cursor after the applied text, and jumps first to an edit off screen", () => {
    assert.deepEqual(endOf({ line: 1, character: 11 }, "count"), { line: 1, character: 16 });
    assert.deepEqual(endOf({ line: 1, character: 11 }, "a\r\nbc"), { line: 2, character: 2 });
    const range = { start: { line: 40, character: 0 }, end: { line: 40, character: 3 } };
    const screen = (from: number, to: number) => [{ start: { line: from, character: 0 }, end: { line: to, character: 0 } }];
    assert.equal(tabStep(range, screen(0, 30)), "jump");
    assert.equal(tabStep(range, screen(30, 60)), "apply");
  });
});

interface Harness {
  client: ScriptedClient;
  nextEdits: NextEdits;
  provider: Provider;
  document: vscode.TextDocument;
  editor: vscode.TextEditor;
  settings: Settings;
  completion: boolean;
}

let current: Harness | undefined;

function harness(cursor = new vscode.Position(0, 15)): Harness {
  const client = new ScriptedClient();
  const settings: Settings = { ...DEFAULTS, nextEdits: true };
  const getClient = () => client as unknown as LanguageClient;
  const provider = new Provider(getClient, () => settings);
  const h = { client, provider, settings, completion: false } as Harness;
  h.nextEdits = new NextEdits(getClient, () => settings, () => h.completion);
  provider.nextEdits = h.nextEdits;
  h.document = new vscode.TextDocument({ toString: () => URI }, SOURCE);
  h.editor = new vscode.TextEditor(h.document, cursor);
  vscode.window.activeTextEditor = h.editor;
  current = h;
  return h;
}

/** The user types `text` at the cursor; the pause passes (timers are mocked). */
function type(h: Harness, text: string): void {
  h.editor.selection = { active: h.document.insert(h.editor.selection.active, text) };
  mock.timers.tick(DEBOUNCE_MS);
}

/** Let promise callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function context(key: string): unknown {
  const calls = vscode.executed.filter((call) => call.command === "setContext" && call.args[0] === key);
  return calls[calls.length - 1]?.args[1];
}

/** What the editor draws now: [struck ranges, inserted texts]. */
function drawn(editor: vscode.TextEditor): [unknown[], unknown[]] {
  const [deleted, inserted] = [...editor.decorations.values()] as Array<
    Array<{ range: vscode.Range; renderOptions?: { after: { contentText: string } } }>
  >;
  return [
    (deleted ?? []).map((d) => [d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character]),
    (inserted ?? []).map((d) => d.renderOptions?.after.contentText),
  ];
}

beforeEach(() => {
  vscode.executed.length = 0;
  mock.timers.enable({ apis: ["setTimeout"] });
});

afterEach(() => {
  current?.nextEdits.dispose();
  current?.provider.dispose();
  current = undefined;
  mock.timers.reset();
});

describe("next edit controller", () => {
  it("asks after a pause in typing, with the document's version and the cursor", () => {
    const h = harness();
    type(h, " ");
    assert.deepEqual(h.client.sent("textDocument/copilotInlineEdit"), [
      { textDocument: { uri: URI, version: 2 }, position: { line: 0, character: 16 } },
    ]);
  });

  it("asks nothing while the setting is off, or for a language that is off", () => {
    const h = harness();
    h.settings.nextEdits = false;
    type(h, " ");
    h.settings.nextEdits = true;
    h.settings.enable = { "*": true, python: false };
    type(h, " ");
    assert.equal(h.client.sent("textDocument/copilotInlineEdit").length, 0);
  });

  it("decorates an edit elsewhere, reports it shown, and Tab applies it and runs its command", async () => {
    const h = harness();
    const asked = h.nextEdits.request(false);
    const rename = edit("count", [1, 11], [1, 12]);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [rename] });
    assert.equal(await asked, true);
    assert.deepEqual(drawn(h.editor), [[[1, 11, 1, 12]], ["count"]]);
    assert.equal(context(VISIBLE_KEY), true);
    assert.deepEqual(h.client.notified("textDocument/didShowInlineEdit"), [{ item: rename }]);
    assert.equal(vscode.statusMessages.size, 1);
    h.client.answer["workspace/executeCommand"] = true;
    assert.equal(await h.nextEdits.accept(), true);
    assert.equal(h.document.getText(), SOURCE.replace("x *", "count *"));
    assert.deepEqual(h.editor.selection.active, new vscode.Position(1, 16));
    assert.deepEqual(h.client.sent("workspace/executeCommand"), [
      { command: "copilot.acceptNextEdit", arguments: ["ne-1"] },
    ]);
    assert.deepEqual(drawn(h.editor), [[], []]);
    assert.equal(context(VISIBLE_KEY), false);
    assert.equal(vscode.statusMessages.size, 0);
    assert.equal(h.nextEdits.current, undefined);
  });

  it("jumps to an edit off screen on the first Tab and applies it on the second", async () => {
    const h = harness();
    h.editor.visibleRanges = [new vscode.Range(3, 0, 4, 0)];
    const asked = h.nextEdits.request(false);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12])] });
    await asked;
    assert.equal(await h.nextEdits.accept(), true);
    assert.equal(h.document.getText(), SOURCE, "a jump changes nothing");
    assert.deepEqual(h.editor.selection.active, new vscode.Position(1, 11));
    assert.equal(h.editor.revealed.length, 1);
    h.editor.visibleRanges = [new vscode.Range(0, 0, 4, 0)];
    h.client.answer["workspace/executeCommand"] = true;
    assert.equal(await h.nextEdits.accept(), true);
    assert.equal(h.document.getText(), SOURCE.replace("x *", "count *"));
  });

  it("draws no answer that is stale, for another document, or while a completion is shown", async () => {
    const h = harness();
    let asked = h.nextEdits.request(false);
    h.document.insert(new vscode.Position(2, 0), "#"); // typed while the request ran
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12])] });
    assert.equal(await asked, false);
    asked = h.nextEdits.request(false);
    h.client.reply("textDocument/copilotInlineEdit", {
      edits: [{ ...edit("count", [1, 11], [1, 12], 2), textDocument: { uri: "file:///other.py", version: 2 } }],
    });
    assert.equal(await asked, false);
    h.completion = true;
    asked = h.nextEdits.request(false);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12], 2)] });
    assert.equal(await asked, false);
    assert.equal(h.nextEdits.current, undefined);
    assert.deepEqual(h.client.notified("textDocument/didShowInlineEdit"), []);
    // Asked by hand (Suggest Next Edit), it shows beside the completion.
    asked = h.nextEdits.request(true);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12], 2)] });
    assert.equal(await asked, true);
  });

  it("takes the edit away when the user types, without reporting it dismissed", async () => {
    const h = harness();
    const asked = h.nextEdits.request(false);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12])] });
    await asked;
    h.document.insert(new vscode.Position(0, 15), "s");
    assert.equal(h.nextEdits.current, undefined);
    assert.deepEqual(drawn(h.editor), [[], []]);
    assert.deepEqual(h.client.notified("copilot/didDismissCompletion"), []);
    // A stale Tab applies nothing and keeps its own meaning.
    assert.equal(await h.nextEdits.accept(), false);
    assert.equal(h.document.getText(), SOURCE.replace("(count", "(counts"));
  });

  it("Escape dismisses it, reports it, and asks nothing more until the text changes", async () => {
    const h = harness();
    let asked = h.nextEdits.request(false);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12])] });
    await asked;
    await h.nextEdits.dismiss();
    assert.deepEqual(drawn(h.editor), [[], []]);
    assert.equal(context(VISIBLE_KEY), false);
    assert.deepEqual(h.client.notified("copilot/didDismissCompletion"), [{ completionId: "ne-1" }]);
    assert.equal(await h.nextEdits.request(false), false);
    assert.equal(h.client.sent("textDocument/copilotInlineEdit").length, 1);
    // The command asks anyway.
    asked = h.nextEdits.request(true);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [] });
    assert.equal(await asked, false);
    assert.equal(h.client.sent("textDocument/copilotInlineEdit").length, 2);
  });

  it("a newer request cancels the one in flight", async () => {
    const h = harness();
    const first = h.nextEdits.request(false);
    const second = h.nextEdits.request(false);
    const [older] = h.client.requests;
    assert.equal(older.token?.isCancellationRequested, true);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit("count", [1, 11], [1, 12])] });
    older.resolve({ edits: [edit("x", [2, 0])] });
    assert.deepEqual(await Promise.all([first, second]), [false, true]);
    assert.deepEqual(drawn(h.editor)[1], ["count"]);
  });

  it("serves an edit on the cursor's line as the provider's ghost text, accepted through its command", async () => {
    const h = harness(new vscode.Position(4, 13));
    const asked = h.nextEdits.request(false);
    h.client.reply("textDocument/copilotInlineEdit", { edits: [edit(", 4", [4, 16])] });
    assert.equal(await asked, true);
    await flush();
    const names = vscode.executed.filter((call) => call.command !== "setContext").map((call) => call.command);
    assert.deepEqual(names, ["editor.action.inlineSuggest.hide", "editor.action.inlineSuggest.trigger"]);
    assert.equal(context(INLINE_KEY), true);
    assert.deepEqual(drawn(h.editor), [[], []], "no decoration");
    const items = await h.provider.provideInlineCompletionItems(
      h.document as unknown as vscodeTypes.TextDocument,
      new vscode.Position(4, 13) as unknown as vscodeTypes.Position,
      { triggerKind: vscode.InlineCompletionTriggerKind.Invoke, selectedCompletionInfo: undefined },
      new vscode.CancellationTokenSource().token as unknown as vscodeTypes.CancellationToken,
    );
    const item = items![0] as unknown as vscode.InlineCompletionItem;
    assert.equal(item.insertText, ", 3, 4");
    assert.deepEqual([item.range!.start, item.range!.end], [new vscode.Position(4, 13), new vscode.Position(4, 16)]);
    const accept = { title: "Accept next edit", command: "copilot.acceptNextEdit", arguments: ["ne-1"] };
    assert.deepEqual(item.command, { title: "Accept next edit", command: ACCEPTED_COMMAND, arguments: [accept] });
    assert.equal(h.client.sent("textDocument/inlineCompletion").length, 0, "no completion asked");
    assert.equal(h.client.notified("textDocument/didShowInlineEdit").length, 1);
    // VS Code inserts the item (its change event takes the edit off), then runs its command.
    h.document.replace(item.range!, item.insertText);
    assert.equal(h.document.lineAt(4).text, "print(scale(2, 3, 4))");
    assert.equal(h.nextEdits.current, undefined);
    h.client.answer["workspace/executeCommand"] = true;
    await h.nextEdits.accepted(...(item.command.arguments as [typeof accept]));
    assert.deepEqual(h.client.sent("workspace/executeCommand"), [
      { command: "copilot.acceptNextEdit", arguments: ["ne-1"] },
    ]);
    assert.equal(context(INLINE_KEY), false);
  });
});

describe("next edit key bindings and settings", () => {
  const root = join(__dirname, "..", "..");
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    contributes: {
      keybindings: Array<{ key: string; command: string; when: string }>;
      configuration: { properties: Record<string, { default: unknown }> };
    };
  };
  const extension = readFileSync(join(root, "src", "extension.ts"), "utf8");

  it("binds Tab to accept only while a decorated edit is shown and no suggestion or widget wants it", () => {
    const tab = manifest.contributes.keybindings.find((item) => item.command === "copilotLsp.acceptNextEdit");
    assert.equal(tab?.key, "tab");
    for (const part of [VISIBLE_KEY, "!inlineSuggestionVisible", "!suggestWidgetVisible", "editorTextFocus"]) {
      assert.ok(tab.when.includes(part), part);
    }
    assert.ok(extension.includes('registerCommand("copilotLsp.acceptNextEdit", () => nextEdits.accept())'));
  });

  it("binds Escape to dismiss a decorated edit, or one shown as ghost text", () => {
    const escape = manifest.contributes.keybindings.find((item) => item.command === "copilotLsp.dismissNextEdit");
    assert.equal(escape?.key, "escape");
    assert.ok(escape.when.includes(VISIBLE_KEY) && escape.when.includes(`inlineSuggestionVisible && ${INLINE_KEY}`));
    assert.ok(extension.includes('registerCommand("copilotLsp.dismissNextEdit", () => nextEdits.dismiss())'));
    assert.ok(extension.includes("registerCommand(ACCEPTED_COMMAND,"));
  });

  it("declares the setting off by default, as the server's", () => {
    assert.equal(manifest.contributes.configuration.properties["copilotLsp.nextEditSuggestions.enabled"]?.default, false);
  });
});
