/**
 * User-written patterns: the time one rewrite takes on one path, on RE2 (re2js, what the relay runs) and, for
 * comparison, on a JavaScript RegExp (what it ran before). The pattern `^/mnt/(\w+\s?)+$` backtracks
 * exponentially in JavaScript on a path that does not match; JavaScript is timed only on short paths (each
 * extra character about doubles its time), RE2 on the 50-character path and on a 4,000-character one.
 */
import { performance } from 'node:perf_hooks';
import { rewritePath } from '../src/paths/rewrite.ts';
import { report } from './lib.ts';

const PATTERN = '^/mnt/(\\w+\\s?)+$';
const pathOf = (length: number) => `/mnt/${'a'.repeat(length - 6)}!`;

function timeMs(run: () => void, times: number): number {
  const started = performance.now();
  for (let i = 0; i < times; i++) run();
  return (performance.now() - started) / times;
}

export async function benchPatterns(): Promise<Record<string, unknown>> {
  const rows: Array<Record<string, unknown>> = [];
  const rules = [{ from: PATTERN, to: '/data/$1' }];
  rewritePath(rules, '/mnt/warm up'); // compiles once, as at start
  for (const length of [50, 4000]) {
    rows.push({ engine: 'RE2 (re2js)', pathChars: length, msPerPath: Number(timeMs(() => rewritePath(rules, pathOf(length)), 20).toFixed(3)) });
  }
  const js = new RegExp(PATTERN, 'u');
  for (const length of [24, 26, 28, 30]) {
    rows.push({ engine: 'JavaScript RegExp', pathChars: length, msPerPath: Number(timeMs(() => js.test(pathOf(length)), 1).toFixed(1)) });
  }
  const summary = { pattern: PATTERN, re2At50Ms: rows[0]!.msPerPath, re2At4000Ms: rows[1]!.msPerPath, jsAt30Ms: rows.at(-1)!.msPerPath };
  report('patterns', rows, summary);
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPatterns();
