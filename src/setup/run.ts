import { randomBytes } from 'node:crypto';
import type { JsonObject } from '../config/load.ts';
import { bestByItems, isInside, locationOf, pairByName, rewriteFor, type LibraryLocation, type Pairing } from '../paths/pairing.ts';
import type { RewriteRule } from '../paths/rewrite.ts';
import { placeRewriter } from '../paths/rewrite.ts';
import { fieldValue, LIBRARY_UPDATERS, webhookConnection, withField, type ArrClient, type Connection } from './arr.ts';
import { editConfig, type ConfigChanges } from './config-edit.ts';
import { callJson, ServiceError } from './http.ts';
import type { MediaServer } from './servers.ts';

/** How setup talks: each step's lines, and (interactive only) its questions. */
export interface SetupIO {
  say(line: string): void;
  /** Absent with --yes: an ambiguous root is then reported and skipped. Returns the index picked, or -1 for none. */
  choose?(question: string, choices: string[]): Promise<number>;
  confirm?(question: string, defaultYes: boolean): Promise<boolean>;
}

export interface ArrEntry {
  client: ArrClient;
  /** Its trigger's name: /triggers/<name>, SERVER_AUTOSCAN_TRIGGERS.<name>. */
  trigger: string;
}

/** What the services said (step 1). */
export interface Survey {
  locations: LibraryLocation[];
  arrs: Array<ArrEntry & { roots: string[]; items: string[] }>;
}

export interface ArrPlan {
  arr: ArrEntry & { roots: string[]; items: string[] };
  pairings: Pairing[];
  rules: RewriteRule[];
  /** A sample of the manager's own paths and where it lands: first item under each paired root. */
  samples: Array<{ root: string; before: string; after: string; library?: string }>;
}

export interface Plan {
  arrs: ArrPlan[];
  changes: ConfigChanges;
  raw: JsonObject;
  changedKeys: string[];
  webhookUser: string;
  webhookPass: string;
  /** The first media server's library locations: where the relay's scans land. */
  locations: LibraryLocation[];
}

/** Checks the relay answers at the URL the *arrs will use, before anything else (they test a connection as it is saved). */
export async function checkRelay(relayUrl: string, io: SetupIO, timeoutMs?: number): Promise<void> {
  io.say(`Checking that the relay answers at ${relayUrl} ...`);
  let status = 0;
  try {
    // /health is autoscan's route; /healthz is always there (also when autopulse's routes replace autoscan's).
    for (const path of ['/health', '/healthz']) {
      ({ status } = await callJson({ service: `the relay at ${relayUrl}`, what: `GET ${path}`, url: `${relayUrl}${path}`, timeoutMs }));
      if (status === 200) return;
    }
  } catch (err) {
    throw new ServiceError(`${(err as Error).message}; start the relay first: the *arrs test a Webhook connection when it is saved, so nothing was changed`);
  }
  throw new ServiceError(`the relay at ${relayUrl}: GET /healthz answered HTTP ${status}; start the relay (or fix --relay-url) first: nothing was changed`);
}

/** Step 1: the media servers' library locations and each manager's root folders (only GETs). */
export async function survey(servers: readonly MediaServer[], arrs: readonly ArrEntry[], io: SetupIO): Promise<Survey> {
  io.say('Reading library locations and root folders');
  const locations: LibraryLocation[] = [];
  for (const s of servers) {
    io.say(`  waiting for ${s.service} (library locations) ...`);
    const found = await s.locations();
    io.say(`  ${s.service}: ${found.length ? found.map((l) => `${l.library} ${l.path}`).join(', ') : 'no library locations'}`);
    locations.push(...found);
  }
  const out: Survey['arrs'] = [];
  for (const a of arrs) {
    io.say(`  waiting for ${a.client.service} (status, root folders) ...`);
    await a.client.status();
    const roots = await a.client.rootFolders();
    const items = await a.client.itemFolders();
    io.say(`  ${a.client.service}: root folders ${roots.length ? roots.join(', ') : '(none)'}`);
    out.push({ ...a, roots, items });
  }
  return { locations, arrs: out };
}

