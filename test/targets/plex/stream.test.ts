import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { PlexNotificationStream, type StreamMessage, type Transport } from '../../../src/targets/plex/notifications/stream.ts';
import { FakePlex } from '../../fakes/plex.ts';
import { recordingLogger } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';
import { plexLikeCertificate } from '../../helpers/tls.ts';

function open(plex: FakePlex, transports: Transport[] = ['websocket', 'sse'], extra: { backoffMs?: number; keepaliveMs?: number } = {}) {
  const { log, lines } = recordingLogger();
  const stream = new PlexNotificationStream({ baseUrl: plex.url, token: plex.token, log, transports, backoffMs: extra.backoffMs ?? 100, backoffMaxMs: 400, keepaliveMs: extra.keepaliveMs ?? 30_000 });
  const messages: StreamMessage[] = [];
  stream.subscribe((m) => messages.push(m));
  stream.start();
  const events = () => messages.flatMap((m) => (m.kind === 'activity' ? [m.event] : []));
  return { stream, messages, events, lines };
}

describe('Plex notification stream', () => {
  let plex: FakePlex;
  beforeEach(async () => {
    plex = await new FakePlex().start();
  });
  afterEach(async () => plex.stop());

  test('websocket: a scan shows as typed started / updated / ended events; the token goes as a header', async () => {
    const s = open(plex);
    try {
      await waitFor(() => s.stream.openTransport === 'websocket', 5000, 'websocket open');
      plex.scanActivityMs = 60;
      await fetch(`${plex.url}/library/sections/2/refresh?path=${encodeURIComponent('/data/TV/Show')}`, { headers: { 'X-Plex-Token': plex.token } });
      await waitFor(() => s.events().some((e) => e.event === 'ended'), 5000, 'ended');
      assert.deepEqual(s.events().map((e) => [e.event, e.type, e.sectionId]), [
        ['started', 'library.update.section', '2'],
        ['updated', 'library.update.section', '2'],
        ['ended', 'library.update.section', '2'],
      ]);
      const upgrade = plex.calls.filter((c) => c.path === '/:/websockets/notifications').at(-1)!;
      assert.equal(upgrade.tokenIn, 'header');
      assert.equal(upgrade.query.filters, 'activity');
      assert.ok(s.lines.some((l) => l.msg.includes('notification stream connected (websocket)')));
    } finally {
      plex.scanActivityMs = 0;
      s.stream.close();
    }
  });

  test('a refused websocket upgrade (a proxy, an old server) falls back to Server-Sent Events', async () => {
    plex.websocketAvailable = false;
    const s = open(plex);
    try {
      await waitFor(() => s.stream.openTransport === 'sse', 5000, 'SSE open');
      await fetch(`${plex.url}/library/sections/1/refresh?path=${encodeURIComponent('/data/Movies/Heat (1995)')}`, { headers: { 'X-Plex-Token': plex.token } });
      await waitFor(() => s.events().some((e) => e.event === 'ended'), 5000, 'ended');
      assert.deepEqual(s.events().map((e) => [e.event, e.sectionId]), [['started', '1'], ['ended', '1']]);
      assert.equal(plex.calls.filter((c) => c.path === '/:/eventsource/notifications').at(-1)!.tokenIn, 'header');
    } finally {
      plex.websocketAvailable = true;
      s.stream.close();
    }
  });

  test('a Plex that never streams: down, retried with backoff, one log line that says polling is used', async () => {
    plex.streaming = false;
    const s = open(plex);
    try {
      await waitFor(() => s.messages.filter((m) => m.kind === 'state' && m.state.kind === 'down').length >= 3, 10_000, 'three failed tries');
      const downs = s.messages.flatMap((m) => (m.kind === 'state' && m.state.kind === 'down' ? [m.state] : []));
      assert.match(downs[0]!.error, /websocket: HTTP 404.*sse: HTTP 404/);
      assert.deepEqual(downs.slice(0, 3).map((d) => d.attempt), [1, 2, 3]);
      const notAvailable = s.lines.filter((l) => l.msg.includes('not available: polling /activities meanwhile'));
      assert.equal(notAvailable.length, 1, 'said once, not at every retry');
      assert.equal(notAvailable[0]!.level, 30);
    } finally {
      plex.streaming = true;
      s.stream.close();
    }
  });

  test('a dropped stream is reconnected within its backoff, and says so', async () => {
    const s = open(plex, ['websocket', 'sse'], { backoffMs: 200 });
    try {
      await waitFor(() => s.stream.openTransport === 'websocket', 5000, 'open');
      const before = plex.streamConnections;
      plex.dropStreams();
      await waitFor(() => s.stream.state.kind === 'down', 5000, 'down');
      const down = s.stream.state;
      assert.ok(down.kind === 'down' && down.attempt === 1, 'the first retry after a drop uses the first backoff step');
      await waitFor(() => s.stream.openTransport === 'websocket', 5000, 'back');
      assert.equal(plex.streamConnections, before + 1);
      assert.ok(s.lines.some((l) => l.level === 40 && l.msg.includes('stream lost: polling /activities until it is back')));
    } finally {
      s.stream.close();
    }
  });

  test('SSE: silence longer than the keep-alive (Plex pings every 10 s) counts as a dead connection', async () => {
    plex.websocketAvailable = false;
    plex.ssePingMs = 60_000;
    const s = open(plex, ['sse'], { keepaliveMs: 300 });
    try {
      await waitFor(() => s.stream.state.kind === 'down', 5000, 'watchdog');
      const down = s.stream.state;
      assert.ok(down.kind === 'down' && /nothing received/.test(down.error), JSON.stringify(down));
    } finally {
      plex.websocketAvailable = true;
      plex.ssePingMs = 10_000;
      s.stream.close();
    }
  });

  test('a message it does not understand is passed on as refused and logged, never as an event', async () => {
    const s = open(plex);
    try {
      await waitFor(() => s.stream.openTransport === 'websocket', 5000, 'open');
      plex.sendRaw(JSON.stringify({ NotificationContainer: { type: 'activity', size: 1, ActivityNotification: [{ event: 'finished', uuid: 'u', Activity: { uuid: 'u', type: 'library.update.section' } }] } }));
      await waitFor(() => s.messages.some((m) => m.kind === 'refused'), 5000, 'refused');
      assert.deepEqual(s.events(), []);
      assert.ok(s.lines.some((l) => l.level === 40 && l.msg.includes('not understood') && /event/.test(l.reason)));
    } finally {
      s.stream.close();
    }
  });

  test('a wrong token: both transports answer 401 and the stream stays down', async () => {
    const { log } = recordingLogger();
    const stream = new PlexNotificationStream({ baseUrl: plex.url, token: 'wrong', log, backoffMs: 50, backoffMaxMs: 50 });
    const states: string[] = [];
    stream.subscribe((m) => m.kind === 'state' && m.state.kind === 'down' && states.push(m.state.error));
    stream.start();
    try {
      await waitFor(() => states.length >= 1, 5000, 'down');
      assert.match(states[0]!, /websocket: HTTP 401.*sse: HTTP 401/);
    } finally {
      stream.close();
    }
  });
});

