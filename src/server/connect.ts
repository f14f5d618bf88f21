import type { FastifyInstance } from 'fastify';
import type { PluginDeps } from './deps.ts';

/** The dashboard's Connect page (filled in below). */
export async function connectRoutes(_app: FastifyInstance, _deps: PluginDeps): Promise<void> {}
