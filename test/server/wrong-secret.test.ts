// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WrongSecretLog } from '../../src/server/wrong-secret.ts';
import { buildTestApp, SECRET } from '../helpers/app.ts';
import { recordingLogger } from '../helpers/plex-target.ts';

const wrongLines = (lines: Array<Record<string, any>>) => lines.filter((l) => /wrong secret URL/.test(l.msg));

test('a request at a wrong secret URL leaves one INFO line with the client and the route kind, never the secret it sent', async () => {
  const { log, lines } = recordingLogger();
  const t = await buildTestApp({}, { log });
  try {
    // A near-miss of the right secret: it must never reach the log.
    const nearMiss = `${SECRET.slice(0, -1)}X`;
    const res = await t.app.inject({ method: 'POST', url: `/${nearMiss}`, payload: { eventType: 'Manual', filepath: '/data/Movies/A/a.mkv' }, remoteAddress: '10.1.2.3' });
    assert.equal(res.statusCode, 404);
    const found = wrongLines(lines);
    assert.equal(found.length, 1, JSON.stringify(lines));
    const line = found[0]!;
    assert.equal(line.level, 30, 'INFO');
    assert.equal(line.requests, 1);
    assert.deepEqual(line.clients, ['10.1.2.3']);
    assert.deepEqual(line.routes, ['POST /<secret>']);
    assert.match(line.msg, /^1 request at a wrong secret URL \(answered 404\) from 10\.1\.2\.3, at POST \/<secret>/);
    const all = JSON.stringify(lines);
    assert.ok(!all.includes(nearMiss) && !all.includes(SECRET), 'neither the wrong secret nor the right one is logged');
    // The right secret logs no such line.
    await t.app.inject({ method: 'POST', url: `/${SECRET}`, payload: { eventType: 'Test' } });
    assert.equal(wrongLines(lines).length, 1);
  } finally {
    await t.close();
  }
});

test('wrong-secret requests are logged one line a minute at most, with their count, clients and route kinds', () => {
  const { log, lines } = recordingLogger();
  let now = 1_000_000;
  const wrong = new WrongSecretLog(log, 60_000, () => now);
  try {
    wrong.record('10.0.0.1', 'POST', '/:secret');
    assert.equal(wrongLines(lines).length, 1, 'the first one at once');
    for (let i = 0; i < 40; i++) wrong.record(i % 2 ? '10.0.0.2' : '10.0.0.3', i % 3 ? 'GET' : 'POST', i % 3 ? '/api/:secret' : '/:secret');
    assert.equal(wrongLines(lines).length, 1, 'the rest of the minute is counted, not logged');
    // The minute ends (what the timer calls then).
    now += 60_000;
    wrong.flush();
    const second = wrongLines(lines)[1]!;
    assert.equal(second.requests, 40);
    assert.deepEqual(second.clients.sort(), ['10.0.0.2', '10.0.0.3']);
    assert.deepEqual(second.routes.sort(), ['GET /api/<secret>', 'POST /<secret>']);
    assert.match(second.msg, /^40 requests at a wrong secret URL/);
    // Another request within the next minute waits for its end too.
    wrong.record('10.0.0.4', 'POST', '/:secret');
    assert.equal(wrongLines(lines).length, 2);
  } finally {
    wrong.close();
  }
});
