// Loaded with `node --allow-natives-syntax --import` into a relay under test. On SIGUSR2 it asks V8 to
// optimize a fresh function and appends V8's optimization status for it (a number, one per line) to the
// file named by SCANRELAY_TURBOFAN_PROBE, so a test can tell whether TurboFan is on in the running relay.
import { appendFileSync } from 'node:fs';

const file = process.env.SCANRELAY_TURBOFAN_PROBE;
if (file) {
  process.on('SIGUSR2', () => {
    const fn = new Function('a', 'return a + 1');
    // V8's test intrinsics; compiled only here, so the flag is needed only by processes that load this file.
    const optimize = new Function('f', '%PrepareFunctionForOptimization(f); f(1); f(2); %OptimizeFunctionOnNextCall(f); f(3); return %GetOptimizationStatus(f);');
    appendFileSync(file, `${optimize(fn)}\n`);
  });
}
