import { RecordingServer, type FakeAnswer, type RecordedCall } from './recording-server.ts';

/**
 * A fake FileFlows server on 127.0.0.1. The routes and shapes are those autopulse's fileflows.rs:28-175 uses
 * (FileFlows' own source is no longer public): `GET /api/library` (PascalCase: Uid, Name, Enabled, Path,
 * Flow {Uid}), `POST /api/library-file/search` `{Path, Limit}` -> the files whose name holds Path (a search,
 * not an exact lookup), `POST /api/library-file/reprocess` `{Uids, ...}` and `POST
 * /api/library-file/manually-add` `{FlowUid, Files, CustomVariables}`. With an access token set, a request
 * without it in `x-token` (FileFlows' Scripts/Shared/FileFlowsApi.js) is refused 401.
 */
export interface FfLibrary {
  Uid: string;
  Name: string;
  Enabled: boolean;
  Path: string;
  Flow: { Uid: string; Name?: string } | null;
}

export class FakeFileFlows extends RecordingServer {
  libraries: FfLibrary[] = [];
  /** Files FileFlows knows: uid -> full path. */
  readonly known = new Map<string, string>();
  readonly reprocessed: string[][] = [];
  readonly added: Array<{ FlowUid: string; Files: string[] }> = [];

  constructor(readonly token?: string) {
    super();
  }

  protected answer(call: RecordedCall): FakeAnswer {
    if (this.token !== undefined && call.headers['x-token'] !== this.token) return { status: 401, body: 'Unauthorized' };
    const body = (call.body ?? {}) as Record<string, unknown>;
    if (call.method === 'GET' && call.path === '/api/library') return { status: 200, body: this.libraries };
    if (call.method === 'POST' && call.path === '/api/library-file/search') {
      const path = String(body.Path ?? '');
      const limit = Number(body.Limit ?? 0) || Infinity;
      const hits = [...this.known].filter(([, name]) => path !== '' && name.includes(path)).slice(0, limit);
      return { status: 200, body: hits.map(([Uid, Name]) => ({ Uid, Name, FlowUid: this.libraries[0]?.Flow?.Uid ?? '', Status: 1 })) };
    }
    if (call.method === 'POST' && call.path === '/api/library-file/reprocess') {
      if (!Array.isArray(body.Uids)) return { status: 400, body: 'Uids required' };
      this.reprocessed.push(body.Uids as string[]);
      return { status: 200 };
    }
    if (call.method === 'POST' && call.path === '/api/library-file/manually-add') {
      if (typeof body.FlowUid !== 'string' || !Array.isArray(body.Files)) return { status: 400, body: 'FlowUid and Files required' };
      if (!this.libraries.some((l) => l.Flow?.Uid === body.FlowUid)) return { status: 400, body: 'Flow not found' };
      this.added.push({ FlowUid: body.FlowUid, Files: body.Files as string[] });
      return { status: 200 };
    }
    return { status: 404 };
  }
}
