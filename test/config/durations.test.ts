import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DURATION_KEYS, MAX_DURATION_S } from '../../src/config/durations.ts';
import { parseConfig, parseJsonText } from '../../src/config/load.ts';
import { configSchema } from '../../src/config/schema.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { QueueIntake } from '../../src/queue/door.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { runCommand } from '../../src/targets/plex/backends/scanner/run.ts';
import { FolderWatcher } from '../../src/triggers/watch/index.ts';
import { tempDir } from '../helpers/relay.ts';

/** Node fires a timer longer than this after 1 ms (TimeoutOverflowWarning). */
const NODE_TIMER_MAX_MS = 2 ** 31 - 1;

function nested(key: string, value: unknown): Record<string, unknown> {
  const [head, ...rest] = key.split('.');
  return { [head!]: rest.length ? nested(rest.join('.'), value) : value };
}

function valueAt(config: unknown, key: string): unknown {
  return key.split('.').reduce<unknown>((node, k) => (node as Record<string, unknown>)[k], config);
}

describe('durations stay within what a timer holds (issue 35, item 9)', () => {
  for (const key of DURATION_KEYS) {
    test(`${key}: a value past 2,147,483 s (or 1e400, read as Infinity) is read as the bound with one warning`, () => {
      for (const text of ['3000000', '1e10', '1e308', '1e400']) {
        const raw = parseJsonText(JSON.stringify(nested(key, 0)).replace(/0(?=\}*$)/, text), 'test');
        const { file: config, warnings } = parseConfig(raw);
        const value = valueAt(config, key) as number;
        assert.equal(value, MAX_DURATION_S, `${key} ${text}`);
        assert.ok(value * 1000 <= NODE_TIMER_MAX_MS, 'the timer it becomes does not overflow');
        assert.equal(warnings.filter((w) => w.startsWith(`${key}: `) && w.includes('read as 2147483 s')).length, 1, JSON.stringify(warnings));
      }
      // At the bound it is kept as written, without a warning.
      const { file: config, warnings } = parseConfig(nested(key, MAX_DURATION_S));
      assert.equal(valueAt(config, key), MAX_DURATION_S);
      assert.ok(!warnings.some((w) => w.startsWith(`${key}: `)));
      // The schema itself names the bound (what code building a config without the loader gets).
      const strict = configSchema.safeParse(nested(key, 3_000_000));
      assert.equal(strict.success, false);
      assert.match(JSON.stringify(strict.error?.issues), /at most 2147483 seconds/);
    });
  }

  test('every duration key of the schema is in the list (a new timing key must get the bound too)', () => {
    // A number key whose name says it is a time: *_DELAY, *_TIMEOUT, *_INTERVAL, *_DELAY_MAX.
    const timing = /(_DELAY|_TIMEOUT|_INTERVAL|_DELAY_MAX)$/;
    const found: string[] = [];
    const walk = (shape: Record<string, unknown>, prefix: string) => {
      for (const [k, v] of Object.entries(shape)) {
        const inner = (v as { def?: { innerType?: { def?: { shape?: Record<string, unknown> } }; in?: { def?: { innerType?: { def?: { shape?: Record<string, unknown> } } } } } }).def;
        const sub = inner?.innerType?.def?.shape ?? inner?.in?.def?.innerType?.def?.shape;
        if (sub) walk(sub, `${prefix}${k}.`);
        else if (timing.test(k)) found.push(`${prefix}${k}`);
      }
    };
    walk(configSchema.shape, '');
    assert.deepEqual(found.sort(), [...DURATION_KEYS].sort());
  });

  test('PLEX_SCANNER_TIMEOUT 3000000: a scanner run is not killed at once (it was, after 1 ms)', async () => {
    const { file: config } = parseConfig({ PLEX_SCANNER_TIMEOUT: 3_000_000 });
    const result = await runCommand({ file: 'sh', args: ['-c', 'sleep 0.3; echo scanned'] }, { timeoutMs: config.PLEX_SCANNER_TIMEOUT * 1000 });
    assert.equal(result.timedOut, false);
    assert.equal(result.status, 0);
    assert.equal(result.stdout.trim(), 'scanned');
  });

  test('WATCH.POLL_INTERVAL 1e10: the watcher polls and logs one line (it logged a RangeError about every 0.5 ms)', async () => {
    const dir = tempDir();
    const root = join(dir, 'media');
    mkdirSync(join(root, 'Movies', 'Heat (1995)'), { recursive: true });
    writeFileSync(join(root, 'Movies', 'Heat (1995)', 'Heat.mkv'), 'x');
    const store = new QueueStore(join(dir, 'queue.db'));
    const lines: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const { config } = parseConfig({ WATCH: { ENABLED: true, PATHS: [root], POLL: true, POLL_INTERVAL: 1e10 } });
    const watcher = new FolderWatcher({ config, intake: new QueueIntake(store, [], () => ({ delayMs: 1000, maxMs: 1000 })), log });
    try {
      await watcher.start();
      // Half a second of the watcher's life: before the bound this was about a thousand error lines.
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(lines.map((l) => l.msg), ['watching folders']);
    } finally {
      await watcher.close();
      store.close();
    }
  });
});
