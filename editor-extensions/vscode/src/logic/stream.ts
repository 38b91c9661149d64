// Streamed suggestions: which partial text belongs to the request the editor waits on
// (pure, unit-tested; the provider feeds it notifications and asks it what to show).

export interface Partial {
  uri: string;
  completionId: string;
  version: number | null;
  text: string;
  done: boolean;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
}

export interface Anchor {
  uri: string;
  version: number;
  line: number;
  character: number;
}

/** Follows the partial text of the completion requested at `anchor`. */
export class StreamState {
  anchor: Anchor | undefined;
  completionId: string | undefined;
  text = "";
  done = false;
  private listeners: Array<() => void> = [];

  /** A new request at `anchor`: forget the previous completion. */
  start(anchor: Anchor): void {
    this.anchor = anchor;
    this.completionId = undefined;
    this.text = "";
    this.done = false;
  }

  /** Take a notification; true when it changed what should be shown. */
  accept(partial: Partial): boolean {
    const anchor = this.anchor;
    if (!anchor || partial.uri !== anchor.uri || (partial.version !== null && partial.version !== anchor.version)) {
      return false;
    }
    const start = partial.range.start;
    if (start.line !== anchor.line || start.character !== anchor.character) {
      return false;
    }
    if (this.completionId !== undefined && partial.completionId !== this.completionId && !this.done) {
      // A newer completion for the same place replaces the old one.
      this.text = "";
    }
    const changed = partial.text !== this.text || partial.done !== this.done;
    this.completionId = partial.completionId;
    this.text = partial.text;
    this.done = partial.done;
    if (changed) {
      this.listeners.forEach((listener) => listener());
    }
    return changed;
  }

  /** The text to show for a request at `anchor` now, if any. */
  textAt(anchor: Anchor): string | undefined {
    const own = this.anchor;
    if (!own || own.uri !== anchor.uri || own.version !== anchor.version) {
      return undefined;
    }
    if (own.line !== anchor.line || own.character !== anchor.character) {
      return undefined;
    }
    return this.text || undefined;
  }

  /**
   * The text worth drawing as a preview at `anchor`: once its first line is complete, or the
   * stream ended. VS Code draws a provider's answer once per position and version (it skips
   * re-triggers there), so a preview is shown once and then swapped for the final answer;
   * a preview of a few characters would stay on screen, alone, until that swap.
   */
  previewAt(anchor: Anchor): string | undefined {
    const text = this.textAt(anchor);
    return text !== undefined && (this.done || text.includes("\n")) ? text : undefined;
  }

  onChange(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }
}
