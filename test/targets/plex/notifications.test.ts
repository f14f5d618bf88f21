// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseSseEvent, parseWebsocketFrame } from '../../../src/targets/plex/notifications/frames.ts';
import { SseReader } from '../../../src/targets/plex/notifications/sse.ts';
import { StartDelays } from '../../../src/targets/plex/start-delay.ts';

// The shapes of docs/protocols.md ("Plex's notification stream"): python-plexapi's AlertListener reads
// json['NotificationContainer'] from each websocket message (plexapi/alert.py, _onMessage); Tautulli reads
// info.get('NotificationContainer') and its `type` (plexpy/web_socket.py, process()).
const activity = (event: string, extra: Record<string, unknown> = {}) => ({
  event,
  uuid: 'a1b2',
  Activity: { uuid: 'a1b2', type: 'library.update.section', cancellable: false, userID: 1, title: 'Scanning Movies', subtitle: 'Heat (1995)', progress: 0, Context: { librarySectionID: '1' }, ...extra },
});

describe('websocket messages', () => {
  test('a NotificationContainer of type activity with an ActivityNotification array gives one event per entry', () => {
    const text = JSON.stringify({ NotificationContainer: { type: 'activity', size: 2, ActivityNotification: [activity('started'), activity('ended', { progress: 100, Context: { librarySectionID: 2 } })] } });
    const { events, refused } = parseWebsocketFrame(text);
    assert.deepEqual(refused, []);
    assert.deepEqual(events, [
      { event: 'started', uuid: 'a1b2', type: 'library.update.section', sectionId: '1', title: 'Scanning Movies', progress: 0 },
      { event: 'ended', uuid: 'a1b2', type: 'library.update.section', sectionId: '2', title: 'Scanning Movies', progress: 100 },
    ]);
  });

  test('other notification types (playing, timeline, status) are skipped without complaint', () => {
    for (const type of ['playing', 'timeline', 'status', 'update.statechange']) {
      assert.deepEqual(parseWebsocketFrame(JSON.stringify({ NotificationContainer: { type, size: 1, TimelineEntry: [{ state: 5 }] } })), { events: [], refused: [] });
    }
  });

  test('what it does not understand is refused with a reason, never turned into an event', () => {
    const cases = [
      'not json',
      JSON.stringify({ ActivityNotification: [activity('ended')] }),
      JSON.stringify({ NotificationContainer: { type: 'activity', ActivityNotification: activity('ended') } }),
      JSON.stringify({ NotificationContainer: { type: 'activity', ActivityNotification: [activity('finished')] } }),
      JSON.stringify({ NotificationContainer: { type: 'activity', ActivityNotification: [{ event: 'ended', uuid: 'x' }] } }),
      JSON.stringify({ NotificationContainer: { type: 'activity', ActivityNotification: [{ ...activity('ended'), Activity: { type: 'library.update.section' } }] } }),
    ];
    for (const text of cases) {
      const parsed = parseWebsocketFrame(text);
      assert.deepEqual(parsed.events, [], text);
      assert.equal(parsed.refused.length, 1, text);
    }
  });

  test('one bad entry does not hide the good ones', () => {
    const parsed = parseWebsocketFrame(JSON.stringify({ NotificationContainer: { type: 'activity', ActivityNotification: [activity('finished'), activity('ended')] } }));
    assert.equal(parsed.events.length, 1);
    assert.equal(parsed.events[0]!.event, 'ended');
    assert.match(parsed.refused[0]!, /event/);
  });
});

describe('Server-Sent Events', () => {
  test('`event: activity` with data {"ActivityNotification": {...}}, one object, gives one event', () => {
    const parsed = parseSseEvent('activity', JSON.stringify({ ActivityNotification: activity('updated', { progress: 42 }) }));
    assert.deepEqual(parsed, { events: [{ event: 'updated', uuid: 'a1b2', type: 'library.update.section', sectionId: '1', title: 'Scanning Movies', progress: 42 }], refused: [] });
  });

  test('ping and other events are skipped; an activity whose data is not one notification object is refused', () => {
    assert.deepEqual(parseSseEvent('ping', '{}'), { events: [], refused: [] });
    assert.deepEqual(parseSseEvent('timeline', '{}'), { events: [], refused: [] });
    for (const data of ['', 'oops', JSON.stringify({ ActivityNotification: [activity('ended')] }), JSON.stringify({ NotificationContainer: { type: 'activity', ActivityNotification: [activity('ended')] } }), JSON.stringify({ ActivityNotification: activity('done') })]) {
      const parsed = parseSseEvent('activity', data);
      assert.deepEqual(parsed.events, [], data);
      assert.equal(parsed.refused.length, 1, data);
    }
  });

  test('the framing: chunks split anywhere, CRLF/CR/LF, comments, multi-line data', () => {
    const got: Array<[string, string]> = [];
    const reader = new SseReader((name, data) => got.push([name, data]));
    const stream = ': hello\r\nevent: ping\r\ndata: {}\r\n\r\nevent: activity\ndata: {"a":\ndata: 1}\n\rdata: plain\r\r\n';
    for (const ch of stream) reader.push(ch);
    assert.deepEqual(got, [
      ['ping', '{}'],
      ['activity', '{"a":\n1}'],
      ['message', 'plain'],
    ]);
  });
});

describe('the wait for a scan that never shows', () => {
  test('before any start delay is seen: the initial wait; then a few times the slowest recent delay, within bounds', () => {
    const d = new StartDelays({ initialMs: 2000, factor: 3, minMs: 250, maxMs: 10_000, keep: 3 });
    assert.equal(d.waitMs(), 2000);
    d.add(60);
    assert.equal(d.waitMs(), 250, 'never below the floor');
    d.add(400);
    assert.equal(d.waitMs(), 1200);
    d.add(9000);
    assert.equal(d.waitMs(), 10_000, 'never above the ceiling');
    d.add(50);
    d.add(50);
    d.add(100);
    assert.equal(d.waitMs(), 300, 'only recent delays count');
  });
});
