// Trigger kinds: VS Code and LSP number them differently, so the mapping is explicit.
// VS Code: InlineCompletionTriggerKind.Invoke = 0, Automatic = 1.
// LSP 3.18: InlineCompletionTriggerKind.Invoked = 1, Automatic = 2.
// The server debounces automatic requests and skips them during a backoff after engine
// failures; an explicit invoke (Alt+\ or the command) must reach the engine at once.

export const VSCODE_INVOKE = 0;
export const VSCODE_AUTOMATIC = 1;
export const LSP_INVOKED = 1;
export const LSP_AUTOMATIC = 2;
export type LspTriggerKind = typeof LSP_INVOKED | typeof LSP_AUTOMATIC;

/** The LSP trigger kind for VS Code's `context.triggerKind`; anything unknown is automatic. */
export function lspTriggerKind(vscodeKind: number): LspTriggerKind {
  return vscodeKind === VSCODE_INVOKE ? LSP_INVOKED : LSP_AUTOMATIC;
}

/** What `textDocument/inlineCompletion` carries for a request at a position. */
export function inlineCompletionParams(
  uri: string,
  line: number,
  character: number,
  vscodeKind: number,
): { textDocument: { uri: string }; position: { line: number; character: number }; context: { triggerKind: LspTriggerKind } } {
  return { textDocument: { uri }, position: { line, character }, context: { triggerKind: lspTriggerKind(vscodeKind) } };
}
