// A node:test reporter that prints one line at the end: the VS Code tier's counts, in the
// shape of the pytest tiers' lines that `make test` prints (tests/conftest.py).
export default async function* summary(source) {
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
  for await (const event of source) {
    if (event.data?.details?.type === "suite") {
      continue;
    }
    if (event.type === "test:pass") {
      counts[event.data.skip ? "skipped" : event.data.todo ? "todo" : "passed"] += 1;
    } else if (event.type === "test:fail") {
      counts.failed += 1;
    }
  }
  const parts = Object.entries(counts)
    .filter(([outcome, n]) => n > 0 || outcome === "passed")
    .map(([outcome, n]) => `${n} ${outcome}`);
  yield `tier vscode: ${parts.join(", ")}\n`;
}