/** Step 2: pairs every root with a library location and makes its trigger's rewrite. */
export async function pair(s: Survey, servers: readonly MediaServer[], io: SetupIO, base: { raw: JsonObject; auth: { user: string; pass: string } | undefined; plex?: ConfigChanges['plex']; jellyfin?: ConfigChanges['jellyfin'] }): Promise<Plan> {
  io.say('Pairing root folders with library locations');
  // The first server's paths are the ones the relay scans; another server sees the same folders through its own REWRITE.
  const primary = servers[0]?.name;
  const locations = s.locations.filter((l) => l.server === primary);
  const serverItems = new Map<LibraryLocation, readonly string[]>();
  const plans: ArrPlan[] = [];
  for (const arr of s.arrs) {
    const pairings: Pairing[] = [];
    for (let p of pairByName(arr.roots, locations)) {
      if (p.status === 'ambiguous') {
        const server = servers.find((x) => x.name === primary)!;
        // Items only help: a server that will not list them leaves the question to the user.
        for (const c of p.candidates) if (!serverItems.has(c)) serverItems.set(c, await server.itemPaths(c.libraryId).catch(() => []));
        const under = arr.items.filter((i) => isInside(i, p.root));
        const chosen = bestByItems(under, p.candidates, serverItems);
        if (chosen) p = { root: p.root, status: 'paired', location: chosen, by: 'items' };
        else if (io.choose) {
          const names = p.candidates.map((c) => `${c.library} (${c.path})`);
          const i = await io.choose(`${arr.client.label} root folder ${p.root} could be in two libraries: which one holds it?`, [...names, 'neither: no rewrite']);
          if (i >= 0 && i < p.candidates.length) p = { root: p.root, status: 'paired', location: p.candidates[i]!, by: 'answer' };
        }
      }
      pairings.push(p);
    }
    const rules: RewriteRule[] = [];
    const samples: ArrPlan['samples'] = [];
    for (const p of pairings) {
      if (p.status === 'unmatched') io.say(`  ${arr.client.label} root ${p.root}: no library holds it (no folder name in common with ${locations.map((l) => l.path).join(', ') || 'any library'}); no rewrite`);
      else if (p.status === 'ambiguous') {
        const how = io.choose ? 'neither was chosen' : 'run setup without --yes to choose';
        io.say(`  ${arr.client.label} root ${p.root}: claimed by ${p.candidates.map((c) => `${c.library} (${c.path})`).join(' and ')}; skipped (${how})`);
      }
      else {
        const rule = rewriteFor(p.root, p.location.path);
        const same = p.root.replace(/\/+$/, '') === p.location.path.replace(/\/+$/, '');
        if (!same) rules.push(rule);
        const rewrite = placeRewriter([rule])!;
        const item = arr.items.find((i) => isInside(i, p.root)) ?? `${p.root.replace(/\/+$/, '')}/Example`;
        const after = same ? item : rewrite(item);
        samples.push({ root: p.root, before: item, after, library: p.location.library });
        io.say(
          `  ${arr.client.label} root ${p.root} -> ${p.location.library} ${p.location.path}${p.by === 'items' ? ' (by its items)' : ''}: ` +
            (same ? 'same path, no rewrite' : `rewrite ${rule.from} -> ${rule.to}`) +
            `; e.g. ${item} -> ${after}`,
        );
      }
    }
    plans.push({ arr, pairings, rules, samples });
  }
  const auth = base.auth ?? { user: 'scanrelay', pass: randomBytes(18).toString('base64url') };
  const changes: ConfigChanges = {
    // A root left ambiguous keeps the rule an earlier (interactive) run wrote for it.
    triggers: plans.map((p) => ({ name: p.arr.trigger, roots: p.pairings.filter((x) => x.status !== 'ambiguous').map((x) => x.root), rules: p.rules })),
    ...(base.auth ? {} : { auth }),
    ...(base.plex ? { plex: base.plex } : {}),
    ...(base.jellyfin ? { jellyfin: base.jellyfin } : {}),
  };
  if (changes.auth) {
    io.say(
      `  the /triggers/ routes need SERVER_AUTH_USER and SERVER_AUTH_PASS: setup sets them (user "${auth.user}", the password is SERVER_AUTH_PASS in the config file); ` +
        'from then on the relay asks every client for them (Basic auth), the dashboard too',
    );
  }
  const edited = editConfig(base.raw, changes);
  return { arrs: plans, changes, raw: edited.raw, changedKeys: edited.changed, webhookUser: auth.user, webhookPass: auth.pass, locations };
}

/** The URL an *arr's Webhook connection posts to: its trigger's route on the relay. */
export function triggerUrl(relayUrl: string, trigger: string): string {
  return `${relayUrl}/triggers/${encodeURIComponent(trigger)}`;
}

export interface Registered {
  arr: ArrPlan['arr'];
  connection: Connection;
  action: 'added' | 'updated';
}

/** The Webhook connection this relay registered earlier in this *arr, found by its URL. */
export function findOurs(connections: readonly Connection[], url: string): Connection | undefined {
  return connections.find((c) => c.implementation === 'Webhook' && fieldValue(c, 'url') === url);
}

/** A connection name not used by another connection (the *arrs refuse a duplicate name, ProviderControllerBase.cs:45). */
function freeName(connections: readonly Connection[], wanted: string, self?: number): string {
  const taken = (n: string) => connections.some((c) => c.name.toLowerCase() === n.toLowerCase() && c.id !== self);
  if (!taken(wanted)) return wanted;
  for (let i = 2; ; i++) if (!taken(`${wanted} ${i}`)) return `${wanted} ${i}`;
}

