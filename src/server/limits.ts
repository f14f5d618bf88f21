import { readFileSync } from 'node:fs';
import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Timeouts for slow clients: every request must be whole within 30 s, headers within 10 s. */
export const TIMEOUTS = {
  headersMs: 10_000,
  requestMs: 30_000,
  /** An idle socket (nothing received or sent) is closed after this. */
  idleMs: 60_000,
  keepAliveMs: 5_000,
  /** How often node checks the two limits above (its default, 30 s, would let a request live 60 s). */
  checkEveryMs: 1_000,
} as const;

/** The soft limit on open files of this process, from /proc/self/limits (Linux); undefined elsewhere. */
export function softFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (!m || m[1] === 'unlimited') return undefined;
  return Number(m[1]);
}

/**
 * How many client connections to hold open: below the file limit, leaving room for the queue file, the
 * log, the drive cache, connections to the media servers and the scanner's pipes.
 */
export function connectionCap(fileLimit: number | undefined): number {
  if (fileLimit === undefined) return 4096;
  const reserve = Math.max(64, Math.floor(fileLimit / 8));
  return Math.max(16, Math.min(fileLimit - reserve, 16_384));
}

/**
 * Keeps room for new clients when the cap is reached: the oldest connection that is not serving a request
 * (still sending its headers, or idle between keep-alive requests) is closed, so a crowd of slow clients
 * cannot lock out a real webhook. node's own `maxConnections` stays as a hard backstop just above the cap.
 */
export function shedSlowConnections(server: Server, cap: number): { open(): number } {
  const sockets = new Set<Socket>();
  const busy = new WeakSet<Socket>();
  server.maxConnections = cap + 8;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (sockets.size <= cap) return;
    for (const old of sockets) {
      if (old === socket || busy.has(old)) continue;
      sockets.delete(old);
      old.destroy();
      if (sockets.size <= cap) break;
    }
  });
  server.on('request', (req: { socket: Socket }, res: ServerResponse) => {
    const socket = req.socket;
    busy.add(socket);
    res.once('close', () => busy.delete(socket));
  });
  return { open: () => sockets.size };
}

/** Bodies up to this size that are over the limit are read to the end and thrown away (see below). */
export const DRAIN_OVERSIZE_LIMIT = 16 * 1024 * 1024;

/**
 * An oversized body that a client is still sending: fastify answers 413 and closes the connection at
 * once, and a client still writing then often sees a reset (EPIPE) instead of the 413 and its message.
 * Up to DRAIN_OVERSIZE_LIMIT (and within the 30 s request timeout) the rest is read and discarded, so
 * the answer arrives; larger declared bodies still get the hang-up.
 */
export function drainOversizedBody(raw: { headers: Record<string, string | string[] | undefined>; resume(): unknown }, reply: { removeHeader(name: string): unknown }): void {
  const declared = Number(raw.headers['content-length']);
  if (Number.isFinite(declared) && declared > DRAIN_OVERSIZE_LIMIT) return;
  reply.removeHeader('connection');
  raw.resume();
}
