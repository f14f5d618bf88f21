// scanrelay Connect page: pairs the *arrs' root folders with the libraries, registers the webhooks, runs the tests.
(() => {
  'use strict';
  const main = document.getElementById('connect');
  if (!main || !window.fetch) return;
  const api = main.dataset.api;
  const $ = (id) => document.getElementById(id);
  const result = $('connect-result');
  const log = $('connect-log');
  const rows = $('pairings').querySelector('tbody');

  function body() {
    const arrs = [...document.querySelectorAll('input[name="target"]:checked')].map((c) => ({ target: c.value }));
    const url = $('arr-url').value.trim();
    const key = $('arr-key').value.trim();
    if (url || key) arrs.push({ kind: $('arr-kind').value, url, key });
    return { relayUrl: $('relay-url').value.trim(), arrs, disableLibraryUpdate: $('disable-update').checked };
  }

  function cell(tr, text) {
    const td = document.createElement('td');
    td.textContent = text || '';
    tr.appendChild(td);
  }

  function show(data) {
    rows.textContent = '';
    for (const arr of data.arrs || []) {
      for (const p of arr.pairings) {
        const tr = document.createElement('tr');
        tr.dataset.status = p.status;
        cell(tr, `${arr.label} (/triggers/${arr.trigger})`);
        cell(tr, p.root);
        cell(tr, p.status === 'paired' ? `${p.library} ${p.location}` : p.status === 'ambiguous' ? `claimed by ${p.candidates.join(' and ')}: skipped` : 'no library holds it: no rewrite');
        cell(tr, p.before);
        cell(tr, p.after);
        rows.appendChild(tr);
      }
    }
    log.textContent = (data.lines || []).join('\n');
  }

  async function run(what, button) {
    button.disabled = true;
    result.textContent = what === 'apply' ? 'Registering and testing...' : 'Reading the servers and *arrs...';
    result.classList.remove('error');
    try {
      const res = await fetch(`${api}${what}`, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body()) });
      let data = null;
      try { data = await res.json(); } catch { /* not JSON */ }
      if (!res.ok) throw new Error((data && data.error) || `HTTP ${res.status}`);
      show(data);
      result.textContent = what === 'apply'
        ? (data.webhooks || []).map((w) => `${w.label}: webhook ${w.action} (${w.url}), test received`).join('; ')
        : 'Pairings shown: nothing was changed yet.';
    } catch (err) {
      result.textContent = err.message;
      result.classList.add('error');
    } finally {
      button.disabled = false;
    }
  }

  $('connect-plan').addEventListener('click', (e) => run('plan', e.currentTarget));
  $('connect-apply').addEventListener('click', (e) => run('apply', e.currentTarget));
})();
