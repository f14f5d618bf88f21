import type { FastifyInstance } from 'fastify';
import { UserError } from '../core/errors.ts';
import { loadConfigFile } from '../config/load.ts';
import { targetOfServerKey } from '../config/named-targets.ts';
import type { Config } from '../config/schema.ts';
import type { PluginDeps } from './deps.ts';
import { onFirstUse } from './first-use.ts';
import { applyLive, LIVE_KEYS } from './live-config.ts';

/**
 * `scanrelay setup` support: POST /api/<secret>/setup/reload has the running relay read its config file again and
 * take the live keys (triggers and their rewrites, the /triggers/ credentials). It answers which of the keys the
 * caller changed still need a restart. Like every API route: the secret, and Basic auth when configured.
 */
export async function setupPlugin(app: FastifyInstance, deps: PluginDeps): Promise<void> {
  app.post<{ Params: { secret: string }; Body: { keys?: unknown } }>('/api/:secret/setup/reload', { onRequest: deps.guards.secret }, async (req, reply) => {
    if (!deps.configPath) return reply.code(409).send({ error: 'this relay does not know its config file: restart it to load the new settings' });
    let fresh: Config;
    try {
      fresh = loadConfigFile(deps.configPath).config;
    } catch (err) {
      if (err instanceof UserError) return reply.code(400).send({ error: err.message });
      throw err;
    }
    const reloaded = applyLive(deps.config, fresh);
    const keys = Array.isArray(req.body?.keys) ? req.body.keys.filter((k): k is string => typeof k === 'string') : [];
    // A key of a plex_autoscan server (PLEX_TOKEN, JELLYFIN) is a target of the relay's config: compared as that target.
    const valueOf = (config: Config, key: string) => {
      const target = targetOfServerKey(key);
      return target ? config.targets.get(target) : (config as Record<string, unknown>)[key];
    };
    const restart = keys.filter((k) => !(LIVE_KEYS as readonly string[]).includes(k) && JSON.stringify(valueOf(fresh, k)) !== JSON.stringify(valueOf(deps.config, k)));
    req.log.info({ reloaded, restart }, `scanrelay setup: took ${reloaded.join(', ') || 'nothing new'} from ${deps.configPath}${restart.length ? `; ${restart.join(', ')} need a restart` : ''}`);
    return { reloaded, restart };
  });

  // The dashboard's Connect page: what `scanrelay setup --yes` does, from the browser. GET shows the media servers
  // and *arrs the config has; `connect/plan` reads and pairs (only GET requests to the services); `connect/apply`
  // writes the config, has this relay take the new triggers at once, registers or updates each *arr's Webhook
  // connection and runs its test. Both need the secret (and Basic auth when set) and a same-origin request
  // (browser.ts refuses a cross-site POST), like every dashboard action. What answers them (connect.ts, with the
  // setup wizard's steps in setup/) is loaded with the first request.
  const connect = onFirstUse(async () => (await import('./connect.ts')).connectHandlers(deps));
  const guard = { onRequest: deps.guards.secret };
  app.get<{ Params: { secret: string } }>('/:secret/connect', guard, async (req, reply) => (await connect()).page(req, reply));
  app.get<{ Params: { secret: string } }>('/:secret/connect.js', guard, async (req, reply) => (await connect()).script(req, reply));
  app.post<{ Params: { secret: string } }>('/api/:secret/connect/plan', guard, async (req, reply) => (await connect()).run(req, reply, false));
  app.post<{ Params: { secret: string } }>('/api/:secret/connect/apply', guard, async (req, reply) => (await connect()).run(req, reply, true));
}
