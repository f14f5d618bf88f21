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

/** plex_autoscan answers the page with 401 when manual scans are off; so do we. */
export function manualScanOff(req: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(req, reply, 401, 'manual scans are off (SERVER_ALLOW_MANUAL_SCAN is false)');
}