/** Step 3: one Webhook connection per *arr, added or updated (a rerun finds it by its URL). */
export async function register(plan: Plan, relayUrl: string, io: SetupIO, dryRun: boolean): Promise<Registered[]> {
  io.say('Registering the Webhook connection in each *arr');
  const out: Registered[] = [];
  for (const p of plan.arrs) {
    const client = p.arr.client;
    const url = triggerUrl(relayUrl, p.arr.trigger);
    const existing = await client.connections();
    const ours = findOurs(existing, url);
    const template = await client.webhookTemplate();
    const wanted = webhookConnection(ours ?? template, {
      kind: client.kind,
      name: ours?.name ?? freeName(existing, 'scanrelay'),
      url,
      username: plan.webhookUser,
      password: plan.webhookPass,
    });
    if (ours) wanted.id = ours.id;
    if (dryRun) {
      io.say(`  ${client.label}: would ${ours ? `update connection "${ours.name}" (id ${ours.id})` : 'add a Webhook connection'} -> POST ${url}`);
      out.push({ arr: p.arr, connection: wanted, action: ours ? 'updated' : 'added' });
      continue;
    }
    io.say(`  waiting for ${client.service} (${ours ? 'update' : 'add'} the Webhook connection; it tests it on the relay) ...`);
    if (ours) {
      await client.update(wanted, 'PUT notification (update the Webhook connection)');
      io.say(`  ${client.label}: updated connection "${wanted.name}" (id ${ours.id}) -> POST ${url}`);
      out.push({ arr: p.arr, connection: { ...wanted, id: ours.id }, action: 'updated' });
    } else {
      const saved = await client.create(wanted);
      io.say(`  ${client.label}: added connection "${wanted.name}" (id ${saved?.id ?? '?'}) -> POST ${url}`);
      // What was sent, with the id it got: an *arr may answer its password field masked.
      out.push({ arr: p.arr, connection: { ...wanted, ...(typeof saved?.id === 'number' ? { id: saved.id } : {}) }, action: 'added' });
    }
  }
  return out;
}

export interface UpdaterDecision {
  client: ArrClient;
  connection: Connection;
  disable: boolean;
}

/**
 * Step 4, decided before anything changes: each *arr's own media-server connection that still updates the library
 * (PlexServer, MediaBrowser = Emby/Jellyfin), turned off with --disable-arr-library-update or a yes at the
 * question, else left alone with a line saying each import is scanned twice.
 */
export async function libraryUpdaters(plan: Plan, io: SetupIO, opts: { disable: boolean; dryRun: boolean }): Promise<UpdaterDecision[]> {
  io.say("Checking the *arrs' own media-server connections");
  const out: UpdaterDecision[] = [];
  for (const p of plan.arrs) {
    const client = p.arr.client;
    const updaters = (await client.connections()).filter((c) => LIBRARY_UPDATERS.includes(c.implementation) && fieldValue(c, 'updateLibrary') === true);
    if (updaters.length === 0) io.say(`  ${client.label}: no connection of its own updates a media server's library`);
    for (const c of updaters) {
      const what = `${client.label}'s connection "${c.name}" (${c.implementation})`;
      let disable = opts.disable;
      if (!disable && io.confirm) disable = await io.confirm(`${what} also tells the server to scan after each import. Turn its "Update Library" off (the relay scans)?`, true);
      if (!disable) io.say(`  ${what} still updates the library: each import will be scanned twice (by ${client.label} and by the relay); --disable-arr-library-update turns it off`);
      else if (opts.dryRun) io.say(`  ${what}: would set updateLibrary false`);
      else io.say(`  ${what}: will set updateLibrary false`);
      out.push({ client, connection: c, disable });
    }
  }
  return out;
}

/** Turns Update Library off where it was decided. */
export async function disableUpdaters(decisions: readonly UpdaterDecision[], io: SetupIO): Promise<void> {
  const todo = decisions.filter((d) => d.disable);
  if (!todo.length) return;
  io.say('Turning off Update Library');
  for (const d of todo) {
    // forceSave: saving must not depend on the *arr reaching its media server now (ProviderControllerBase.cs:98-117).
    await d.client.update(withField(d.connection, 'updateLibrary', false), 'PUT notification (turn off Update Library)', true);
    io.say(`  ${d.client.label}'s connection "${d.connection.name}" (${d.connection.implementation}): updateLibrary set to false`);
  }
}

/** Step 5: the *arr sends its Test event to the relay again; and where a real import of its first item would land. */
export async function testAll(registered: readonly Registered[], plan: Plan, io: SetupIO): Promise<void> {
  io.say('Testing each connection');
  for (const r of registered) {
    const client = r.arr.client;
    io.say(`  waiting for ${client.service} (POST notification/test to the relay) ...`);
    await client.test(r.connection);
    io.say(`  ${client.label}: the relay received the test (${client.label} sent its Test event to ${fieldValue(r.connection, 'url')})`);
    const ap = plan.arrs.find((p) => p.arr === r.arr);
    const first = r.arr.items[0];
    if (!first) {
      io.say(`  ${client.label} has no items yet: nothing to show`);
      continue;
    }
    const rewrite = placeRewriter(ap?.rules);
    const after = rewrite ? rewrite(first) : first;
    const library = locationOf(after, plan.locations);
    io.say(
      library
        ? `  a real import of ${first} would scan ${after} in library ${library.library}`
        : `  a real import of ${first} would reach the relay as ${after}, in no library (its root folder has no rewrite)`,
    );
  }
}

