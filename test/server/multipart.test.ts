import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { BODY_LIMIT } from '../../src/server/app.ts';
import { buildTestApp, SECRET, type TestApp } from '../helpers/app.ts';
import { spawnRelay, tempDir, type RelayProcess } from '../helpers/relay.ts';

const run = promisify(execFile);

/** A multipart body as a browser or curl -F builds it (Node's own FormData encoder). */
async function multipart(fields: Record<string, string | Blob>): Promise<{ body: Buffer; type: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string') form.append(k, v);
    else form.append(k, v, 'upload.bin');
  }
  const res = new Response(form);
  return { body: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type')! };
}

// plex_autoscan read scan requests with Flask's request.form, which parses multipart/form-data too (scan.py:316-318).
describe('multipart/form-data scan requests (in process)', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  const post = async (fields: Record<string, string | Blob>, url = `/${SECRET}`) => {
    const { body, type } = await multipart(fields);
    return t.app.inject({ method: 'POST', url, payload: body, headers: { 'content-type': type, accept: 'application/json' } });
  };

  test('eventType=Manual with filepath is queued, as a urlencoded form is', async () => {
    const res = await post({ eventType: 'Manual', filepath: '/data/Movies/Heat (1995)/Heat.mkv' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'queued');
    assert.equal(t.store.countOpen(), 1);
    assert.equal((await post({ eventType: 'Test' })).statusCode, 200);
  });

  test('the cmd API reads multipart too (scan.py:249 request.form)', async () => {
    const res = await post({ cmd: 'queue_count' }, `/api/${SECRET}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().queue_count, 1);
  });

  test('a file part is refused with 400 naming the mistake, and nothing is queued', async () => {
    const res = await post({ eventType: 'Manual', filepath: new Blob(['not a path']) });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().error, /file parts are not accepted: send filepath as a text field/);
    assert.equal(t.store.countOpen(), 1);
  });

  test('a malformed multipart body is a 400 naming it, never a 500', async () => {
    for (const payload of ['garbage', '\u0000', '--x\r\nno header end']) {
      const res = await t.app.inject({ method: 'POST', url: `/${SECRET}`, payload, headers: { 'content-type': 'multipart/form-data; boundary=x', accept: 'application/json' } });
      assert.equal(res.statusCode, 400, payload);
      assert.match(res.json().error, /malformed multipart\/form-data body/);
    }
  });

  test('the body limit is the same as for other bodies: larger is 413', async () => {
    const res = await post({ eventType: 'Manual', filepath: `/data/${'x'.repeat(BODY_LIMIT)}` });
    assert.equal(res.statusCode, 413);
    assert.match(res.json().error, /larger than 1048576 bytes/);
    const wrongSecret = await post({ eventType: 'Test' }, '/wrong');
    assert.equal(wrongSecret.statusCode, 404);
    assert.equal(t.store.countOpen(), 1);
  });
});

describe('multipart/form-data with real curl -F against a started relay', () => {
  let relay: RelayProcess;
  before(async () => {
    relay = await spawnRelay({ config: { SERVER_SCAN_DELAY: 600, SERVER_ALLOW_MANUAL_SCAN: true } });
  });
  after(async () => relay?.kill());

  const curl = async (...args: string[]) => {
    const { stdout } = await run('curl', ['-sS', '-o', '-', '-w', '\\n%{http_code}', '-H', 'Accept: application/json', ...args, relay.url]);
    const nl = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(nl + 1)), body: stdout.slice(0, nl) };
  };

  test('curl -F eventType=Manual -F filepath=... is queued', async () => {
    const res = await curl('-F', 'eventType=Manual', '-F', 'filepath=/data/TV/Dark/Season 01/Dark.S01E01.mkv');
    assert.equal(res.status, 200, res.body);
    assert.equal(JSON.parse(res.body).status, 'queued');
    const logged = await relay.waitForLog((e) => e.msg === 'scan request');
    assert.deepEqual(logged.received, ['/data/TV/Dark/Season 01/Dark.S01E01.mkv']);
  });

  test('curl -F filepath=@file (an upload) gets 400 with the reason', async () => {
    const file = join(tempDir(), 'x.txt');
    writeFileSync(file, '/data/TV/Dark');
    const res = await curl('-F', 'eventType=Manual', '-F', `filepath=@${file}`);
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).error, /file parts are not accepted/);
  });

  test('a chunked multipart body over the limit gets 413', async () => {
    const big = join(tempDir(), 'big.txt');
    writeFileSync(big, `/data/${'y'.repeat(BODY_LIMIT + 10)}`);
    // filepath=<file reads the file's content as a text field; chunked: no Content-Length to check first.
    const res = await curl('-H', 'Transfer-Encoding: chunked', '-F', 'eventType=Manual', '-F', `filepath=<${big}`);
    assert.equal(res.status, 413, res.body);
  });
});
