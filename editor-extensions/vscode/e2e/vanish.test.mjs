// The end-to-end run's verdict on ghost text that vanishes (vanish.mjs), on timelines of the
// shapes the run records: [ms since Enter, ghost text] at each change.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { vanishing } from "./vanish.mjs";

describe("e2e: ghost text that vanishes", () => {
  it("a preview swapped for its block through a blip of a few ms stays", () => {
    const timeline = [[1060, "x = 1\n"], [2252, "x = 1\n    y"], [2257, ""], [2284, "x = 1\n    y = 2"]];
    const verdict = vanishing(timeline, 7300, 300);
    assert.equal(verdict.vanished, false);
    assert.deepEqual(verdict.gaps, [[2257, 27]]);
  });

  it("seen, then empty when settled: vanished", () => {
    const verdict = vanishing([[2900, "x = 1\n"], [6500, ""]], 11500, 300);
    assert.equal(verdict.vanished, true);
    assert.equal(verdict.gone_when_settled, true);
    assert.deepEqual(verdict.gaps, [[6500, 5000]]);
  });

  it("gone for longer than a blip before the block came: vanished", () => {
    const verdict = vanishing([[2900, "x = 1\n"], [6500, ""], [9800, "x = 1\n    y = 2"]], 15000, 300);
    assert.equal(verdict.vanished, true);
    assert.equal(verdict.gone_when_settled, false);
    assert.equal(verdict.longest_gap_ms, 3300);
  });

  it("nothing before the first ghost text counts, and none at all is not a vanish", () => {
    assert.equal(vanishing([[0, ""], [1500, "x = 1\n"]], 6500, 300).vanished, false);
    assert.equal(vanishing([], 30000, 300).vanished, false);
  });
});
