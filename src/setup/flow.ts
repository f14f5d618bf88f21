import type { JsonObject } from '../config/load.ts';
import type { Config } from '../config/schema.ts';
import { callJson, messageOf, ServiceError } from './http.ts';
import { checkRelay, disableUpdaters, libraryUpdaters, pair, register, survey, testAll, triggerUrl, type ArrEntry, type SetupIO } from './run.ts';
import type { MediaServer } from './servers.ts';
import type { ConfigChanges } from './config-edit.ts';

export interface SetupRun {
  configPath: string;
  /** The file's JSON as it is (a starter config for a new file). */
  raw: JsonObject;
  /** The same, validated: the relay's secret and credentials as the running relay has them. */
  config: Config;
  servers: MediaServer[];
  arrs: ArrEntry[];
  relayUrl: string;
  plex?: ConfigChanges['plex'];
  jellyfin?: ConfigChanges['jellyfin'];
  disableLibraryUpdate: boolean;
  dryRun: boolean;
  io: SetupIO;
  /** Writes the config atomically with mode 0600. */
  write(raw: JsonObject): void;
  /** Asked once before anything changes (interactive); false stops with nothing changed. */
  confirmApply?: () => Promise<boolean>;
}

export interface RelayReload {
  reloaded: string[];
  /** Changed keys the running relay reads only at start. */
  restart: string[];
}

/**
 * Asks the running relay to take the new triggers and credentials from its config file (POST
 * /api/<secret>/setup/reload, server/setup-api.ts), with the secret and Basic credentials it runs with now.
 */
export async function reloadRelay(relayUrl: string, config: Pick<Config, 'SERVER_PASS' | 'SERVER_AUTH_USER' | 'SERVER_AUTH_PASS'>, changed: string[]): Promise<RelayReload | { error: string }> {
  const headers: Record<string, string> = {};
  if (config.SERVER_AUTH_USER || config.SERVER_AUTH_PASS) headers.authorization = `Basic ${Buffer.from(`${config.SERVER_AUTH_USER}:${config.SERVER_AUTH_PASS}`).toString('base64')}`;
  try {
    const { status, body } = await callJson({
      service: `the relay at ${relayUrl}`,
      what: 'POST /api/<secret>/setup/reload',
      method: 'POST',
      url: `${relayUrl}/api/${encodeURIComponent(config.SERVER_PASS)}/setup/reload`,
      headers,
      body: { keys: changed },
    });
    if (status === 200 && body && typeof body === 'object') return body as RelayReload;
    return { error: `HTTP ${status}${messageOf(body) ? `: ${messageOf(body)}` : ''}` };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The first trigger route the running relay refuses a Test event on (as the *arrs' save would be refused), or undefined. */
async function refusedRoute(relayUrl: string, triggers: readonly string[], user: string, pass: string): Promise<string | undefined> {
  for (const t of triggers) {
    const url = triggerUrl(relayUrl, t);
    try {
      const { status } = await callJson({
        service: `the relay at ${relayUrl}`,
        what: `POST /triggers/${t}`,
        method: 'POST',
        url,
        headers: { authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` },
        body: { eventType: 'Test' },
      });
      if (status !== 200) return `route ${url} answers HTTP ${status}`;
    } catch (err) {
      return `route ${url} fails (${(err as Error).message})`;
    }
  }
  return undefined;
}

/** `scanrelay setup`: every step in order, each said as it starts. Throws ServiceError (exit 2) before any change on bad input. */
export async function runSetup(r: SetupRun): Promise<{ restart: string[] }> {
  const { io } = r;
  if (r.arrs.length === 0) throw new ServiceError('no *arr to set up: give --sonarr URL --sonarr-key KEY (or --radarr, --lidarr, --readarr)');
  if (r.servers.length === 0) throw new ServiceError('no media server to pair with: give --plex URL --plex-token TOKEN or --jellyfin URL --jellyfin-key KEY (or set them in the config)');
  if (Object.keys(r.config.SERVER_AUTOPULSE_TRIGGERS).length) {
    throw new ServiceError("this config serves autopulse's /triggers/ routes (SERVER_AUTOPULSE_TRIGGERS): setup writes autoscan's triggers (SERVER_AUTOSCAN_TRIGGERS), which such a relay does not serve; nothing was changed");
  }
  await checkRelay(r.relayUrl, io);
  const s = await survey(r.servers, r.arrs, io);
  const hasAuth = Boolean(r.config.SERVER_AUTH_USER && r.config.SERVER_AUTH_PASS);
  const plan = await pair(s, r.servers, io, {
    raw: r.raw,
    auth: hasAuth ? { user: r.config.SERVER_AUTH_USER, pass: r.config.SERVER_AUTH_PASS } : undefined,
    ...(r.plex ? { plex: r.plex } : {}),
    ...(r.jellyfin ? { jellyfin: r.jellyfin } : {}),
  });

  const updaters = await libraryUpdaters(plan, io, { disable: r.disableLibraryUpdate, dryRun: r.dryRun });
  if (r.dryRun) {
    io.say(`Would write ${r.configPath}: ${plan.changedKeys.length ? plan.changedKeys.join(', ') : 'no change'} (every other key kept)`);
    await register(plan, r.relayUrl, io, true);
    io.say('Dry run: nothing was written and no *arr was changed (only GET requests were made).');
    return { restart: [] };
  }
  if (r.confirmApply && !(await r.confirmApply())) {
    io.say('Stopped: nothing was written and no *arr was changed.');
    return { restart: [] };
  }

  // Written before the connections: each *arr tests its connection on the relay as it saves it.
  io.say(`Writing the config ${r.configPath} (mode 600; changed: ${plan.changedKeys.join(', ') || 'nothing'}; every other key kept)`);
  if (plan.changedKeys.length) r.write(plan.raw);
  let restart: string[] = [];
  if (plan.changedKeys.length) {
    io.say(`  asking the relay at ${r.relayUrl} to load the new triggers ...`);
    const reload = await reloadRelay(r.relayUrl, r.config, plan.changedKeys);
    if ('error' in reload) {
      // The routes it serves now may still take the connections (a rerun, credentials already set): then the
      // *arrs can be set up, and only the rewrites wait for the restart.
      const refused = await refusedRoute(r.relayUrl, plan.arrs.map((a) => a.arr.trigger), plan.webhookUser, plan.webhookPass);
      if (refused) {
        throw new ServiceError(
          `the relay at ${r.relayUrl} did not load the new triggers (${reload.error}) and its ${refused}: ${r.configPath} was written, no *arr was changed; restart the relay, then run setup again to register the webhooks`,
        );
      }
      restart = plan.changedKeys;
      io.say(`  the relay did not load them (${reload.error}); its routes take the connections as they are, so setup goes on`);
    } else {
      restart = reload.restart;
      io.say(`  the relay loaded ${reload.reloaded.join(', ') || 'nothing new'} without a restart`);
    }
  }
  const registered = await register(plan, r.relayUrl, io, false);
  await disableUpdaters(updaters, io);
  await testAll(registered, plan, io);
  io.say(
    restart.length
      ? `Done. Restart the relay: it reads ${restart.join(', ')} only when it starts.`
      : 'Done. No restart needed: the running relay already uses the new triggers and rewrites.',
  );
  return { restart };
}
