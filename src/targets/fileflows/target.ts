import { z } from 'zod';
import type { FileflowsTarget } from './schema.ts';
import type { Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { ServiceClient } from '../http.ts';
import { CachedList } from '../cached-list.ts';
import { deepestHolder } from '../path-match.ts';
import { serviceTarget } from '../service-target.ts';

/** `GET /api/library` (autopulse's fileflows.rs:36-43): PascalCase, a library's `Path` and its `Flow`. */
const librariesAnswer = z.array(
  z.looseObject({
    Uid: z.string(),
    Name: z.string().optional(),
    Enabled: z.boolean().default(true),
    Path: z.string().nullish(),
    Flow: z.looseObject({ Uid: z.string() }).nullish(),
  }),
);
type Library = z.infer<typeof librariesAnswer>[number];

/** `POST /api/library-file/search` (fileflows.rs:82-89): the files FileFlows knows, `Name` their path. */
const searchAnswer = z.array(z.looseObject({ Uid: z.string(), Name: z.string().optional() }));

/** The library whose path holds `path` most closely (whole segments; fileflows.rs:99-101). */
export function fileflowsLibraryFor<L extends Pick<Library, 'Path'>>(path: string, libraries: readonly L[]): L | undefined {
  return deepestHolder(path, libraries, (l) => l.Path ?? undefined);
}

/**
 * FileFlows: a file it already knows is processed again (`POST /api/library-file/reprocess`), one it does
 * not is added to the library's flow (`POST /api/library-file/manually-add`), as autopulse's
 * fileflows.rs:136-321 does. FileFlows processes files: a scan that names none (a folder alone, a cut list,
 * a deletion) has nothing to give it, and its own library scan finds new files. The access token, when set,
 * goes in `x-token` (FileFlows' own scripts, Scripts/Shared/FileFlowsApi.js).
 */
export function createFileflowsTarget(name: string, entry: FileflowsTarget, log: Logger): Target {
  const client = new ServiceClient({
    product: 'FileFlows',
    url: entry.URL,
    request: entry.REQUEST,
    headers: entry.API_KEY ? { 'x-token': entry.API_KEY } : {},
    secrets: [entry.API_KEY],
  });
  const libraries = new CachedList(() => client.json('GET', '/api/library', 'library list', librariesAnswer));
  return serviceTarget(name, entry, {
    async send(item) {
      if (item.updateType === 'Deleted' || item.files.length === 0 || item.moreFiles) {
        return { outcome: 'done', detail: item.updateType === 'Deleted' ? 'a deletion: nothing for FileFlows to process' : 'no file named: nothing for FileFlows to process (its library scan finds new files)' };
      }
      const { found: library, items: all } = await libraries.find((list) => fileflowsLibraryFor(item.folder, list));
      if (!library) return { outcome: 'failed', error: `no FileFlows library holds ${item.folder} (library paths: ${all.map((l) => l.Path).filter(Boolean).join(', ') || 'none'})` };
      if (!library.Enabled) return { outcome: 'failed', error: `FileFlows library "${library.Name ?? library.Uid}" is disabled` };
      const known: string[] = [];
      const unknown: string[] = [];
      for (const file of item.files) {
        const hits = await client.json('POST', '/api/library-file/search', 'file search', searchAnswer, { Path: file, Limit: 1 });
        // The search matches more than the exact path: only the very file is reprocessed.
        const hit = hits.find((h) => h.Name === undefined || h.Name === file);
        if (hit) known.push(hit.Uid);
        else unknown.push(file);
      }
      if (known.length) {
        log.debug({ target: name, scan: item.id, files: known.length }, 'asking FileFlows to reprocess known files');
        await client.call('POST', '/api/library-file/reprocess', 'reprocess', { Uids: known, CustomVariables: {}, Mode: 0, Flow: null, Node: null, BottomOfQueue: false });
      }
      if (unknown.length) {
        if (!library.Flow) return { outcome: 'failed', error: `FileFlows library "${library.Name ?? library.Uid}" has no flow to add ${unknown.length} new file(s) to` };
        log.debug({ target: name, scan: item.id, files: unknown }, 'adding new files to FileFlows');
        await client.call('POST', '/api/library-file/manually-add', 'manual add', { FlowUid: library.Flow.Uid, Files: unknown, CustomVariables: {} });
      }
      return { outcome: 'done', detail: `${known.length} file(s) reprocessed, ${unknown.length} added (library "${library.Name ?? library.Uid}")` };
    },
    async libraryRoots(fresh?: boolean) {
      return (await libraries.get(fresh)).flatMap((l) => (l.Path ? [l.Path] : []));
    },
    probe: () => libraries.get(true),
  });
}
