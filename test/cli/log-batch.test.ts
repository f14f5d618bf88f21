import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { joinedPerTurn } from '../../src/log.ts';
import { ROOT } from '../helpers/relay.ts';

/** A destination that records each write and flush. */
function recorder() {
  const writes: string[] = [];
  const calls: string[] = [];
  return {
    writes,
    calls,
    dest: {
      write: (data: string) => (writes.push(data), true),
      flush: (cb?: (err?: Error) => void) => (calls.push('flush'), cb?.()),
      flushSync: () => void calls.push('flushSync'),
    },
  };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

test('the lines of one turn reach the destination as one write, in order; the next turn makes another', async () => {
  const { writes, dest } = recorder();
  const batched = joinedPerTurn(dest);
  for (let i = 0; i < 100; i++) batched.write(`{"n":${i}}\n`);
  assert.equal(writes.length, 0, 'nothing is written before the turn ends');
  await nextTurn();
  assert.equal(writes.length, 1);
  assert.deepEqual(writes[0]!.trimEnd().split('\n').map((l) => JSON.parse(l).n), Array.from({ length: 100 }, (_, i) => i));
  batched.write('{"n":100}\n');
  await nextTurn();
  assert.deepEqual(writes.slice(1), ['{"n":100}\n']);
});

test('flush and flushSync hand the pending lines over first', () => {
  const { writes, calls, dest } = recorder();
  const batched = joinedPerTurn(dest);
  batched.write('a\n');
  batched.flushSync();
  assert.deepEqual(writes, ['a\n']);
  batched.write('b\n');
  batched.flush();
  assert.deepEqual(writes, ['a\n', 'b\n']);
  assert.deepEqual(calls, ['flushSync', 'flush']);
});

// The relay stops with process.exit right after logging "stopping" (cli/server.ts): that line must not be lost.
test('lines logged just before process.exit are on stdout', () => {
  const script = `
    import { createLogger } from ${JSON.stringify(join(ROOT, 'src', 'log.ts'))};
    const log = await createLogger({ level: 'info', pretty: false });
    for (let i = 0; i < 500; i++) log.info({ n: i }, 'line');
    log.info('last before exit');
    process.exit(0);
  `;
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const lines = res.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { n?: number; msg: string });
  assert.equal(lines.length, 501);
  assert.deepEqual(lines.slice(0, 500).map((l) => l.n), Array.from({ length: 500 }, (_, i) => i));
  assert.equal(lines.at(-1)!.msg, 'last before exit');
});
