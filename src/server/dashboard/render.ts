import { sourceSchema } from '../../core/scan.ts';
import type { DriveStatus, NotificationHealth } from '../../core/status.ts';
import { versionText } from '../../core/version.ts';
import { escapeHtml as esc, NOSCRIPT_STYLE } from '../pages.ts';
import { actionText } from '../../queue/state.ts';
import type { HistoryQuery, ScanView, StatusView } from './data.ts';

/** Server-side HTML for the dashboard: the whole page, and the parts the script swaps in on refresh. */

function time(ms: number | null): string {
  if (ms === null) return '';
  const iso = new Date(ms).toISOString();
  return `<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)} UTC</time>`;
}

/** "3 s", "4 min 10 s", "2 h 5 min": durations as people read them. */
export function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const h = Math.floor(m / 60);
  return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`;
}

function relative(at: number, now: number): string {
  const d = at - now;
  return d <= 0 ? 'now' : `in ${duration(d)}`;
}

function driveText(d: DriveStatus, now: number): string {
  switch (d.state) {
    case 'off':
      return 'off';
    case 'needs-authorize':
      return 'needs authorize (run <code>scanrelay authorize</code>)';
    case 'standby':
      return `standby: polled by relay ${esc(d.polledBy ?? '?')}`;
    case 'polling':
      return `polling${d.polledBy ? ` (this relay, ${esc(d.polledBy)})` : ''}${d.lastPollAt ? `, last poll ${time(d.lastPollAt)}` : ''}${d.nextPollAt ? `, next ${relative(d.nextPollAt, now)}` : ''}`;
    case 'backoff':
      return `backing off${d.nextPollAt ? `, next try ${relative(d.nextPollAt, now)}` : ''}${d.error ? `: ${esc(d.error)}` : ''}`;
    case 'error':
      return `error${d.error ? `: ${esc(d.error)}` : ''}`;
  }
}

export function renderStatus(s: StatusView, now = Date.now()): string {
  const targets = s.targets.length
    ? s.targets
        .map(
          (t) =>
            `<li class="${t.ok ? 'ok' : 'bad'}" data-target="${esc(t.name)}"><span class="dot" aria-hidden="true"></span><strong>${esc(t.name)}</strong> ${
              t.ok ? 'reachable' : `unreachable<span class="why">${t.error ? `: ${esc(t.error)}` : ''}</span>`
            }${t.note ? `<span class="why" data-note>; ${esc(t.note)}</span>` : ''}</li>`,
        )
        .join('')
    : s.relays
      ? '<li class="off"><strong>targets</strong> none on this relay</li>'
      : '<li class="bad"><span class="dot" aria-hidden="true"></span><strong>targets</strong> none enabled</li>';
  const relays = s.relays ? relaysText(s.relays) : '';
  const notifications = (s.notifications ?? []).map((n) => notificationText(n, now)).join('');
  const driveClass = s.drive.state === 'polling' || s.drive.state === 'standby' ? 'ok' : s.drive.state === 'off' ? 'off' : 'bad';
  const held = s.held
    ? `<li class="bad" data-held="mount-guard"><span class="dot" aria-hidden="true"></span><strong>held: mount guard</strong> <span class="why">missing: ${s.held.missing.map(esc).join(', ')}</span></li>`
    : '';
  const disks = (s.fullDisks ?? [])
    .map(
      (d) =>
        `<li class="bad" data-disk-full="${esc(d.path)}"><span class="dot" aria-hidden="true"></span><strong>${d.holds ? 'held: disk full' : "queue file's disk full"}</strong> <span class="why">${esc(d.path)}: ${(d.freeBytes / 1e6).toFixed(0)} MB free (SERVER_DISK_MIN_FREE)</span></li>`,
    )
    .join('');
  const problems = (s.problems ?? [])
    .map((p) => `<li class="bad" data-setup-key="${esc(p.key)}"><span class="dot" aria-hidden="true"></span><strong>set-up</strong> ${esc(p.message)}</li>`)
    .join('');
  // The causes that block scans lead: a set-up problem (no PLEX_TOKEN) explains a target's failed check
  // (the scanner check cannot run sudo), not the other way round.
  return `<ul class="strip">${held}${disks}${problems}${targets}${relays}<li class="${driveClass}" data-drive="${s.drive.state}"><span class="dot" aria-hidden="true"></span><strong>drive</strong> ${driveText(s.drive, now)}</li><li class="off" data-queue-depth="${s.queue.pending + s.queue.active}"><strong>queue</strong> ${s.queue.pending} pending, ${s.queue.active} active</li>${notifications}</ul>`;
}

/** A notification destination: when its service last took a message, what waits, what was given up, and why. */
function notificationText(n: NotificationHealth, now: number): string {
  const cls = n.turn === 'elsewhere' ? 'off' : n.failingSince !== null ? 'bad' : 'ok';
  const bits = [
    n.turn === 'elsewhere' ? 'sent by another relay' : n.lastSuccessAt !== null ? `last sent ${duration(Math.max(0, now - n.lastSuccessAt))} ago` : 'nothing sent yet',
    `${n.waiting} waiting`,
    `${n.givenUp} given up`,
  ];
  const why = n.failingSince !== null ? `<span class="why">: not taken for ${duration(Math.max(0, now - n.failingSince))}${n.lastAnswer ? ` (${esc(n.lastAnswer)})` : ''}</span>` : '';
  return `<li class="${cls}" data-notification="${esc(n.name)}" data-waiting="${n.waiting}" data-given-up="${n.givenUp}"><span class="dot" aria-hidden="true"></span><strong>${esc(n.name)}</strong> ${esc(n.type)}: ${bits.join(', ')}${why}</li>`;
}

/** The relays sharing the queue and their servers: who delivers what. Bad when none has a server. */
function relaysText(relays: NonNullable<StatusView['relays']>): string {
  const served = relays.some((r) => r.targets.length);
  const list = relays.map((r) => `${esc(r.relay)}: ${r.targets.length ? r.targets.map(esc).join(', ') : 'no target'}`).join('; ');
  return `<li class="${served ? 'ok' : 'bad'}" data-relays="${relays.length}"><span class="dot" aria-hidden="true"></span><strong>relays</strong> ${
    list || 'none running'
  }${served ? '' : '<span class="why">: due scans wait for a relay with a target</span>'}</li>`;
}

function deliveries(v: ScanView, now: number): string {
  if (!v.deliveries.length) {
    if (v.waiting) return `<span class="muted" data-waiting>waiting: ${esc(v.waiting)}</span>`;
    // Its route names the targets until its deliveries do.
    const route = v.targets ? ` <span data-route>for ${v.targets.map(esc).join(', ')}</span>` : '';
    return v.status === 'pending' ? `<span class="muted">waiting for the delay</span>${route}` : '';
  }
  return `<ul class="deliveries">${v.deliveries
    .map((d) => {
      const bits = [`<strong title="${esc(d.target)}">${esc(d.name)}</strong> ${esc(d.status)}`, `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`];
      if (d.unserved) bits.push('<span data-unserved>no running relay has this server: it goes when one is back</span>');
      if (d.relay) bits.push(`by relay ${esc(d.relay)}`);
      if (d.status === 'waiting' && d.nextAt !== null && d.attempts > 0) bits.push(`next ${relative(d.nextAt, now)}`);
      if (d.detail) bits.push(esc(d.detail));
      const error = d.lastError ? `<div class="error-text">${esc(d.lastError)}</div>` : '';
      return `<li>${bits.join(', ')}${error}</li>`;
    })
    .join('')}</ul>`;
}

/** An active scan is being sent, waits to retry after an error (and says why), or waits for its turn. */
function activeState(v: ScanView): string {
  return `<span data-state="${esc(v.state)}">${esc(v.stateText)}</span>`;
}

function folderCell(v: ScanView): string {
  const files = v.fileCount ? `<div class="muted">${v.fileCount} file${v.fileCount === 1 ? '' : 's'}</div>` : '';
  const what = v.what ? `<div class="what">${esc(v.what)}</div>` : '';
  // A plain scan needs no word; a refresh or an analyze is said, since it does something else than a scan.
  const action = actionText(v.action);
  const asked = action ? `<div class="what" data-action-asked="${v.action}">${esc(action)}</div>` : '';
  return `<code>${esc(v.folder)}</code>${asked}${what}${v.title ? `<div class="title">${esc(v.title)}</div>` : ''}${files}`;
}

function actions(v: ScanView): string {
  const retry = `<button type="button" class="js-only" data-action="retry" data-id="${v.id}" aria-label="Retry scan ${v.id} now">${v.status === 'pending' ? 'Scan now' : 'Retry'}</button>`;
  const del = `<button type="button" class="js-only danger" data-action="delete" data-id="${v.id}" aria-label="Delete scan ${v.id}">Delete</button>`;
  if (v.status === 'pending' || v.status === 'active') return retry + del;
  return v.status === 'failed' ? retry : '';
}

export function renderQueue(items: readonly ScanView[], now = Date.now()): string {
  if (!items.length) return '<p class="empty" data-empty="queue">The queue is empty.</p>';
  const rows = items
    .map(
      (v) => `<tr data-id="${v.id}" data-status="${v.status}">
