// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatQueue, queueLine } from '../../src/cli/queue.ts';
import { QueueIntake } from '../../src/queue/door.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { scanView } from '../../src/server/dashboard/data.ts';
import { renderQueue } from '../../src/server/dashboard/render.ts';
import { tempDir } from '../helpers/relay.ts';

// Issue 39 items 5 and 6: `scanrelay queue` and the dashboard say what a scan asks of its targets (a refresh or
// an analyze, not a plain scan) and, while it waits for its delay and has no deliveries yet, which targets it goes to.
test('a pending scan names the targets it was routed to and the action it asks for; a plain scan to every target says neither', async () => {
  const store = new QueueStore(join(tempDir(), 'queue.db'));
  try {
    const intake = new QueueIntake(store, [], () => ({ delayMs: 60_000, maxMs: 180_000 }));
    await intake.enqueue([
      { folder: '/data/Movies/Heat (1995)', files: ['/data/Movies/Heat (1995)/Heat (1995).mkv'], source: 'Manual', targets: ['plex4k', 'books'], action: 'refresh' },
      { folder: '/data/TV/Dark/Season 1', source: 'Sonarr' },
    ]);
    const entries = store.view.listOpen();
    const text = formatQueue('queue.db', store.view.counts(), entries, Date.now());
    const block = (folder: string) => text.split(/\n(?= {2}\/)/).find((b) => b.startsWith(`  ${folder}\n`))!;
    assert.match(block('/data/Movies/Heat (1995)'), /\n {4}asked: refresh the metadata of the items at its files\n {4}for books, plex4k$/);
    assert.doesNotMatch(block('/data/TV/Dark/Season 1'), /asked:|\n {4}for /);

    const lines = Object.fromEntries(entries.map((e) => [e.folder, queueLine(e)]));
    assert.equal(lines['/data/Movies/Heat (1995)']!.action, 'refresh');
    assert.deepEqual(lines['/data/Movies/Heat (1995)']!.targets, ['books', 'plex4k']);
    assert.equal(lines['/data/TV/Dark/Season 1']!.action, 'scan');
    assert.equal(lines['/data/TV/Dark/Season 1']!.targets, null);

    const html = renderQueue(entries.map(scanView));
    assert.match(html, /<span data-route>for books, plex4k<\/span>/);
    assert.match(html, /data-action-asked="refresh">refresh the metadata of the items at its files</);
    assert.equal(html.match(/data-route/g)?.length, 1, 'a scan for every target names none');
  } finally {
    store.close();
  }
});
