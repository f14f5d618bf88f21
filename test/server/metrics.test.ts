import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Relay } from '../../src/server/run.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, postJson, waitFor } from '../helpers/relay.ts';
import { plexAndRelayForSuite, startRelayAgainst } from '../helpers/suite.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format, sample lines only: `name{a="b",c="d"} value`. */
function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

async function start(plex: FakePlex, extra: Record<string, unknown> = {}): Promise<Relay> {
  // The fake Plex lists no item for a scanned file; analyze would wait for one with Plex's turn held.
  return startRelayAgainst(plex, { SERVER_PASS: 'metrics-secret', SERVER_IGNORE_LIST: ['/sample/'], PLEX_ANALYZE_TYPE: 'off', ...extra }, { scheduler: { retryBaseMs: 100, retryMaxMs: 300 } });
}

describe('GET /metrics', () => {
  let plex: FakePlex;
  let relay: Relay;
  let origin: string;
  const scrape = async () => {
    const res = await fetch(`${origin}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    return parseMetrics(await res.text());
  };

  plexAndRelayForSuite(start, (p, r) => {
    plex = p;
    relay = r;
    origin = new URL(r.url).origin;
  });

  test('counts requests by source and outcome, queue depth, deliveries by target and outcome, and latency', async () => {
    const api = `${origin}/api/metrics-secret`;
    const firstRequestAt = Date.now();
    assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/A (2000)/a.mkv' })).body.status, 'queued');
    assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/A (2000)/b.mkv' })).body.status, 'merged');
    assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/sample/x.mkv' })).body.status, 'ignored');
    assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: 'relative/x.mkv' })).status, 400);
    assert.equal((await postForm(relay.url, { eventType: 'Test' })).status, 200);
    assert.equal((await postJson(`${api}/scan`, { path: '/tv/Dark/Season 01/' })).body.status, 'queued');

    let m = await scrape();
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'Manual', outcome: 'queued' }), 1);
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'Manual', outcome: 'merged' }), 1);
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'Manual', outcome: 'ignored' }), 1);
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'Manual', outcome: 'rejected' }), 1);
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'Unknown', outcome: 'test' }), 1);
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'API', outcome: 'queued' }), 1);
    assert.equal(value(m, 'scanrelay_queue_depth', { state: 'pending' }), 2);
    assert.equal(value(m, 'scanrelay_scans_total'), undefined, 'nothing delivered yet');

    // Release both scans now, once they are at least AGE old: two deliveries to Plex, both done.
    const AGE_MS = 400;
    await new Promise((r) => setTimeout(r, AGE_MS));
    const queue = (await (await fetch(`${api}/queue`)).json()) as { items: Array<{ id: number }> };
    for (const { id } of queue.items) assert.equal((await fetch(`${api}/queue/${id}/retry`, { method: 'POST' })).status, 200);
    await waitFor(() => plex.refreshes().length >= 2, 15_000, 'two refreshes');
    m = (await waitFor(async () => {
      const s = await scrape();
      return value(s, 'scanrelay_scans_total', { target: 'plex', outcome: 'done' }) === 2 ? s : undefined;
    }, 15_000, 'two done deliveries counted'))!;
    assert.equal(value(m, 'scanrelay_request_to_scan_seconds_count', { target: 'plex' }), 2);
    // Each scan waited from its request to its delivery: at least AGE, at most the whole span, in seconds.
    const sum = value(m, 'scanrelay_request_to_scan_seconds_sum', { target: 'plex' })!;
    const span = (Date.now() - firstRequestAt) / 1000;
    assert.ok(sum >= (2 * AGE_MS) / 1000, `sum ${sum} s below 2 x ${AGE_MS} ms`);
    assert.ok(sum <= 2 * span, `sum ${sum} s above 2 x ${span} s`);
    assert.equal(value(m, 'scanrelay_request_to_scan_seconds_bucket', { target: 'plex', le: '+Inf' }), 2);
    assert.equal(value(m, 'scanrelay_queue_depth', { state: 'pending' }), 0);
    assert.equal(value(m, 'scanrelay_queue_depth', { state: 'active' }), 0);

    // Plex answering 503: the delivery is counted as a retry, then done once Plex is back.
    await plex.setMode('error503');
    const b = await postJson(`${api}/scan`, { path: '/movies/B (2001)/' });
    await fetch(`${api}/queue/${b.body.scans[0].id}/retry`, { method: 'POST' });
    await waitFor(async () => (value(await scrape(), 'scanrelay_scans_total', { target: 'plex', outcome: 'retry' }) ?? 0) >= 1, 15_000, 'a retry counted');
    await plex.setMode('up');
    m = (await waitFor(async () => {
      const s = await scrape();
      return value(s, 'scanrelay_scans_total', { target: 'plex', outcome: 'done' }) === 3 ? s : undefined;
    }, 15_000, 'third done delivery'))!;
    assert.equal(value(m, 'scanrelay_requests_total', { source: 'API', outcome: 'queued' }), 2);
  });

  test('a rejected payload is counted under its manager when its shape names one, else under "Unknown"', async () => {
    const before = await scrape();
    const count = (m: Sample[], source: string) => value(m, 'scanrelay_requests_total', { source, outcome: 'rejected' }) ?? 0;
    // A Sonarr webhook (it carries "series") whose episodeFile has no path: Sonarr's, and malformed.
    const sonarr = await postJson(relay.url, { eventType: 'Download', series: { title: 'Dark' }, episodeFile: { id: 1 } });
    assert.equal(sonarr.status, 400, sonarr.text);
    // Nothing any trigger knows.
    assert.equal((await postJson(relay.url, { hello: 'world' })).status, 400);
    const after = await scrape();
    assert.equal(count(after, 'Sonarr') - count(before, 'Sonarr'), 1);
    assert.equal(count(after, 'Unknown') - count(before, 'Unknown'), 1);
    assert.equal(value(after, 'scanrelay_requests_total', { source: 'unknown', outcome: 'rejected' }), undefined, 'one spelling: "Unknown"');
  });

  test('drive counters are exported for the drive monitor, and process metrics are there', async () => {
    relay.metrics.drivePoll('ok');
    relay.metrics.drivePoll('ok');
    relay.metrics.drivePoll('error');
    relay.metrics.driveApiError('rate_limit');
    const m = await scrape();
    assert.equal(value(m, 'scanrelay_drive_polls_total', { outcome: 'ok' }), 2);
    assert.equal(value(m, 'scanrelay_drive_polls_total', { outcome: 'error' }), 1);
    assert.equal(value(m, 'scanrelay_drive_api_errors_total', { kind: 'rate_limit' }), 1);
    assert.ok(value(m, 'scanrelay_process_cpu_user_seconds_total')! > 0);
    assert.ok(value(m, 'scanrelay_nodejs_heap_size_used_bytes')! > 0);
  });
});

describe('SERVER_METRICS false', () => {
  test('turns /metrics off (404) and nothing else', async () => {
    const plex = await new FakePlex().start();
    const relay = await start(plex, { SERVER_METRICS: false });
    try {
      const origin = new URL(relay.url).origin;
      const res = await fetch(`${origin}/metrics`, { headers: { accept: 'application/json' } });
      assert.equal(res.status, 404);
      assert.deepEqual(await res.json(), { error: 'not found' });
      assert.equal((await fetch(`${origin}/healthz`)).status, 200);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });

  test('with SERVER_AUTH_USER/PASS set, /metrics asks for them', async () => {
    const plex = await new FakePlex().start();
    const relay = await start(plex, { SERVER_AUTH_USER: 'prom', SERVER_AUTH_PASS: 'scrape' });
    try {
      const origin = new URL(relay.url).origin;
      assert.equal((await fetch(`${origin}/metrics`)).status, 401);
      const ok = await fetch(`${origin}/metrics`, { headers: { authorization: `Basic ${Buffer.from('prom:scrape').toString('base64')}` } });
      assert.equal(ok.status, 200);
      assert.match(await ok.text(), /scanrelay_queue_depth/);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });
});
