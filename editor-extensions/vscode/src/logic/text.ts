// Pure text helpers shared by the commands and the provider (no vscode import: unit-tested).

/** The part of `text` that "accept next word" takes: blanks, then a word or a run of symbols. */
export function nextWord(text: string): string {
  const match = /^\s*[\p{L}\p{N}_]+/u.exec(text) ?? /^\s*[^\p{L}\p{N}_\s]+/u.exec(text) ?? /^\s+/.exec(text);
  return match ? match[0] : text;
}

/** The part of `text` that "accept next line" takes: to the end of the (first non-empty) line. */
export function nextLine(text: string): string {
  const first = /^[^\n]*/.exec(text)![0];
  if (first !== "") {
    return first;
  }
  return /^\n[^\n]*/.exec(text)?.[0] ?? text;
}

/** Characters (code points) of a string, as the server counts `acceptedLength`. */
export function chars(text: string): number {
  return [...text].length;
}

/**
 * What is left of a suggestion after the user typed `typed` at its anchor, or undefined when
 * the typing diverged from it (then the suggestion is stale).
 */
export function remainder(suggestion: string, typed: string): string | undefined {
  return suggestion.startsWith(typed) ? suggestion.slice(typed.length) : undefined;
}
