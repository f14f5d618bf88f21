// scanrelay dashboard: progressive enhancement over server-rendered HTML. Without this script the
// page still shows the queue and history as of loading, and the scan form still posts.
(() => {
  'use strict';
  const main = document.getElementById('dashboard');
  if (!main || !window.fetch) return;
  document.documentElement.classList.add('js');
  const api = main.dataset.api;
  const partsUrl = main.dataset.parts;
  const $ = (id) => document.getElementById(id);
  const form = $('scan-form');
  const input = $('filepath');
  const preview = $('preview');
  const scanResult = $('scan-result');
  const actionResult = $('action-result');
  const filter = $('history-filter');
  const REFRESH_MS = 5000;

  async function call(method, url, body) {
    const init = { method, headers: { accept: 'application/json' }, credentials: 'same-origin' };
    if (body !== undefined) {
      init.headers['content-type'] = body instanceof URLSearchParams ? 'application/x-www-form-urlencoded' : 'application/json';
      init.body = body instanceof URLSearchParams ? body.toString() : JSON.stringify(body);
    }
    const res = await fetch(url, init);
    let data = null;
    try { data = await res.json(); } catch { /* not JSON */ }
    if (!res.ok) throw new Error((data && data.error) || `HTTP ${res.status}`);
    return data;
  }

  function say(el, text, isError) {
    el.textContent = text;
    el.classList.toggle('error', Boolean(isError));
  }

  function localizeTimes(root) {
    for (const t of root.querySelectorAll('time[datetime]')) {
      const d = new Date(t.getAttribute('datetime'));
      if (!Number.isNaN(d.getTime())) {
        t.textContent = d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
        t.title = t.getAttribute('datetime');
      }
    }
  }

  // Refresh: the server renders the same parts the page was built from; swap them in.
  function filterParams() {
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(filter)) if (v !== '') params.set(k, String(v));
    return params;
  }
  let refreshing = null;
  let again = false;
  async function refresh() {
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      try {
        const qs = filterParams().toString();
        const parts = await call('GET', partsUrl + (qs ? `?${qs}` : ''));
        for (const id of ['status', 'queue', 'history']) {
          const el = $(id);
          // Leave a region alone while the keyboard is in it, so focus is not lost under the user.
          if (el.contains(document.activeElement) && document.activeElement !== document.body) continue;
          el.innerHTML = parts[id];
          localizeTimes(el);
        }
        $('queue-count').textContent = `(${parts.queueCount})`;
        main.dataset.refreshedAt = String(Date.now());
      } catch (err) {
        say(actionResult, `Refresh failed: ${err.message}`, true);
      } finally {
        refreshing = null;
        if (again) { again = false; void refresh(); }
      }
    })();
    return refreshing;
  }
  // The server's event stream says when something changed (a scan confirmed or failed, a hold, a request queued);
  // the page refreshes then. Until the stream has said hello, and whenever it is cut (a proxy that buffers it), the
  // page polls every 5 s as before.
  let pollTimer = null;
  const poll = (on) => {
    if (on && !pollTimer) pollTimer = setInterval(() => { if (!document.hidden) void refresh(); }, REFRESH_MS);
    if (!on && pollTimer) { clearInterval(pollTimer); pollTimer = null; }
    main.dataset.updates = on ? 'polling' : 'stream';
  };
  poll(true);
  if (window.EventSource && main.dataset.events) {
    const stream = new EventSource(main.dataset.events);
    stream.addEventListener('hello', () => { poll(false); void refresh(); });
    const onEvent = (m) => {
      main.dataset.lastEvent = `${m.type} ${m.data}`;
      void refresh();
    };
    for (const kind of ['scanned', 'failed', 'waiting', 'recovered', 'removed', 'retrying', 'queue']) stream.addEventListener(kind, onEvent);
    stream.addEventListener('error', () => poll(true));
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden) void refresh(); });

  // A test message to each NOTIFICATIONS destination; each service's answer is shown.
  const notifyButton = $('notify-test');
  if (notifyButton) {
    notifyButton.addEventListener('click', async () => {
      notifyButton.disabled = true;
      const out = $('notify-result');
      try {
        const r = await call('POST', `${api}notify-test`);
        out.textContent = r.results.map((x) => `${x.name} (${x.type}, ${x.url}): ${x.ok ? 'sent' : x.outcome}: ${x.answer}`).join('\n');
        out.classList.toggle('error', r.results.some((x) => !x.ok));
      } catch (err) {
        say(out, `Not sent: ${err.message}`, true);
      } finally {
        notifyButton.disabled = false;
      }
    });
  }

  // Mapping preview while typing.
  let previewTimer;
  let previewCtl;
  function row(term, value, cls) {
    const dt = document.createElement('dt');
    dt.textContent = term;
    const dd = document.createElement('dd');
    dd.textContent = value;
    if (cls) dd.className = cls;
    preview.append(dt, dd);
  }
  async function showPreview() {
    const path = input.value.trim();
    if (previewCtl) previewCtl.abort();
    if (!path) { preview.hidden = true; preview.replaceChildren(); return; }
    previewCtl = new AbortController();
    try {
      const res = await fetch(`${api}map?path=${encodeURIComponent(path)}`, { headers: { accept: 'application/json' }, signal: previewCtl.signal });
      const m = await res.json();
      preview.replaceChildren();
      if (!res.ok) { row('Problem', m.error || `HTTP ${res.status}`, 'bad'); }
      else if (m.problem) { if (m.mapped) row('Mapped', m.mapped); row('Problem', m.problem, 'bad'); }
      else {
        row('Mapped', m.match ? `${m.mapped}  (via ${m.match.value} → ${m.match.key})` : `${m.mapped}  (no mapping matched)`);
        row('Folder', m.folder);
        if (m.ignored) row('Ignored', `matches "${m.ignored}" in SERVER_IGNORE_LIST`, 'bad');
        row('Section', m.section ? `${m.section.title} (id ${m.section.id}, location ${m.section.location})` : (m.sectionError || 'none'), m.section ? '' : 'bad');
      }
      preview.hidden = false;
      preview.dataset.for = path;
    } catch (err) {
      if (err.name !== 'AbortError') { preview.replaceChildren(); row('Problem', err.message, 'bad'); preview.hidden = false; }
    }
  }
  input.addEventListener('input', () => { clearTimeout(previewTimer); previewTimer = setTimeout(showPreview, 250); });

  // Scan without leaving the page: the same POST the plain form makes, answered as JSON.
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    try {
      // Not form.action: the field named "action" (scan, refresh, analyze) shadows that property.
      const r = await call('POST', form.getAttribute('action') || location.href, new URLSearchParams(new FormData(form)));
      const first = r.scans && r.scans[0];
      if (r.status === 'ignored') say(scanResult, `Ignored ${r.path}: ${first && first.reason ? first.reason : ''}`);
      else {
        const due = r.dueIn !== undefined ? `, due in ${r.dueIn} s` : '';
        const text = `${r.status === 'merged' ? 'Merged into the pending scan of' : 'Queued'} ${first ? first.folder : r.path}${first && first.id ? ` (scan ${first.id})` : ''}${due}`;
        // Queued, but no media server can scan it yet (the answer says why).
        say(scanResult, r.warning ? `${text}. ${r.warning}` : text, Boolean(r.warning));
      }
      await refresh();
    } catch (err) {
      say(scanResult, `Not queued: ${err.message}`, true);
    } finally {
      button.disabled = false;
    }
  });

  // Retry and delete buttons in the queue and history tables.
  main.addEventListener('click', async (ev) => {
    const b = ev.target.closest('button[data-action]');
    if (!b) return;
    const id = b.dataset.id;
    b.disabled = true;
    try {
      if (b.dataset.action === 'retry') {
        await call('POST', `${api}queue/${id}/retry`);
        say(actionResult, `Scan ${id} will be sent now.`);
      } else {
        await call('DELETE', `${api}queue/${id}`);
        say(actionResult, `Scan ${id} deleted from the queue.`);
      }
    } catch (err) {
      say(actionResult, `Scan ${id}: ${err.message}`, true);
    }
    b.blur();
    await refresh();
  });

  // History filters apply as they change; the URL keeps them for a reload.
  let filterTimer;
  const applyFilter = () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => {
      const qs = filterParams().toString();
      history.replaceState(null, '', location.pathname + (qs ? `?${qs}` : ''));
      void refresh();
    }, 200);
  };
  filter.addEventListener('change', applyFilter);
  filter.addEventListener('input', applyFilter);
  filter.addEventListener('submit', (ev) => { ev.preventDefault(); applyFilter(); });

  localizeTimes(document);
})();
