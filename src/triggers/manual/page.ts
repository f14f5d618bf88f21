/** Pages for browsers. Self-contained (no CDN): they must render offline. */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}label{display:block;font-weight:600;margin-bottom:.4rem}
input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
button{margin-top:.6rem;padding:.5rem 1.2rem;font-size:1rem}
.note{background:#eef5ff;border-left:4px solid #3b82f6;padding:.6rem .8rem;margin-top:1rem}
.error{background:#fff0f0;border-left-color:#dc2626}code{word-break:break-all}`;

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - scanrelay</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

export function manualScanPage(): string {
  return page(
    'Manual scan',
    `<h1>scanrelay: manual scan</h1>
<form method="post" action="">
  <label for="filepath">Path to scan</label>
  <input type="text" id="filepath" name="filepath" required placeholder="/mnt/unionfs/Media/Movies/Movie Name (2020)/">
  <input type="hidden" name="eventType" value="Manual">
  <button type="submit">Scan</button>
</form>
<p class="note">The path may be in any form listed in SERVER_PATH_MAPPINGS; a file is scanned as its folder.</p>`,
  );
}

export function resultPage(status: 'queued' | 'merged' | 'ignored', path: string, reason?: string): string {
  const text =
    status === 'queued'
      ? `<code>${escapeHtml(path)}</code> was added to the scan queue.`
      : status === 'merged'
        ? `<code>${escapeHtml(path)}</code> was merged with a pending scan of the same folder.`
        : `<code>${escapeHtml(path)}</code> was ignored: ${escapeHtml(reason ?? '')}`;
  return page('Scan request', `<h1>${status === 'ignored' ? 'Ignored' : 'Success'}</h1><p class="note">${text}</p><p><a href="">Back</a></p>`);
}

export function errorPage(status: number, message: string): string {
  return page('Error', `<h1>Error ${status}</h1><p class="note error">${escapeHtml(message)}</p><p><a href="">Back</a></p>`);
}
