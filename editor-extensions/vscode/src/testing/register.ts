// Makes `require("vscode")` load the stand-in (./vscode) in node tests: import this first.
import Module = require("module");

const table = Module as unknown as { _resolveFilename(request: string, ...rest: unknown[]): string };
const resolve = table._resolveFilename;
table._resolveFilename = function (request: string, ...rest: unknown[]): string {
  return request === "vscode" ? require.resolve("./vscode") : resolve.call(this, request, ...rest);
};
