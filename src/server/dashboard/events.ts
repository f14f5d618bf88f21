import type { ServerResponse } from 'node:http';
import type { QueueBackend } from '../../queue/backend.ts';
import type { OutboxCursor } from '../../queue/outbox.ts';

/** How often the outbox and the open count are looked at while a page listens. */
const LOOK_MS = 250;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/**
 * The dashboard's server-sent event stream: the outbox's events as they are written (a scan confirmed, failed,
 * a hold), and `queue` when the number of open scans changes (a request queued). One look serves every open
 * page, and nothing is looked at while no page listens. Each page refreshes its parts on an event instead of
 * every 5 s; where the stream is cut (a proxy that buffers it), the page polls as before.
 */
export class EventFeed {
  private readonly clients = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  /** Where the stream is in the outbox: read as the notification sender reads it, so a late commit is not skipped. */
  private cursor: OutboxCursor | undefined;
  private lastOpen: number | undefined;
  private looking = false;

  constructor(private readonly store: Pick<QueueBackend, 'outbox' | 'countOpen'>) {}

  /** Takes over a response: the stream's headers, a `hello` event, then events until the page goes. */
  async attach(res: ServerResponse): Promise<void> {
    this.cursor ??= await this.store.outbox.head();
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      // nginx buffers a proxied answer unless told not to.
      'x-accel-buffering': 'no',
    });
    res.write(`retry: 3000\nevent: hello\ndata: {}\n\n`);
    this.clients.add(res);
    res.on('close', () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.pause();
    });
    this.timer ??= setInterval(() => void this.look(), LOOK_MS);
    this.keepalive ??= setInterval(() => this.broadcast(': keepalive\n\n'), KEEPALIVE_MS);
  }

  close(): void {
    this.pause();
    for (const c of this.clients) c.end();
    this.clients.clear();
  }

  private pause(): void {
    clearInterval(this.timer);
    clearInterval(this.keepalive);
    this.timer = this.keepalive = undefined;
    // The next page starts from what is new then, not from where the last one left.
    this.cursor = this.lastOpen = undefined;
  }

  private broadcast(text: string): void {
    for (const c of this.clients) c.write(text);
  }

  private async look(): Promise<void> {
    if (this.looking) return;
    this.looking = true;
    try {
      if (this.cursor !== undefined) {
        const read = await this.store.outbox.read(this.cursor, 200);
        for (const { event: e } of read.events) this.broadcast(`id: ${e.id}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`);
        this.cursor = read.end;
      }
      const open = await this.store.countOpen();
      if (open !== this.lastOpen) {
        if (this.lastOpen !== undefined) this.broadcast(`event: queue\ndata: ${JSON.stringify({ open })}\n\n`);
        this.lastOpen = open;
      }
    } catch {
      // The queue's database is away: the pages' next look (or their polling) tells them.
    } finally {
      this.looking = false;
    }
  }
}
