import { readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PluginDeps } from '../deps.ts';
import { sendError } from '../reply.ts';
import { dropEmpty, historyQuerySchema, scanViewOf, relayTargetNames, statusSource, type HistoryQuery } from './data.ts';
import { EventFeed } from './events.ts';
import { renderDashboard, renderHistory, renderQueue, renderStatus, type PageParts } from './render.ts';

// Hand-written, served as they are: no bundler, no CDN, nothing built at run time.
const SCRIPT = readFileSync(new URL('./assets/dashboard.js', import.meta.url), 'utf8');
const STYLE = readFileSync(new URL('./assets/dashboard.css', import.meta.url), 'utf8');

type Req = FastifyRequest<{ Params: { secret: string } }>;

/** Open scans the dashboard lists (the JSON API pages through all of them). */
const DASHBOARD_ROWS = 200;

/** What answers the dashboard's routes (index.ts declares them), built at its first request. */
export function dashboardHandlers(deps: PluginDeps) {
  const every = relayTargetNames(deps);
  const status = statusSource(deps);
  const filterOf = (query: unknown): HistoryQuery => {
    const parsed = historyQuerySchema.safeParse(dropEmpty(query));
    return parsed.success ? { ...parsed.data, limit: Math.min(parsed.data.limit, 200) } : { limit: 100, offset: 0 };
  };
  const parts = async (filter: HistoryQuery): Promise<PageParts> => {
    const now = Date.now();
    // The first DASHBOARD_ROWS open scans (the count says how many there are): the page stays small and
    // quick to build whatever the backlog.
    const open = (await deps.store.view.listOpen(DASHBOARD_ROWS)).map(scanViewOf(every));
    return {
      status: renderStatus(await status(), now),
      queue: renderQueue(open, now),
      queueCount: await deps.store.countOpen(),
      history: renderHistory((await deps.store.view.listHistory(filter)).map(scanViewOf(every)), now),
    };
  };
  // The page's event stream (events.ts): it refreshes on each event instead of every few seconds.
  const feed = new EventFeed(deps.store);

  return {
    page: async (req: Req, reply: FastifyReply) => {
      const filter = filterOf(req.query);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(renderDashboard(req.params.secret, filter, await parts(filter)));
    },
    // What the script swaps in on each refresh: the same HTML the page was rendered with.
    parts: async (req: Req, reply: FastifyReply) => {
      const q = historyQuerySchema.safeParse(dropEmpty(req.query));
      if (!q.success) return sendError(req, reply, 400, `history filter: ${q.error.issues[0]?.message ?? 'invalid'}`);
      return reply.header('cache-control', 'no-store').send(await parts(filterOf(req.query)));
    },
    events: async (_req: Req, reply: FastifyReply) => {
      reply.hijack();
      await feed.attach(reply.raw);
    },
    script: async (_req: Req, reply: FastifyReply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SCRIPT),
    style: async (_req: Req, reply: FastifyReply) => reply.type('text/css; charset=utf-8').header('cache-control', 'no-cache').send(STYLE),
    close: () => feed.close(),
  };
}

export type DashboardHandlers = ReturnType<typeof dashboardHandlers>;
