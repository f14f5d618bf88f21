import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { PayloadError } from '../../intake/intent.ts';
import { recognizeManual } from '../../triggers/manual/recognize.ts';
import { PathProblem } from '../../intake/resolve.ts';
import type { PluginDeps } from '../deps.ts';
import { submitIntent } from '../../intake/submit.ts';
import { withReadiness } from '../readiness.ts';
import { sendTestMessages } from '../../notify/test-message.ts';
import { dropEmpty, historyQuerySchema, mapPreview, NoSectionCache, scanViewOf, relayTargetNames, withinBytes } from './data.ts';

type IdParams = { secret: string; id: string };

const idSchema = z.coerce.number().int().positive();
const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(500),
  offset: z.coerce.number().int().min(0).default(0),
});
const filesPageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});
const scanBodySchema = z.object({ path: z.string(), action: z.unknown().optional() });
const mapQuerySchema = z.object({ path: z.string().min(1, 'path is missing: GET map?path=<a path in any mapped form>') });

/** The first problem zod found, as one line: `field: message`. */
function firstIssue(err: z.ZodError): string {
  const issue = err.issues[0];
  if (!issue) return 'invalid request';
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

function parseOr400<S extends z.ZodType>(schema: S, value: unknown, reply: FastifyReply, what: string): z.infer<S> | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  void reply.code(400).send({ error: `${what}: ${firstIssue(parsed.error)}` });
  return undefined;
}

/** What answers the JSON API's routes (api.ts declares them), built at its first request. */
export function apiHandlers(deps: PluginDeps) {
  const every = relayTargetNames(deps);
  const noSection = new NoSectionCache();
  return {
    // One test message to each NOTIFICATIONS destination, and what each service answered (URLs masked).
    notifyTest: async (_req: FastifyRequest, reply: FastifyReply) => {
      if (Object.keys(deps.config.NOTIFICATIONS).length === 0) return reply.code(400).send({ error: 'no NOTIFICATIONS in the config: add one (docs/notifications.md)' });
      return { results: await sendTestMessages(deps.config.NOTIFICATIONS) };
    },

    // count is every open scan; items are one page of them (limit, offset), in the order they will go.
    queue: async (req: FastifyRequest, reply: FastifyReply) => {
      const q = parseOr400(pageSchema, dropEmpty(req.query), reply, 'queue query');
      if (!q) return reply;
      const count = await deps.store.countOpen();
      const { items } = withinBytes((await deps.store.view.listOpen(q.limit, q.offset)).map(scanViewOf(every)));
      const end = q.offset + items.length;
      return { count, offset: q.offset, limit: q.limit, items, next: end < count ? end : null };
    },

    history: async (req: FastifyRequest, reply: FastifyReply) => {
      const q = parseOr400(historyQuerySchema, dropEmpty(req.query), reply, 'history query');
      if (!q) return reply;
      const page = (await deps.store.view.listHistory(q)).map(scanViewOf(every));
      const { items, cut } = withinBytes(page);
      const more = cut || page.length === q.limit;
      return { count: items.length, offset: q.offset, items, next: more ? q.offset + items.length : null };
    },

    // One scan's files, a page at a time: the sample the queue kept (fileCount also counts those it did not).
    files: async (req: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) => {
      const id = parseOr400(idSchema, req.params.id, reply, 'scan id');
      if (id === undefined) return reply;
      const q = parseOr400(filesPageSchema, dropEmpty(req.query), reply, 'files query');
      if (!q) return reply;
      const entry = await deps.store.view.get(id);
      if (!entry) return reply.code(404).send({ error: `no scan with id ${id}` });
      const { items: files } = withinBytes(entry.files.slice(q.offset, q.offset + q.limit));
      const end = q.offset + files.length;
      return { id, fileCount: entry.fileCount, kept: entry.files.length, offset: q.offset, limit: q.limit, files, next: end < entry.files.length ? end : null };
    },

    map: async (req: FastifyRequest, reply: FastifyReply) => {
      const q = parseOr400(mapQuerySchema, req.query, reply, 'map query');
      if (!q) return reply;
      return mapPreview(q.path, deps, undefined, noSection);
    },

    scan: async (req: FastifyRequest, reply: FastifyReply) => {
      const body = parseOr400(scanBodySchema, req.body ?? {}, reply, 'scan body (expected JSON {"path": "..."})');
      if (!body) return reply;
      try {
        const manual = recognizeManual({ eventType: 'Manual', filepath: body.path, action: body.action ?? (req.query as Record<string, unknown> | undefined)?.action });
        if (manual?.kind !== 'scan') throw new Error('manual recognizer returned no scan');
        return withReadiness(await submitIntent({ ...manual, source: 'API', event: 'API' }, deps, req.log, req.ip), deps);
      } catch (err) {
        if (err instanceof PayloadError || err instanceof PathProblem) {
          deps.metrics?.request('API', 'rejected');
          return reply.code(400).send({ error: err.message.replace(/^filepath/, 'path') });
        }
        throw err;
      }
    },

    retry: async (req: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) => {
      const id = parseOr400(idSchema, req.params.id, reply, 'scan id');
      if (id === undefined) return reply;
      const entry = await deps.store.view.get(id);
      if (!entry) return reply.code(404).send({ error: `no scan with id ${id}` });
      if (!(await deps.store.retryNow(id))) return reply.code(409).send({ error: `scan ${id} is ${entry.status}: only pending, active or failed scans can be retried` });
      deps.onQueued?.();
      req.log.info({ client: req.ip, scan: id, folder: entry.folder }, 'scan retry requested');
      return { id, status: 'retrying' };
    },

    cancel: async (req: FastifyRequest<{ Params: IdParams }>, reply: FastifyReply) => {
      const id = parseOr400(idSchema, req.params.id, reply, 'scan id');
      if (id === undefined) return reply;
      const entry = await deps.store.view.get(id);
      if (!entry) return reply.code(404).send({ error: `no scan with id ${id}` });
      if (!(await deps.store.cancel(id))) {
        const why = entry.status === 'done' || entry.status === 'failed' ? `it is ${entry.status}` : 'a delivery is in flight right now';
        return reply.code(409).send({ error: `scan ${id} cannot be deleted: ${why}` });
      }
      req.log.info({ client: req.ip, scan: id, folder: entry.folder }, 'scan deleted from the queue');
      return { id, status: 'deleted' };
    },
  };
}
