// The server's inline-completion items as VS Code gets them, and which trigger kind the
// server is told (pure, unit-tested; the provider wraps these in VS Code's types).

export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

export interface LspItem {
  insertText: string | { value: string };
  range?: LspRange;
  command?: { command: string; arguments?: unknown[] };
}

/** One suggestion for VS Code: its text, its range (undefined: at the cursor) and its id. */
export interface Offered {
  text: string;
  range: LspRange | undefined;
  id: string | undefined;
}

/** VS Code's InlineCompletionTriggerKind (Invoke = 0, Automatic = 1). */
export const VSCODE_INVOKE = 0;
/** LSP's InlineCompletionTriggerKind (Invoked = 1, Automatic = 2). */
export const LSP_INVOKED = 1;
export const LSP_AUTOMATIC = 2;

/**
 * The LSP trigger kind for VS Code's: an explicit request (the "trigger inline suggestion"
 * command, and "show next/previous inline suggestion", Alt+] / Alt+[) is Invoked, which
 * makes the server answer with its alternatives; typing is Automatic (one suggestion).
 */
export function lspTriggerKind(vscodeKind: number): number {
  return vscodeKind === VSCODE_INVOKE ? LSP_INVOKED : LSP_AUTOMATIC;
}

export function itemText(item: LspItem): string {
  return typeof item.insertText === "string" ? item.insertText : item.insertText.value;
}

export function itemId(item: LspItem): string | undefined {
  const id = item.command?.arguments?.[0];
  return typeof id === "string" ? id : undefined;
}

/** Every item of the server's answer, in its order (the first is the greedy suggestion; VS
 * Code cycles through the others with Alt+] and Alt+[). */
export function offered(items: LspItem[]): Offered[] {
  return items.map((item) => ({ text: itemText(item), range: item.range, id: itemId(item) }));
}

/** A request already made at the same anchor serves a new call unless the new call is
 * explicit and the earlier one was not (it holds no alternatives). */
export function reusable(earlier: { sameAnchor: boolean; invoked: boolean } | undefined, invoked: boolean): boolean {
  return earlier !== undefined && earlier.sameAnchor && (earlier.invoked || !invoked);
}