<td data-label="Folder"><div class="v">${folderCell(v)}</div></td>
<td data-label="Source"><div class="v">${esc(v.source)}${v.requests > 1 ? ` <span class="muted">(${v.requests} requests)</span>` : ''}</div></td>
<td data-label="State"><div class="v"><span class="badge ${v.status}">${esc(v.status === 'active' ? v.state : v.status)}</span></div></td>
<td data-label="Requested"><div class="v">${time(v.requestedAt)}</div></td>
<td data-label="Due"><div class="v">${v.status === 'pending' ? `${relative(v.dueAt, now)}<div class="muted">${time(v.dueAt)}</div>` : activeState(v)}</div></td>
<td data-label="Targets"><div class="v">${deliveries(v, now)}</div></td>
<td data-label="Actions" class="actions"><div class="v">${actions(v)}</div></td>
</tr>`,
    )
    .join('');
  return `<table><caption class="sr-only">Queued scans</caption><thead><tr><th scope="col">Folder</th><th scope="col">Source</th><th scope="col">State</th><th scope="col">Requested</th><th scope="col">Due</th><th scope="col">Targets (attempts, last error)</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function renderHistory(items: readonly ScanView[], now = Date.now()): string {
  if (!items.length) return '<p class="empty" data-empty="history">No finished scans match.</p>';
  const rows = items
    .map(
      (v) => `<tr data-id="${v.id}" data-status="${v.status}">
<td data-label="Finished"><div class="v">${time(v.finishedAt)}</div></td>
<td data-label="Folder"><div class="v">${folderCell(v)}</div></td>
<td data-label="Source"><div class="v">${esc(v.source)}</div></td>
<td data-label="Result"><div class="v"><span class="badge ${v.status}">${v.status === 'done' ? 'delivered' : 'failed'}</span></div></td>
<td data-label="Took"><div class="v">${v.tookMs === null ? '' : duration(v.tookMs)}</div></td>
<td data-label="Targets"><div class="v">${deliveries(v, now)}</div></td>
<td data-label="Actions" class="actions"><div class="v">${actions(v)}</div></td>
</tr>`,
    )
    .join('');
  return `<table><caption class="sr-only">Finished scans, newest first</caption><thead><tr><th scope="col">Finished</th><th scope="col">Folder</th><th scope="col">Source</th><th scope="col">Result</th><th scope="col">Took</th><th scope="col">Targets</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function option(value: string, label: string, selected: string | undefined): string {
  return `<option value="${esc(value)}"${selected === value ? ' selected' : ''}>${esc(label)}</option>`;
}

export interface PageParts {
  status: string;
  queue: string;
  queueCount: number;
  history: string;
}

/** The dashboard. Everything works without the script except the preview, actions and refresh. */
export function renderDashboard(secret: string, filter: HistoryQuery, parts: PageParts): string {
  const s = encodeURIComponent(secret);
  const sources = sourceSchema.options.map((o) => option(o, o, filter.source)).join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>scanrelay</title><link rel="stylesheet" href="${esc(s)}/dashboard.css">
<noscript><style>${NOSCRIPT_STYLE}</style></noscript></head>
<body><main id="dashboard" data-api="api/${esc(s)}/" data-parts="${esc(s)}/parts" data-events="${esc(s)}/events">
<header><h1>scanrelay <small class="muted" id="version" title="the running release (CHANGELOG.md)">${esc(versionText())}</small></h1><nav><a href="${esc(s)}/connect" id="connect-link">Connect</a>: pair the *arrs with the libraries and register their webhooks</nav><div id="status" role="status" aria-live="polite" aria-label="Status">${parts.status}</div></header>

<section aria-labelledby="scan-heading" class="card">
<h2 id="scan-heading">Manual scan</h2>
<form method="post" action="" id="scan-form">
<label for="filepath">Path to scan</label>
<div class="row">
<input type="text" id="filepath" name="filepath" required autocomplete="off" spellcheck="false" aria-describedby="scan-help preview" placeholder="/mnt/unionfs/Media/Movies/Movie Name (2020)/">
<input type="hidden" name="eventType" value="Manual">
<select name="action" id="scan-action" aria-label="What to ask the targets"><option value="scan" selected>scan the folder</option><option value="refresh">refresh the item's metadata</option><option value="analyze">analyze the item's media</option></select>
<button type="submit">Scan</button>
</div>
<p id="scan-help" class="muted">Any form listed in SERVER_PATH_MAPPINGS; a file is scanned as its folder. For a file changed in place (new subtitles, a transcode), refresh or analyze that item instead; targets without the action scan.</p>
</form>
<dl id="preview" class="preview js-only" aria-live="polite" aria-label="Mapping preview" hidden></dl>
<p id="scan-result" role="status" aria-live="polite"></p>
</section>

<section aria-labelledby="queue-heading" class="card">
<h2 id="queue-heading">Queue <span id="queue-count" class="count">(${parts.queueCount})</span></h2>
<p id="action-result" role="status" aria-live="polite" class="js-only"></p>
<div id="queue">${parts.queue}</div>
</section>

<section aria-labelledby="history-heading" class="card">
<h2 id="history-heading">History</h2>
<form method="get" action="" id="history-filter" class="filters" role="search" aria-label="Filter history">
<label>Source <select name="source">${option('', 'any', filter.source ?? '')}${sources}</select></label>
<label>Result <select name="status">${option('', 'any', filter.status ?? '')}${option('done', 'delivered', filter.status)}${option('failed', 'failed', filter.status)}</select></label>
<label>Path contains <input type="search" name="text" value="${esc(filter.text ?? '')}" autocomplete="off"></label>
<button type="submit" class="no-js-only">Filter</button>
</form>
<div id="history">${parts.history}</div>
</section>
<section aria-labelledby="notify-heading" class="card js-only">
<h2 id="notify-heading">Notifications</h2>
<button type="button" id="notify-test">Send a test notification</button>
<pre id="notify-result" role="status" aria-live="polite"></pre>
</section>
<p class="muted foot"><span class="js-only">Updates as things happen (every 5 seconds where the event stream cannot get through).</span><span class="no-js-only">Reload the page to update.</span> JSON: <code>api/&lt;secret&gt;/queue</code>, <code>history</code>, <code>map?path=</code>.</p>
</main>
<script src="${esc(s)}/dashboard.js" defer></script>
</body></html>`;
}
