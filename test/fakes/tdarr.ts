import { RecordingServer, type FakeAnswer, type RecordedCall } from './recording-server.ts';

/**
 * A fake Tdarr server on 127.0.0.1, based on Tdarr's API docs (the "Tdarr API" v2 swagger served by the
 * server): `POST /api/v2/scan-files` with `{"data": {"scanConfig": {dbID, mode, arrayOrPath}}}`, all three
 * required, mode one of scanFresh, scanFindNew, scanFolderWatcher; "scanFresh & scanFindNew require a single
 * string directory path, scanFolderWatcher requires an array of file paths". It answers 200 with a string.
 * `GET /api/v2/status` answers the server's status. With auth on (docs.tdarr.io, Authentication) a request
 * without the API key in `x-api-key` (the header Tdarr's own plugins send: HaveAGitGat/Tdarr_Plugins #873) is
 * refused 401. Autopulse's tdarr.rs:58-81 sends the same body, always in `scanFolderWatcher` mode.
 * `libraries` holds each library's folder: a scanFindNew or scanFresh of another path makes that path the
 * library's folder, as Tdarr's author says it does (HaveAGitGat/Tdarr #577: the library "loses history and thinks
 * that is the new library path"; scan a subfolder's files with scanFolderWatcher instead).
 * `POST /api/v2/cruddb` with `{"data": {"collection": "LibrarySettingsJSONDB", "mode": "getById", "docID"}}` answers
 * that library's settings document (`_id`, `name`, `folder` its source folder, ...), as scripts driving Tdarr's API
 * read it. What Tdarr answers for an unknown id is not documented: the fake answers an empty body, which is not JSON.
 */
export class FakeTdarr extends RecordingServer {
  readonly scans: Array<{ dbID: string; mode: string; arrayOrPath: string | string[] }> = [];
  /** Each library's folder by its id (its `dbID`); a find-new scan of another path replaces it (#577). */
  readonly libraries: Record<string, string> = {};

  constructor(
    /** The API key when auth is on; undefined: auth off, anyone may call. */
    readonly apiKey?: string,
  ) {
    super();
  }

  protected answer(call: RecordedCall): FakeAnswer {
    if (this.apiKey !== undefined && call.headers['x-api-key'] !== this.apiKey) return { status: 401, body: 'Unauthorized' };
    if (call.method === 'GET' && call.path === '/api/v2/status') return { status: 200, body: { status: 'good', isProduction: true, os: 'linux', version: '2.45.01', uptime: 100 } };
    if (call.method === 'POST' && call.path === '/api/v2/scan-files') {
      const cfg = ((call.body as { data?: { scanConfig?: Record<string, unknown> } } | undefined)?.data?.scanConfig ?? {}) as Record<string, unknown>;
      const { dbID, mode, arrayOrPath } = cfg;
      if (typeof dbID !== 'string' || typeof mode !== 'string' || arrayOrPath === undefined) return { status: 400, body: { message: 'body/data/scanConfig must have required properties dbID, mode, arrayOrPath' } };
      if (!['scanFresh', 'scanFindNew', 'scanFolderWatcher'].includes(mode)) return { status: 400, body: { message: 'body/data/scanConfig/mode must be equal to one of the allowed values' } };
      const isList = Array.isArray(arrayOrPath) && arrayOrPath.every((p) => typeof p === 'string');
      if (mode === 'scanFolderWatcher' ? !isList : typeof arrayOrPath !== 'string') return { status: 400, body: { message: 'arrayOrPath has the wrong form for this mode' } };
      this.scans.push({ dbID, mode, arrayOrPath: arrayOrPath as string | string[] });
      if (mode !== 'scanFolderWatcher' && arrayOrPath !== '') this.libraries[dbID] = arrayOrPath as string;
      return { status: 200, body: 'OK' };
    }
    if (call.method === 'POST' && call.path === '/api/v2/cruddb') {
      const data = ((call.body as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<string, unknown>;
      if (data.collection !== 'LibrarySettingsJSONDB' || data.mode !== 'getById' || typeof data.docID !== 'string') return { status: 400, body: { message: 'unsupported cruddb request' } };
      const folder = Object.hasOwn(this.libraries, data.docID) ? this.libraries[data.docID] : undefined;
      if (folder === undefined) return { status: 200 };
      return { status: 200, body: { _id: data.docID, name: `Library ${data.docID}`, folder, cache: '/temp', output: '', processLibrary: true, folderWatching: false } };
    }
    return { status: 404, body: { message: `Route ${call.method}:${call.path} not found`, error: 'Not Found', statusCode: 404 } };
  }
}