describe('Plex notification stream over https', () => {
  let plex: FakePlex;
  beforeEach(async () => {
    plex = await new FakePlex().useTls(plexLikeCertificate()).start();
  });
  afterEach(async () => plex?.stop());

  test('PLEX_VERIFY_SSL: a certificate that fails the check keeps the stream down; with the check off, wss and SSE connect', async () => {
    const { log } = recordingLogger();
    const checked = new PlexNotificationStream({ baseUrl: plex.url, token: plex.token, log, backoffMs: 50, backoffMaxMs: 50 });
    const errors: string[] = [];
    checked.subscribe((m) => m.kind === 'state' && m.state.kind === 'down' && errors.push(m.state.error));
    checked.start();
    try {
      await waitFor(() => errors.length >= 1, 5000, 'refused');
      assert.match(errors[0]!, /websocket: .*certificate.*sse: .*certificate/i);
    } finally {
      checked.close();
    }
    for (const transports of [['websocket'], ['sse']] as const) {
      const open = new PlexNotificationStream({ baseUrl: plex.url, token: plex.token, log, verifyTls: false, transports: [...transports] });
      open.start();
      try {
        await waitFor(() => open.openTransport === transports[0], 5000, `${transports[0]} over TLS`);
      } finally {
        open.close();
      }
    }
  });
});
