// Makes `require("vscode")` load the stand-in (./vscode) in node tests: import this first.
import Module from "node:module";

// A function-typed property, not a method: it is called through `.call` with the loader's `this`.
type Resolve = (this: unknown, request: string, ...rest: unknown[]) => string;
const table = Module as unknown as { _resolveFilename: Resolve };
const resolve = table._resolveFilename;
table._resolveFilename = function (request: string, ...rest: unknown[]): string {
  return request === "vscode" ? require.resolve("./vscode") : resolve.call(this, request, ...rest);
};
