import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { commandTargetSchema } from '../../../src/targets/command/schema.ts';
import { createCommandTarget } from '../../../src/targets/command/target.ts';
import { runScanCommand } from '../../../src/targets/plex/commands.ts';
import { LineSplitter, MAX_LINE_CHARS } from '../../../src/targets/process.ts';
import { scanItem } from '../../helpers/plex-target.ts';
import { processAlive, ROOT, runCli, tempDir, waitFor } from '../../helpers/relay.ts';

// Issue 52 items 4 and 5: a command target's output is bounded per line, its TIMEOUT is always finite, and its
// programs (with their children) never outlive the relay, however the relay ends.

const dir = tempDir('scanrelay-command-faults-');

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const pidsIn = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number) : []);

describe('command target under faults', { skip: process.platform === 'win32' }, () => {
  test('a program printing 5 MB without a newline logs one cut line, not a "line" per chunk read', async () => {
    const lines: Array<Record<string, any>> = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const prog = script('loud.sh', `yes x | tr -d '\\n' | head -c 5000000\necho\necho after`);
    const target = createCommandTarget('hook', commandTargetSchema.parse({ TYPE: 'command', COMMAND: [prog], TIMEOUT: 60 }), log);
    const result = await target.deliver(scanItem({ folder: '/tv/A' }));
    assert.equal(result.outcome, 'done', JSON.stringify(result));
    const output = lines.filter((l) => l.msg === 'command output').map((l) => l.output as string);
    assert.equal(output.length, 2, `${output.length} lines, the longest ${Math.max(...output.map((o) => o.length))} characters`);
    assert.equal(output[0], `${'x'.repeat(MAX_LINE_CHARS)} [line cut at ${MAX_LINE_CHARS} characters]`);
    assert.equal(output[1], 'after');
  });

  test("Plex's RUN_COMMAND_AFTER_SCAN runs the same way: 5 MB without a newline is one cut line", async () => {
    const lines: Array<Record<string, any>> = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    assert.deepEqual(await runScanCommand('RUN_COMMAND_AFTER_SCAN', `yes x | tr -d '\\n' | head -c 5000000`, { path: '/x', section: '1' }, log, 60_000), { ok: true, code: 0 });
    const output = lines.filter((l) => l.msg === 'RUN_COMMAND_AFTER_SCAN output').map((l) => l.output as string);
    assert.deepEqual(output, [`${'x'.repeat(MAX_LINE_CHARS)} [line cut at ${MAX_LINE_CHARS} characters]`]);
  });

  test('LineSplitter: lines across chunks, CRLF, a character split between chunks, a long line cut once', () => {
    const out: string[] = [];
    const s = new LineSplitter((l) => out.push(l));
    const euro = Buffer.from('€');
    s.write(Buffer.from('one\r\ntw'));
    s.write(Buffer.concat([Buffer.from('o '), euro.subarray(0, 1)]));
    s.write(Buffer.concat([euro.subarray(1), Buffer.from('\n')]));
    s.write(Buffer.from('y'.repeat(MAX_LINE_CHARS + 10)));
    s.write(Buffer.from('y'.repeat(100_000)));
    s.write(Buffer.from('yyy\nlast'));
    s.end();
    assert.deepEqual(out, ['one', 'two €', `${'y'.repeat(MAX_LINE_CHARS)} [line cut at ${MAX_LINE_CHARS} characters]`, 'last']);
  });

  test('TIMEOUT 0 is refused at load: the relay does not start (exit 2) and says why', async () => {
    assert.equal(commandTargetSchema.safeParse({ TYPE: 'command', COMMAND: ['/bin/true'], TIMEOUT: 0 }).success, false);
    assert.equal(commandTargetSchema.safeParse({ TYPE: 'command', COMMAND: ['/bin/true'], TIMEOUT: 86_401 }).success, false);
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ SERVER_PASS: 'command-secret', SERVER_PORT: 0, PLEX_ENABLED: false, TARGETS: { hook: { TYPE: 'command', COMMAND: ['/bin/true'], TIMEOUT: 0 } } }));
    const r = await runCli(['--config', config, 'server'], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout + r.stderr, /TIMEOUT.*more than 0 seconds/);
  });

  test('closing the target (the relay stopping) kills the program and its children; the scan is tried again', async () => {
    const pids = join(dir, 'close.pids');
    const prog = script('close.sh', `echo $$ >> "${pids}"\nsleep 3600 &\necho $! >> "${pids}"\nwait`);
    const target = createCommandTarget('hook', commandTargetSchema.parse({ TYPE: 'command', COMMAND: [prog], TIMEOUT: 3600 }), pino({ level: 'silent' }));
    const delivered = target.deliver(scanItem({ folder: '/tv/A' }));
    await waitFor(() => pidsIn(pids).length === 2 || undefined, 20_000, 'the program and its child running');
    target.close!();
    const result = await delivered;
    assert.ok(result.outcome === 'retry' && /scanrelay stopped while .* ran/.test(result.error), JSON.stringify(result));
    await waitFor(() => pidsIn(pids).every((p) => !processAlive(p)) || undefined, 20_000, 'the program and its child gone');
  });

  test('a program and its children die with the process that started it, even when that process is killed with SIGKILL', async () => {
    const pids = join(dir, 'orphan.pids');
    const prog = script('orphan.sh', `echo $$ >> "${pids}"\nsleep 3600 &\necho $! >> "${pids}"\nwait`);
    const runner = join(dir, 'runner.ts');
    // The marker is written once runArgv has returned: the program is spawned and its group told to the watchdog
    // (both in that call), as a relay has done by the time it goes on with anything else.
    const started = join(dir, 'orphan.started');
    writeFileSync(
      runner,
      `import { writeFileSync } from 'node:fs';\nimport { runArgv } from ${JSON.stringify(join(ROOT, 'src/targets/process.ts'))};\nvoid runArgv([${JSON.stringify(prog)}], process.env, 3_600_000, () => {});\nwriteFileSync(${JSON.stringify(started)}, '');\nsetInterval(() => {}, 60_000);\n`,
    );
    const parent = spawn(process.execPath, ['--import', 'tsx', runner], { cwd: ROOT, stdio: 'ignore' });
    try {
      await waitFor(() => (existsSync(started) && pidsIn(pids).length === 2) || undefined, 60_000, 'the program and its child running');
      assert.ok(pidsIn(pids).every(processAlive));
      parent.kill('SIGKILL');
      await waitFor(() => pidsIn(pids).every((p) => !processAlive(p)) || undefined, 20_000, 'the program and its child gone with their parent');
    } finally {
      parent.kill('SIGKILL');
      for (const p of pidsIn(pids)) if (processAlive(p)) process.kill(p, 'SIGKILL');
    }
  });
});
