import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  inlineCompletionParams,
  LSP_AUTOMATIC,
  LSP_INVOKED,
  lspTriggerKind,
  VSCODE_AUTOMATIC,
  VSCODE_INVOKE,
} from "../logic/trigger";

describe("trigger kind", () => {
  it("maps VS Code's numbering (Invoke 0, Automatic 1) to LSP 3.18's (Invoked 1, Automatic 2)", () => {
    assert.equal(VSCODE_INVOKE, 0);
    assert.equal(VSCODE_AUTOMATIC, 1);
    assert.equal(lspTriggerKind(VSCODE_INVOKE), 1);
    assert.equal(lspTriggerKind(VSCODE_AUTOMATIC), 2);
  });

  it("sends an explicit invoke as Invoked", () => {
    assert.deepEqual(inlineCompletionParams("file:///a.py", 3, 7, VSCODE_INVOKE), {
      textDocument: { uri: "file:///a.py" },
      position: { line: 3, character: 7 },
      context: { triggerKind: LSP_INVOKED },
    });
  });

  it("sends typing as Automatic", () => {
    assert.equal(inlineCompletionParams("file:///a.py", 0, 0, VSCODE_AUTOMATIC).context.triggerKind, LSP_AUTOMATIC);
  });
});
