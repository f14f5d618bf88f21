import { readFileSync } from 'node:fs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { UserError } from '../core/errors.ts';
import { loadConfigFile, parseJsonText } from '../config/load.ts';
import { writeSetupConfig } from '../setup/config-edit.ts';
import type { Config } from '../config/schema.ts';
import { ArrClient, ARR_KINDS, type ArrKind } from '../setup/arr.ts';
import { baseUrl } from '../setup/http.ts';
import { checkRelay, disableUpdaters, libraryUpdaters, pair, register, survey, testAll, triggerUrl, type ArrEntry, type Plan, type SetupIO } from '../setup/run.ts';
import { configuredServers } from '../setup/servers.ts';
import type { PluginDeps } from './deps.ts';
import { escapeHtml as esc } from './pages.ts';
import { applyLive } from './live-config.ts';

const SCRIPT = readFileSync(new URL('./dashboard/assets/connect.js', import.meta.url), 'utf8');

type SecretParams = { secret: string };

/** An *arr on the Connect page: a TARGETS entry by name (its key stays on the relay), or one typed in. */
const arrSchema = z.union([
  z.object({ target: z.string().min(1) }),
  z.object({ kind: z.enum(ARR_KINDS), url: z.string().min(1, 'the URL is missing'), key: z.string().min(1, 'the API key is missing') }),
]);
const bodySchema = z.object({
  relayUrl: z.string().min(1, 'how the *arrs reach the relay is missing'),
  arrs: z.array(arrSchema).min(1, 'pick or add at least one *arr'),
  disableLibraryUpdate: z.boolean().default(false),
});
type Body = z.infer<typeof bodySchema>;

/** The *arrs among TARGETS (Sonarr and Radarr targets carry their URL and key). */
function configuredArrs(config: Config): Array<{ name: string; kind: ArrKind; url: string; key: string }> {
  return Object.entries(config.TARGETS).flatMap(([name, t]) =>
    (t.TYPE === 'sonarr' || t.TYPE === 'radarr') && 'URL' in t ? [{ name, kind: t.TYPE as ArrKind, url: String(t.URL), key: String((t as { API_KEY?: string }).API_KEY ?? '') }] : [],
  );
}

/** The *arrs of a request, each with its trigger name (sonarr, sonarr-2, ... in order, as `scanrelay setup` names them). */
function arrsOf(body: Body, config: Config): ArrEntry[] {
  const known = configuredArrs(config);
  const count: Record<string, number> = {};
  return body.arrs.map((a) => {
    const spec = 'target' in a ? known.find((k) => k.name === a.target) : a;
    if (!spec) throw new UserError(`no Sonarr or Radarr target named "${(a as { target: string }).target}" in TARGETS`);
    const n = (count[spec.kind] = (count[spec.kind] ?? 0) + 1);
    return { client: new ArrClient(spec.kind, spec.url, spec.key), trigger: n === 1 ? spec.kind : `${spec.kind}-${n}` };
  });
}

/** The pairings as the page shows them: each root with a sample path before and after. */
function pairingsView(plan: Plan) {
  return plan.arrs.map((p) => ({
    label: p.arr.client.label,
    service: p.arr.client.service,
    trigger: p.arr.trigger,
    pairings: p.pairings.map((x) => {
      const sample = p.samples.find((s) => s.root === x.root);
      if (x.status === 'paired') return { root: x.root, status: x.status, library: x.location.library, location: x.location.path, before: sample?.before, after: sample?.after };
      if (x.status === 'ambiguous') return { root: x.root, status: x.status, candidates: x.candidates.map((c) => `${c.library} (${c.path})`) };
      return { root: x.root, status: x.status };
    }),
  }));
}

/**
 * What answers the dashboard's Connect page (setup-api.ts declares its routes, and says what each does), built at
 * its first request.
 */
