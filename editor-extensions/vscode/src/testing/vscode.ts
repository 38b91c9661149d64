// A stand-in for the parts of the `vscode` module the provider uses, for node tests without
// VS Code. Commands run and editor edits are recorded so that a test can check them.

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}

  isBefore(other: Position): boolean {
    return this.line < other.line || (this.line === other.line && this.character < other.character);
  }

  isEqual(other: Position): boolean {
    return this.line === other.line && this.character === other.character;
  }
}

export class Range {
  readonly start: Position;
  readonly end: Position;

  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === "number" && typeof b === "number") {
      this.start = new Position(a, b);
      this.end = new Position(c ?? a, d ?? b);
    } else {
      this.start = a as Position;
      this.end = b as Position;
    }
  }
}

export interface Command {
  title: string;
  command: string;
  arguments?: unknown[];
}

export class InlineCompletionItem {
  constructor(
    readonly insertText: string,
    readonly range?: Range,
    readonly command?: Command,
  ) {}
}

export enum InlineCompletionTriggerKind {
  Invoke = 0,
  Automatic = 1,
}

export class Disposable {
  constructor(private readonly onDispose: () => void = () => undefined) {}

  dispose(): void {
    this.onDispose();
  }
}

export class CancellationTokenSource {
  private listeners: Array<() => void> = [];
  readonly token = {
    isCancellationRequested: false,
    onCancellationRequested: (listener: () => void): Disposable => {
      this.listeners.push(listener);
      return new Disposable(() => {
        this.listeners = this.listeners.filter((item) => item !== listener);
      });
    },
  };

  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.listeners.forEach((listener) => listener());
    }
  }

  dispose(): void {
    this.listeners = [];
  }
}

/** A text document held as lines; `version` grows with each edit, as in VS Code. */
export class TextDocument {
  version = 1;
  lines: string[];

  constructor(
    readonly uri: { toString(): string },
    text: string,
    readonly languageId = "python",
  ) {
    this.lines = text.split("\n");
  }

  getText(range?: Range): string {
    const text = this.lines.join("\n");
    if (!range) {
      return text;
    }
    return text.slice(this.offset(range.start), this.offset(range.end));
  }

  offset(position: Position): number {
    let offset = 0;
    for (let line = 0; line < position.line; line++) {
      offset += this.lines[line].length + 1;
    }
    return offset + position.character;
  }

  positionAt(offset: number): Position {
    let line = 0;
    while (offset > this.lines[line].length) {
      offset -= this.lines[line].length + 1;
      line++;
    }
    return new Position(line, offset);
  }

  insert(position: Position, text: string): Position {
    const at = this.offset(position);
    const whole = this.lines.join("\n");
    this.lines = (whole.slice(0, at) + text + whole.slice(at)).split("\n");
    this.version++;
    return this.positionAt(at + text.length);
  }
}

/** The active editor: a document and a cursor; `edit` inserts and moves the cursor. */
export class TextEditor {
  selection: { active: Position };

  constructor(
    readonly document: TextDocument,
    cursor: Position,
  ) {
    this.selection = { active: cursor };
  }

  edit(callback: (edit: { insert(position: Position, text: string): void }) => void): Promise<boolean> {
    callback({
      insert: (position, text) => {
        this.selection = { active: this.document.insert(position, text) };
      },
    });
    return Promise.resolve(true);
  }
}

/** Every `commands.executeCommand` call, in order. */
export const executed: Array<{ command: string; args: unknown[] }> = [];

export const commands = {
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    executed.push({ command, args });
    return Promise.resolve(undefined);
  },
  registerCommand(): Disposable {
    return new Disposable();
  },
};

const log = () => undefined;

export const window: { activeTextEditor: TextEditor | undefined; createOutputChannel(name: string, options?: unknown): unknown } = {
  activeTextEditor: undefined,
  createOutputChannel: () => ({ info: log, warn: log, error: log, debug: log, trace: log, show: log, dispose: log }),
};

export const Uri = {
  parse(value: string): { toString(): string } {
    return { toString: () => value };
  },
};
