/** Pages for browsers. Self-contained (no CDN): they must render offline. */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Inline (the page must be one file); the CSP allows it by its hash. */
export const PAGE_STYLE = `body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}label{display:block;font-weight:600;margin-bottom:.4rem}
input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:.6rem;padding:.5rem 1.2rem;font-size:1rem}
.note{background:#eef5ff;border-left:4px solid #3b82f6;padding:.6rem .8rem;margin-top:1rem}
.error{background:#fff0f0;border-left-color:#dc2626}code{word-break:break-all}`;

/**
 * Hides the dashboard script's buttons when scripts are off; inline, allowed by the CSP through its hash (here, not
 * beside the dashboard's pages: the CSP is set on every answer, and those load with the first dashboard request).
 */
export const NOSCRIPT_STYLE = '.js-only{display:none!important}';

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - scanrelay</title><style>${PAGE_STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

/** The manual scan form; the two pages differ in the field they post and what they say about it. */
function manualForm(field: { name: string; label: string; placeholder: string }, hidden: string, note: string): string {
  return page(
    'Manual scan',
    `<h1>scanrelay: manual scan</h1>
<form method="post" action="">
  <label for="${field.name}">${field.label}</label>
  <input type="text" id="${field.name}" name="${field.name}" required placeholder="${field.placeholder}">${hidden}
  <button type="submit">Scan</button>
</form>
<p class="note">${note}</p>`,
  );
}

export function manualScanPage(): string {
  return manualForm(
    { name: 'filepath', label: 'Path to scan', placeholder: '/mnt/unionfs/Media/Movies/Movie Name (2020)/' },
    '\n  <input type="hidden" name="eventType" value="Manual">',
    'The path may be in any form listed in SERVER_PATH_MAPPINGS; a file is scanned as its folder.',
  );
}

/** The manual page at autoscan's /triggers/manual: the same form, posting autoscan's `dir` field. */
export function autoscanManualPage(): string {
  return manualForm(
    { name: 'dir', label: 'Folder to scan', placeholder: '/mnt/unionfs/Media/Movies/Movie Name (2020)' },
    '',
    "autoscan's manual trigger: the folder is scanned as it is, after SERVER_PATH_REWRITES and SERVER_PATH_MAPPINGS.",
  );
}

export function resultPage(
  status: 'queued' | 'merged' | 'ignored',
  path: string,
  reason?: string,
  wait: { due?: string; dueIn?: number; warning?: string } = {},
): string {
  const when = wait.due ? ` It is due in ${wait.dueIn} s (${escapeHtml(wait.due)}).` : '';
  const text =
    status === 'queued'
      ? `<code>${escapeHtml(path)}</code> was added to the scan queue.${when}`
      : status === 'merged'
        ? `<code>${escapeHtml(path)}</code> was merged with a pending scan of the same folder.${when}`
        : `<code>${escapeHtml(path)}</code> was ignored: ${escapeHtml(reason ?? '')}`;
  const warning = wait.warning ? `<p class="note error">${escapeHtml(wait.warning)}</p>` : '';
  return page('Scan request', `<h1>${status === 'ignored' ? 'Ignored' : 'Success'}</h1><p class="note">${text}</p>${warning}<p><a href="">Back</a></p>`);
}

export function errorPage(status: number, message: string): string {
  return page('Error', `<h1>Error ${status}</h1><p class="note error">${escapeHtml(message)}</p><p><a href="">Back</a></p>`);
}
