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

/** A selection as the controller sets it (anchor and cursor). */
export class Selection extends Range {
  constructor(
    readonly anchor: Position,
    readonly active: Position,
  ) {
    super(anchor, active);
  }
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class MarkdownString {
  constructor(readonly value: string) {}
}

export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}

/** A listener list with VS Code's `event(listener)` shape; `fire` calls them. */
export class EventEmitter<T> {
  private listeners: Array<(value: T) => void> = [];
  readonly event = (listener: (value: T) => void): Disposable => {
    this.listeners.push(listener);
    return new Disposable(() => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    });
  };

  fire(value: T): void {
    [...this.listeners].forEach((listener) => listener(value));
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

  lineAt(line: number): { text: string } {
    return { text: this.lines[line] };
  }

  insert(position: Position, text: string): Position {
    return this.replace(new Range(position, position), text);
  }

  /** `range` replaced by `text`: the version grows, and listeners hear of the change. */
  replace(range: Range, text: string): Position {
    const at = this.offset(range.start);
    const whole = this.lines.join("\n");
    this.lines = (whole.slice(0, at) + text + whole.slice(this.offset(range.end))).split("\n");
    this.version++;
    didChangeTextDocument.fire({ document: this, contentChanges: [{ range, text }] });
    return this.positionAt(at + text.length);
  }
}

export const didChangeTextDocument = new EventEmitter<{ document: TextDocument; contentChanges: unknown[] }>();
export const didChangeActiveTextEditor = new EventEmitter<TextEditor | undefined>();

export const workspace = {
  onDidChangeTextDocument: didChangeTextDocument.event,
};

/** A decoration type; `setDecorations` records what each editor draws with it. */
export class DecorationType extends Disposable {
  constructor(readonly options: unknown) {
    super();
  }
}

/** The active editor: a document and a cursor; `edit` inserts and moves the cursor. */
export class TextEditor {
  selection: { active: Position };
  /** The lines on screen (all of a short document). */
  visibleRanges: Range[] = [new Range(0, 0, 1000, 0)];
  /** What each decoration type draws now. */
  decorations = new Map<DecorationType, unknown[]>();
  revealed: Range[] = [];

  constructor(
    readonly document: TextDocument,
    cursor: Position,
  ) {
    this.selection = { active: cursor };
  }

  edit(
    callback: (edit: { insert(position: Position, text: string): void; replace(range: Range, text: string): void }) => void,
  ): Promise<boolean> {
    callback({
      insert: (position, text) => {
        this.selection = { active: this.document.insert(position, text) };
      },
      replace: (range, text) => {
        this.selection = { active: this.document.replace(range, text) };
      },
    });
    return Promise.resolve(true);
  }

  setDecorations(type: DecorationType, options: unknown[]): void {
    this.decorations.set(type, options);
  }

  revealRange(range: Range): void {
    this.revealed.push(range);
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

/** Status bar messages shown now. */
export const statusMessages = new Set<string>();

export const window = {
  activeTextEditor: undefined as TextEditor | undefined,
  createOutputChannel: (): unknown => ({
    info: log,
    warn: log,
    error: log,
    debug: log,
    trace: log,
    show: log,
    dispose: log,
  }),
  onDidChangeActiveTextEditor: didChangeActiveTextEditor.event,
  createTextEditorDecorationType: (options: unknown): DecorationType => new DecorationType(options),
  setStatusBarMessage: (text: string): Disposable => {
    statusMessages.add(text);
    return new Disposable(() => statusMessages.delete(text));
  },
};

export const Uri = {
  parse(value: string): { toString(): string } {
    return { toString: () => value };
  },
};
