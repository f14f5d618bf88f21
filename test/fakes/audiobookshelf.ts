import { RecordingServer, type FakeAnswer, type RecordedCall } from './recording-server.ts';

/**
 * A fake Audiobookshelf server on 127.0.0.1, based on advplyr/audiobookshelf at 1b46d68: server/Auth.js (a JWT
 * or API key as `Authorization: Bearer …` or `?token=`, else 401), LibraryController.findAll (`GET
 * /api/libraries` -> `{"libraries": [{id, name, folders: [{id, fullPath, libraryId}], settings}]}`) and
 * MiscController.updateWatchedPath (`POST /api/watcher/update` `{libraryId, path, type[, oldPath]}`: 403 for
 * a non-admin, 400 without libraryId, path or type, or with another type than add/unlink/rename, else 200
 * "OK"). The real route does not check the library id (its Watcher only logs it); neither does this one.
 * Autopulse's audiobookshelf.rs:75-121 sends the same request.
 */
export interface AbsLibrary {
  id: string;
  name: string;
  folders: string[];
  disableWatcher?: boolean;
}

export class FakeAudiobookshelf extends RecordingServer {
  libraries: AbsLibrary[] = [];
  /** What `POST /api/watcher/update` took, in order. */
  readonly updates: Array<{ libraryId: string; path: string; type: string }> = [];

  constructor(
    readonly adminToken = 'abs-admin-token',
    /** A token of a user who is not an admin: signed in, but refused the watcher route. */
    readonly userToken = 'abs-user-token',
  ) {
    super();
  }

  protected answer(call: RecordedCall): FakeAnswer {
    if (call.method === 'GET' && call.path === '/ping') return { status: 200, body: { success: true } };
    if (!call.path.startsWith('/api/')) return { status: 404, body: 'Not Found' };
    const bearer = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''))?.[1] ?? call.query.get('token') ?? undefined;
    if (bearer !== this.adminToken && bearer !== this.userToken) return { status: 401, body: 'Unauthorized' };
    if (call.method === 'GET' && call.path === '/api/libraries') {
      return {
        status: 200,
        body: {
          libraries: this.libraries.map((l, i) => ({
            id: l.id,
            name: l.name,
            folders: l.folders.map((fullPath, j) => ({ id: `fol_${i}_${j}`, fullPath, libraryId: l.id, addedAt: 1700000000000 })),
            displayOrder: i + 1,
            icon: 'audiobookshelf',
            mediaType: 'book',
            provider: 'google',
            settings: { coverAspectRatio: 1, disableWatcher: l.disableWatcher ?? false, autoScanCronExpression: null },
            lastScan: null,
            createdAt: 1700000000000,
            lastUpdate: 1700000000000,
          })),
        },
      };
    }
    if (call.method === 'POST' && call.path === '/api/watcher/update') {
      if (bearer !== this.adminToken) return { status: 403, body: 'Forbidden' };
      const b = (call.body ?? {}) as Record<string, unknown>;
      if (!b.libraryId || !b.path || !b.type) return { status: 400, body: 'Bad Request' };
      if (!['add', 'unlink', 'rename'].includes(String(b.type))) return { status: 400, body: 'Bad Request' };
      if (b.type === 'rename' && !b.oldPath) return { status: 400, body: 'Bad Request' };
      this.updates.push({ libraryId: String(b.libraryId), path: String(b.path), type: String(b.type) });
      return { status: 200, body: 'OK' };
    }
    return { status: 404, body: 'Not Found' };
  }
}
