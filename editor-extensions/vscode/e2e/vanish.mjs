// When ghost text vanished in an end-to-end try (run.mjs); pure, tested by vanish.test.mjs
// (part of `npm test`).

/**
 * How the ghost text vanished in a try, from its timeline ([ms since Enter, text] at each change)
 * and `endMs`, when it was read as settled: each stretch with no ghost text after some was seen,
 * until text came back (or until `endMs`). Vanished: empty when settled, or a stretch longer
 * than `blipMs` (the swap's hide-then-draw is a few ms).
 */
export function vanishing(timeline, endMs, blipMs) {
  const gaps = [];
  let seen = false;
  let emptySince = null;
  for (const [ms, text] of timeline) {
    if (text) {
      if (emptySince !== null) {
        gaps.push([emptySince, ms - emptySince]);
        emptySince = null;
      }
      seen = true;
    } else if (seen && emptySince === null) {
      emptySince = ms;
    }
  }
  const gone = emptySince !== null;
  if (gone) {
    gaps.push([emptySince, Math.max(0, Math.round(endMs - emptySince))]);
  }
  const longest = gaps.reduce((most, [, length]) => Math.max(most, length), 0);
  return { vanished: gone || longest > blipMs, gone_when_settled: gone, longest_gap_ms: longest, gaps };
}
