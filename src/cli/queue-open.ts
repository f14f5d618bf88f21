import { hostname } from 'node:os';
import { configExists, loadConfigFile, parseConfig } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import type { Settings } from '../config/settings.ts';
import type { QueueBackend } from '../queue/backend.ts';
import { openQueue } from '../queue/open.ts';

/**
 * The config a queue command reads: the file when there is one, else the defaults, with the environment's
 * overrides either way, so SERVER_QUEUE_URL in the environment alone points the command at a shared queue.
 */
export function queueConfigOf(settings: Settings): Config {
  return configExists(settings.config) ? loadConfigFile(settings.config).config : parseConfig({}, process.env, 'environment').config;
}

/**
 * The queue the relay with this config uses (queue/open.ts): PostgreSQL with SERVER_QUEUE_URL, else the file at
 * --queuefile. A command is named in PostgreSQL as <hostname>:<command> (pg_stat_activity).
 */
export function openCommandQueue(
  settings: Settings,
  config: Pick<Config, 'SERVER_QUEUE_URL' | 'SERVER_QUEUE_LEASE'>,
  command: string,
  opts: { readOnly?: boolean } = {},
): Promise<QueueBackend> {
  return openQueue(config, settings.queuefile, { relayId: `${hostname()}:${command}`, ...opts });
}
