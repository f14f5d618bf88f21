/**
 * The one Drive API call the walkthrough needs: `drives.list` (GET {base}drives), to offer the account's
 * shared drives. The base URL is configurable so tests use a fake on 127.0.0.1.
 */
export const DEFAULT_DRIVE_API_URL = 'https://www.googleapis.com/drive/v3/';

export interface SharedDrive {
  id: string;
  name: string;
}

export class DriveApiError extends Error {}

const MAX_PAGES = 50;

export async function listSharedDrives(accessToken: string, baseUrl = DEFAULT_DRIVE_API_URL): Promise<SharedDrive[]> {
  const drives: SharedDrive[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = new URL('drives', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    url.searchParams.set('pageSize', '100');
    if (pageToken) url.searchParams.set('pageToken', pageToken);
    let res: Response;
    try {
      res = await fetch(url, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, signal: AbortSignal.timeout(30_000) });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      throw new DriveApiError(`cannot reach the Drive API at ${url.origin}: ${cause?.code ?? (err as Error).message}`);
    }
    const text = await res.text();
    let body: { drives?: Array<{ id?: string; name?: string }>; nextPageToken?: string; error?: { message?: string } } = {};
    try {
      body = JSON.parse(text);
    } catch {
      /* reported below */
    }
    if (!res.ok) throw new DriveApiError(`the Drive API refused to list shared drives (HTTP ${res.status}): ${body.error?.message ?? text.slice(0, 200)}`);
    for (const d of body.drives ?? []) if (d.id) drives.push({ id: d.id, name: d.name ?? d.id });
    pageToken = body.nextPageToken;
    if (!pageToken) return drives;
  }
  throw new DriveApiError(`the Drive API kept returning pages after ${MAX_PAGES} pages of shared drives`);
}