export function connectHandlers(deps: PluginDeps) {
  const run = async (raw: unknown, apply: boolean) => {
    const parsed = bodySchema.safeParse(raw);
    if (!parsed.success) throw new UserError(parsed.error.issues[0]?.message ?? 'invalid request');
    const body = parsed.data;
    if (apply && !deps.configPath) throw new UserError('this relay does not know its config file: run "scanrelay setup" instead');
    const lines: string[] = [];
    const io: SetupIO = { say: (l) => lines.push(l) };
    const servers = configuredServers(deps.config);
    if (servers.length === 0) throw new UserError('no media server is configured (PLEX_TOKEN, JELLYFIN or EMBY): add one first');
    const arrs = arrsOf(body, deps.config);
    const relayUrl = baseUrl(body.relayUrl, 'the relay URL');
    await checkRelay(relayUrl, io);
    const s = await survey(servers, arrs, io);
    const file = deps.configPath ? parseJsonText(readFileSync(deps.configPath, 'utf8'), deps.configPath) : {};
    const hasAuth = Boolean(deps.config.SERVER_AUTH_USER && deps.config.SERVER_AUTH_PASS);
    const plan = await pair(s, servers, io, { raw: file, auth: hasAuth ? { user: deps.config.SERVER_AUTH_USER, pass: deps.config.SERVER_AUTH_PASS } : undefined });
    const updaters = await libraryUpdaters(plan, io, { disable: body.disableLibraryUpdate, dryRun: !apply });
    if (!apply) {
      await register(plan, relayUrl, io, true);
      return { lines, servers: s.locations, arrs: pairingsView(plan) };
    }
    if (plan.changedKeys.length) {
      io.say(`Writing the config ${deps.configPath} (mode 600; changed: ${plan.changedKeys.join(', ')})`);
      writeSetupConfig(deps.configPath!, plan.raw);
      const taken = applyLive(deps.config, loadConfigFile(deps.configPath!).config);
      io.say(`  this relay took ${taken.join(', ') || 'nothing new'} at once`);
    }
    const registered = await register(plan, relayUrl, io, false);
    await disableUpdaters(updaters, io);
    await testAll(registered, plan, io);
    return { lines, servers: s.locations, arrs: pairingsView(plan), webhooks: registered.map((r) => ({ label: r.arr.client.label, action: r.action, url: triggerUrl(relayUrl, r.arr.trigger) })) };
  };

  return {
    page: async (req: FastifyRequest<{ Params: SecretParams }>, reply: FastifyReply) => {
      const host = req.headers.host ?? `127.0.0.1:${deps.config.SERVER_PORT}`;
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(renderConnect(req.params.secret, deps.config, `${req.protocol}://${host}`));
    },
    script: async (_req: FastifyRequest, reply: FastifyReply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SCRIPT),
    /** `connect/plan` (apply false) and `connect/apply`. */
    run: async (req: FastifyRequest, reply: FastifyReply, apply: boolean) => {
      try {
        return await run(req.body, apply);
      } catch (err) {
        if (err instanceof UserError) return reply.code(400).send({ error: err.message });
        throw err;
      }
    },
  };
}

function renderConnect(secret: string, config: Config, origin: string): string {
  const s = encodeURIComponent(secret);
  const servers = configuredServers(config);
  const arrs = configuredArrs(config);
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>scanrelay: Connect</title><link rel="stylesheet" href="dashboard.css"></head>
<body><main id="connect" data-api="../api/${esc(s)}/connect/">
<header><h1>Connect <small class="muted"><a href="../${esc(s)}">back to the dashboard</a></small></h1></header>
<section class="card" aria-labelledby="servers-heading">
<h2 id="servers-heading">Media servers</h2>
${servers.length ? `<ul id="servers">${servers.map((x) => `<li>${esc(x.service)}</li>`).join('')}</ul>` : '<p class="error">No media server is configured: set PLEX_TOKEN (or JELLYFIN / EMBY) first.</p>'}
</section>
<section class="card" aria-labelledby="arrs-heading">
<h2 id="arrs-heading">*arrs</h2>
<form id="connect-form">
${arrs.map((a) => `<label><input type="checkbox" name="target" value="${esc(a.name)}" checked> ${esc(a.name)}: ${esc(a.kind)} at ${esc(a.url)}</label><br>`).join('')}
<fieldset><legend>Add an *arr</legend>
<label>Kind <select id="arr-kind">${ARR_KINDS.map((k) => `<option value="${k}">${k}</option>`).join('')}</select></label>
<label>URL <input type="url" id="arr-url" placeholder="http://sonarr:8989" autocomplete="off"></label>
<label>API key <input type="password" id="arr-key" autocomplete="off"></label>
</fieldset>
<label>How the *arrs reach this relay <input type="url" id="relay-url" value="${esc(origin)}" required></label><br>
<label><input type="checkbox" id="disable-update"> Turn off "Update Library" on the *arrs' own Plex/Emby/Jellyfin connections</label><br>
<button type="button" id="connect-plan">Show pairings</button>
<button type="button" id="connect-apply">Register webhooks and test</button>
</form>
</section>
<section class="card" aria-labelledby="pairings-heading">
<h2 id="pairings-heading">Pairings</h2>
<table id="pairings"><thead><tr><th>*arr</th><th>Root folder</th><th>Library</th><th>Sample before</th><th>Sample after</th></tr></thead><tbody></tbody></table>
<p id="connect-result" role="status" aria-live="polite"></p>
<pre id="connect-log"></pre>
</section>
</main>
<script src="connect.js" defer></script>
</body></html>`;
}
