import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorPage } from './pages.ts';

/** Error answers: `{"error": message}` for programs, a small page for a browser. */
export function wantsHtml(req: FastifyRequest): boolean {
  return (req.headers.accept ?? '').includes('text/html');
}

export function sendError(req: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  reply.code(status);
  if (wantsHtml(req)) return reply.type('text/html; charset=utf-8').send(errorPage(status, message));
  return reply.send({ error: message });
}

/**
 * plex_autoscan answers the page with 401 when manual scans are off (scan.py:279-282) and still takes POSTs
 * to the same URL (scan.py:313) and its /api/<pass> commands (scan.py:242); so do we, and the answer says
 * what still works and where, so a user does not think the relay is down.
 */
export function manualScanOff(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const secret = (req.params as { secret?: string } | undefined)?.secret;
  const here = secret === undefined ? '/<SERVER_PASS>' : `/${encodeURIComponent(secret)}`;
  return sendError(
    req,
    reply,
    401,
    'the manual scan page is off (SERVER_ALLOW_MANUAL_SCAN is false; set it to true to use this page). Still working: ' +
      `webhooks and scripts that POST to ${here} (Sonarr, Radarr, Lidarr, Readarr; eventType=Manual with filepath), ` +
      `the JSON API under /api${here}/ (queue, history, scan, map) and plex_autoscan's commands at /api${here}?cmd=... (docs/dashboard.md)`,
  );
}
