// Next edits (the server's `textDocument/copilotInlineEdit`) for VS Code's stable API: which
// way an edit can be shown, and what Tab does with it (pure, unit-tested; the controller in
// common/nextedit.ts draws it).
//
// VS Code's stable inline-completion API draws ghost text only: the item's range must begin
// and end on one line and contain the cursor, and VS Code draws an item only when the text
// from the range's start to the cursor is kept and the rest of the range is kept in order
// (insertions only). An edit that does that near the cursor is shown as an inline completion;
// every other one (elsewhere, a deletion, a replacement, several lines) as decorations: the
// replaced text struck through, the new text after it, accepted by a command bound to Tab.

import { LspRange } from "./items";

export interface LspPosition {
  line: number;
  character: number;
}

/** One entry of the server's `edits`: `range` is replaced by `text`; `command` accepts it. */
export interface LspInlineEdit {
  text: string;
  textDocument: { uri: string; version: number };
  range: LspRange;
  command?: { title: string; command: string; arguments?: unknown[] };
}

/** Shown as ghost text: VS Code replaces `range` (one line, from the cursor) by `insertText`. */
export interface InlineDisplay {
  kind: "inline";
  range: LspRange;
  insertText: string;
}

/** Shown as decorations: `deleted` struck through (none for an insertion), `inserted` drawn
 * after it as the text of an `after` decoration at `at` (line breaks as ⏎). */
export interface DecorationDisplay {
  kind: "decoration";
  deleted: LspRange | undefined;
  at: LspPosition;
  inserted: string;
}

export type Display = InlineDisplay | DecorationDisplay;

/** The longest inserted text drawn in full in a decoration (more ends with an ellipsis). */
export const MAX_SHOWN = 120;

function isPosition(value: unknown): value is LspPosition {
  const p = value as LspPosition | undefined;
  return typeof p?.line === "number" && typeof p?.character === "number" && p.line >= 0 && p.character >= 0;
}

function isRange(value: unknown): value is LspRange {
  const r = value as LspRange | undefined;
  return isPosition(r?.start) && isPosition(r?.end) && !before(r.end, r.start);
}

/** The first edit of the server's answer (the entries are alternatives), or undefined when it
 * holds none or a malformed one. */
export function firstEdit(result: unknown): LspInlineEdit | undefined {
  const edits = (result as { edits?: unknown } | null | undefined)?.edits;
  const edit = Array.isArray(edits) ? (edits[0] as LspInlineEdit | undefined) : undefined;
  if (
    !edit ||
    typeof edit.text !== "string" ||
    !isRange(edit.range) ||
    typeof edit.textDocument?.uri !== "string" ||
    typeof edit.textDocument?.version !== "number"
  ) {
    return undefined;
  }
  return edit;
}

/** The edit's id: the first argument of its command (the server's record of it). */
export function editId(edit: LspInlineEdit): string | undefined {
  const id = edit.command?.arguments?.[0];
  return typeof id === "string" ? id : undefined;
}

function before(a: LspPosition, b: LspPosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}

/** Whether every character of `kept` appears in `text` in order: `text` only inserts. */
export function keepsInOrder(kept: string, text: string): boolean {
  let at = 0;
  for (const char of text) {
    if (at < kept.length && kept[at] === char) {
      at += 1;
    }
  }
  return at === kept.length;
}

/** The edit's text with LF line breaks (the server sends the document's: CRLF files get CRLF). */
export function lfText(text: string): string {
  return text.replace(/\r\n/g, "\n");
}

/**
 * How to show `edit` with the cursor at `cursor`; `line(n)` is the text of line n.
 *
 * Inline when VS Code can draw it as ghost text: the edit lies on the cursor's line at or
 * after the cursor, and it only inserts (what it replaces is kept, in order, in its text; text
 * with line breaks only when nothing follows it on the line). The item's range then covers
 * the cursor and the edit (VS Code wants the range to contain the cursor), and its text is
 * what lies between them followed by the edit's text.
 */
export function display(edit: LspInlineEdit, cursor: LspPosition, line: (n: number) => string): Display {
  const { start, end } = edit.range;
  const text = lfText(edit.text);
  if (start.line === cursor.line && end.line === cursor.line && start.character >= cursor.character) {
    const current = line(cursor.line);
    const replaced = current.slice(start.character, end.character);
    const multiline = text.includes("\n");
    const fits = multiline ? replaced === "" && current.slice(end.character) === "" : keepsInOrder(replaced, text);
    if (fits && end.character <= current.length) {
      return {
        kind: "inline",
        range: { start: { line: cursor.line, character: cursor.character }, end: { ...end } },
        insertText: current.slice(cursor.character, start.character) + text,
      };
    }
  }
  const empty = start.line === end.line && start.character === end.character;
  return { kind: "decoration", deleted: empty ? undefined : edit.range, at: end, inserted: shownText(text) };
}

/** The inserted text as one line for an `after` decoration: line breaks as ⏎, cut when long. */
export function shownText(text: string): string {
  const one = text.replace(/\n/g, "⏎");
  return one.length > MAX_SHOWN ? `${one.slice(0, MAX_SHOWN - 1)}…` : one;
}

/** Where the text ends once `text` is put at `start`: the cursor after applying an edit. */
export function endOf(start: LspPosition, text: string): LspPosition {
  const lines = lfText(text).split("\n");
  const last = lines[lines.length - 1];
  return lines.length === 1
    ? { line: start.line, character: start.character + last.length }
    : { line: start.line + lines.length - 1, character: last.length };
}

/**
 * What Tab does with a decorated edit: "jump" (the cursor goes to the edit, shown in the
 * middle of the editor) when none of its lines is on screen, as Neovim's Tab jumps to an edit
 * away from the cursor; else "apply".
 */
export function tabStep(range: LspRange, visible: LspRange[]): "jump" | "apply" {
  const onScreen = visible.some((shown) => shown.start.line <= range.end.line && range.start.line <= shown.end.line);
  return onScreen ? "apply" : "jump";
}
