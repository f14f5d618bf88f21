import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, mock, test } from 'node:test';
import { pino } from 'pino';
import { notificationSchema } from '../../src/config/notifications.ts';
import type { NotifyEvent } from '../../src/core/events.ts';
import { givenUp, firstRefusals, retryWait } from '../../src/notify/give-up.ts';
import { NotifySender } from '../../src/notify/sender.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { JsonReceiverFake, type NotifyCall } from '../fakes/notify-services.ts';

// Issue 52, item 3: with GIVE_UP_AFTER 60 and a sink answering 503 for 180 s, events created at 150 s were dropped
// with no line 38 s after the sink came back: the back-off had grown to 64 s, the events were judged against
// GIVE_UP_AFTER before they were ever tried, and a flag silenced the give-up line. Here the clock is node's mocked
// Date (the sender's and the sink's), moved by the test; the sender's waits are real and a few ms long.

/** A json receiver that answers 503 while the (mocked) clock is before `upAt`. */
class ClockedSink extends JsonReceiverFake {
  upAt = 0;
  protected override answer(req: IncomingMessage, path: string, raw: string, json: unknown) {
    return Date.now() < this.upAt ? { status: 503, body: 'Service Unavailable' } : super.answer(req, path, raw, json);
  }
}

const ev = (name: string, at: number): NotifyEvent => ({ kind: 'scanned', at, target: 'plex', folder: `/m/${name}` });
const folders = (calls: NotifyCall[], status: number) => calls.filter((c) => c.status === status).flatMap((c) => c.json.events.map((e: NotifyEvent) => e.folder as string));

/** Waits (real time, bounded) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), `timed out waiting for ${what}`);
}

/** The sink's calls come to hold `check`, within 10 s of real time. */
async function called(sink: ClockedSink, check: (c: NotifyCall[]) => boolean, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 10_000)));
  try {
    await Promise.race([sink.until(check), late]);
  } finally {
    clearTimeout(timer);
  }
}

afterEach(() => mock.timers.reset());

describe('GIVE_UP_AFTER', () => {
  test('counts from the first refusal: what came during an outage is sent once the sink is back, and each give-up is logged', async () => {
    const T = Date.now();
    mock.timers.enable({ apis: ['Date'], now: T });
    const sink = await new ClockedSink().start();
    sink.upAt = T + 180_000;
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
    const gaveUp = () => lines.filter((l) => /gave up|given up/.test(l)).map((l) => JSON.parse(l) as { events: number; msg: string });
    const store = new QueueStore(':memory:');
    const dest = notificationSchema.parse({ TYPE: 'json', URL: sink.url, BATCH_SECONDS: 0, GIVE_UP_AFTER: 60 });
    const sender = new NotifySender(store.outbox, { sink: dest }, log, { relayId: 'local', pollMs: 10, retryBaseMs: 10, maxRetryMs: 40 });
    const at = async (s: number) => {
      mock.timers.setTime(T + s * 1000);
      await sender.looked(); // every look begun before the clock moved has ended
    };
    sender.start();
    try {
      await sender.ready();
      store.outbox.append(['early1', 'early2', 'early3'].map((n) => ev(n, T)));
      await called(sink, (c) => folders(c, 503).includes('/m/early1'), '/m/early1 answered 503');
      await at(61);
      await until(() => gaveUp().length === 1, 'the early events given up');
      assert.equal(gaveUp()[0]!.events, 3);

      await at(150);
      store.outbox.append([ev('late1', T + 150_000), ev('late2', T + 150_000)]);
      await called(sink, (c) => folders(c, 503).includes('/m/late1'), '/m/late1 answered 503');
      // The sink is back at 180 s; the relay's next try comes 35 s later: it sends them (refused only 65 s after they happened).
      await at(215);
      await called(sink, (c) => folders(c, 200).includes('/m/late1'), '/m/late1 answered 200');
      assert.deepEqual(folders(sink.calls, 200), ['/m/late1', '/m/late2']);
      assert.equal(gaveUp().length, 1);

      // A second outage: A is refused from 300 s, B from 330 s; each is given up 60 s after its own first refusal, each with its line.
      sink.upAt = T + 400_000;
      await at(300);
      store.outbox.append([ev('A', T + 300_000)]);
      await called(sink, (c) => folders(c, 503).includes('/m/A'), '/m/A answered 503');
      await at(330);
      store.outbox.append([ev('B', T + 330_000)]);
      await called(sink, (c) => folders(c, 503).includes('/m/B'), '/m/B answered 503');
      await at(361);
      await until(() => gaveUp().length === 2, 'A given up');
      assert.equal(gaveUp()[1]!.events, 1);
      await sender.looked();
      assert.equal(gaveUp().length, 2, 'B was first refused 31 s ago: still tried');
      await at(391);
      await until(() => gaveUp().length === 3, 'B given up');
      await at(401);
      store.outbox.append([ev('C', T + 401_000)]);
      await called(sink, (c) => folders(c, 200).includes('/m/C'), '/m/C answered 200');
      assert.deepEqual(folders(sink.calls, 200), ['/m/late1', '/m/late2', '/m/C'], 'what was given up is not sent afterwards');
      assert.equal(sender.status()[0]!.givenUp, 5);
    } finally {
      await sender.stop();
      await sink.stop();
    }
  });
});

describe('give-up rules', () => {
  test('an event is given up once refused for GIVE_UP_AFTER since its own first refusal; only a prefix goes', () => {
    let refused = firstRefusals(new Map(), [1, 2], 1000);
    refused = firstRefusals(refused, [1, 2, 3], 5000);
    assert.deepEqual([...refused], [[1, 1000], [2, 1000], [3, 5000]]);
    assert.equal(givenUp([1, 2, 3], refused, 60_999, 60_000), 0, 'not yet');
    assert.equal(givenUp([1, 2, 3], refused, 61_000, 60_000), 2);
    assert.equal(givenUp([1, 2, 3], refused, 65_000, 60_000), 3);
    assert.deepEqual([...firstRefusals(refused, [3, 4], 9000)], [[3, 5000], [4, 9000]], 'events no longer in the batch are forgotten');
  });

  test('the retry wait doubles up to the cap and a quarter of GIVE_UP_AFTER, so the first try after an outage comes soon', () => {
    assert.deepEqual([1, 2, 3, 4].map((f) => retryWait(f, 1000, 60_000, 6 * 3600_000)), [1000, 2000, 4000, 8000]);
    assert.equal(retryWait(30, 1000, 60_000, 6 * 3600_000), 60_000);
    assert.equal(retryWait(30, 1000, 60_000, 60_000), 15_000);
  });
});
