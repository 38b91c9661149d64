// The server's inline-completion items as VS Code gets them (pure, unit-tested; the provider
// wraps these in VS Code's types; trigger kinds are in trigger.ts).

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
 * explicit (the trigger command, Alt+] / Alt+[: LSP Invoked, which brings the server's
 * alternatives) and the earlier one was not: the automatic answer holds one suggestion at most,
 * or none when the server debounced it away or skipped it in a backoff. */
export function reusable(earlier: { sameAnchor: boolean; invoked: boolean } | undefined, invoked: boolean): boolean {
  return earlier !== undefined && earlier.sameAnchor && (earlier.invoked || !invoked);
}
