/*
 * The layering the code keeps (README "How it works"): imports run one way,
 *   cli / server  ->  triggers  ->  intake  ->  queue  ->  targets
 * and beside them, used by cli / server only, notify (src/notify: reads the queue's outbox, sends notifications).
 * with config, paths, core (shared types), google (Google sign-in, the Drive client and rclone.conf), db, fs and log
 * below them all. The ground floor has floors of its own, each importing only those beneath it:
 *   config  ->  google  ->  paths, fs, db, log  ->  core The counters
 * (src/metrics) read the queue's figures and are fed by the intake and the server: between the two.
 * src/setup (`scanrelay setup` and the dashboard's Connect page: the *arrs' and media servers' management APIs) is
 * used by cli / server only, and uses only the foundations.
 * A peer (src/peers/<peer>/: plex-autoscan, autoscan, autopulse) is one folder across the layers: each of its files
 * is in the layer its name says (PEER_FILES), and every rule below holds for it as for a file in that layer's folder.
 * A trigger's HTTP routes live with it, triggers/<name>/routes.ts, but are its HTTP edge: they stand in the server
 * layer (TRIGGER_FILES), as a peer's routes.ts does, and may use the server's helpers; the rest of triggers/ may not.
 * A target kind is one folder, targets/<kind>/, but its config schema (targets/<kind>/schema.ts, the shared
 * targets/*-schema.ts such as the list of kinds, kinds-schema.ts) is config-level: the config builds its TARGETS union
 * from it, so it imports only the foundations, and the config may import it and nothing else under targets/.
 * Checked by the test command (`npm run layers`).
 */
/* A peer's file names, by the layer each belongs to. A new file in a peer folder takes one of these names. */
const PEER_FILES = {
  cli: ['command', 'command-[a-z-]+'], // the peer's `scanrelay import-*` command
  server: ['routes', 'holds', 'events', 'config-template'], // the peer's HTTP API, as its users call it
  triggers: ['takeover', 'queue-db', 'webhook-paths', 'a-train', 'drive-cache'], // its state and requests -> intents
  queue: ['event-list'], // the queue read as the peer lists it
  notify: ['json-format'], // the peer's notification documents
  config: ['import', 'import-[a-z-]+', 'settings', 'names', 'default-auth', 'layout'], // its config -> the relay's keys
};
const peerFiles = (names) => `^src/peers/[^/]+/(${names.join('|')})\\.ts$`;
/* A trigger's file names that stand in another layer than triggers/: its fastify plugin is the server's. */
const TRIGGER_FILES = { server: ['routes'] };
const triggerFiles = (names) => `^src/triggers/[^/]+/(${names.join('|')})\\.ts$`;
const triggerElsewhere = `[^/]+/(${Object.values(TRIGGER_FILES).flat().join('|')})\\.ts$`;
/* A layer's folder (triggers/ without the files TRIGGER_FILES puts elsewhere) and the peers' and triggers' files named for it. */
const layer = (name) =>
  [
    name === 'triggers' ? `^src/triggers(\\.ts$|/(?!${triggerElsewhere}))` : `^src/${name}(/|\\.ts$)`,
    PEER_FILES[name] && peerFiles(PEER_FILES[name]),
    TRIGGER_FILES[name] && triggerFiles(TRIGGER_FILES[name]),
  ]
    .filter(Boolean)
    .join('|');
const below = ['config', 'paths', 'core', 'google', 'db', 'fs', 'log', 'log-file'];
// A kind's config schema, and the schema pieces kinds share: config-level files that live in their kind's folder.
const kindSchema = '^src/targets/([^/]+/schema|[^/]+-schema)\\.ts$';
// Every other file under targets/: the clients and factories, above the queue's floor.
const targetsProper = `^src/targets(\\.ts$|/(?!([^/]+/schema|[^/]+-schema)\\.ts$))`;
const forbid = (name, from, to, comment) => ({ name, severity: 'error', comment, from: { path: from }, to: { path: to } });
/* As forbid, from every module but those `fromNot` matches. */
const forbidBut = (name, fromNot, to, comment) => ({ name, severity: 'error', comment, from: { pathNot: fromNot }, to: { path: to } });

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'Modules that import each other, directly or through others (type imports count: a reader follows them too).',
      from: {},
      to: { circular: true },
    },
    forbidBut('nothing-imports-the-cli', layer('cli'), layer('cli'), 'The CLI is the top: nothing below imports it.'),
    forbidBut('only-the-top-imports-the-server', `${layer('cli')}|${layer('server')}`, layer('server'), "The server's routes (a peer's too) are the top: only the CLI and the server import them."),
    forbid('triggers-produce-intents-only', layer('triggers'), `${layer('targets')}|${layer('server')}|${layer('cli')}`, 'A trigger turns its input into intents; it never reaches a target or the server.'),
    forbid('intake-below-triggers', layer('intake'), `${layer('triggers')}|${layer('server')}|${layer('cli')}`, 'The intake takes intents from any trigger and knows none of them.'),
    forbid('queue-below-intake', layer('queue'), `${layer('intake')}|${layer('triggers')}|${layer('server')}|${layer('cli')}`, 'The queue stores and delivers; it knows nothing of where requests come from.'),
    forbidBut(
      'the-queue-keeps-its-postgresql',
      '^src/queue/',
      '^src/queue/pg/',
      "The PostgreSQL store (its migrations, locks and SQL) is the queue's own: others open the queue through queue/open.ts, and connect, redact a URL or take a lease through db/pg/.",
    ),
    forbid('targets-below-queue', layer('targets'), `${layer('queue')}|${layer('intake')}|${layer('triggers')}|${layer('server')}|${layer('cli')}`, 'A target talks to one media server and knows nothing above it.'),
    forbid('only-the-top-notifies', `${layer('triggers')}|${layer('intake')}|${layer('queue')}|${layer('targets')}|${layer('metrics')}`, layer('notify'), 'Notifications read the outbox; no trigger, target or scheduler code sends them.'),
    forbid('notify-reads-the-outbox', layer('notify'), `${layer('targets')}|${layer('intake')}|${layer('triggers')}|${layer('server')}|${layer('cli')}`, 'The sender knows the queue\'s outbox and the services, nothing above.'),
    forbid('metrics-below-intake', layer('metrics'), `${layer('intake')}|${layer('triggers')}|${layer('server')}|${layer('cli')}`, 'The counters know the queue and the targets, nothing above.'),
    forbidBut('setup-is-for-cli-and-server', `${layer('cli')}|${layer('server')}|${layer('setup')}`, layer('setup'), 'Setting up the *arrs is a command and a page: nothing below them uses it.'),
    forbid('setup-uses-the-foundations', layer('setup'), `${layer('notify')}|${layer('targets')}|${layer('queue')}|${layer('metrics')}|${layer('intake')}|${layer('triggers')}|${layer('server')}|${layer('cli')}`, 'Setup reads the config and pairs paths; it never reaches the relay\'s layers.'),
    forbid('core-is-the-ground', '^src/core/', '^src/(?!core/)', 'core holds the vocabulary (scan, target, events, errors, logger types, text rules): it imports nothing of the project.'),
    forbid('basics-below-google-and-config', `${layer('paths')}|${layer('fs')}|${layer('db')}|${layer('log')}|${layer('log-file')}`, `${layer('google')}|${layer('config')}|${kindSchema}`, 'paths, fs, db and the log take values, never the config or the provider.'),
    forbid('google-below-config', layer('google'), `${layer('config')}|${kindSchema}`, 'The provider folder (Google and rclone) names the keys it reads; the config imports it, never the reverse.'),
    forbid(
      'the-plex-class-stays-home',
      '^src/(?!targets/plex/)',
      '^src/targets/plex/target\\.ts$',
      'The server and the CLI ask the Target contract (core/scan.ts: describe, setupProblems, sections); only the Plex kind knows its class.',
    ),
    forbid(
      'kind-schemas-are-config-level',
      kindSchema,
      `^src/(?!(${below.join('|')})(/|\\.ts$))(?!targets/([^/]+/schema|[^/]+-schema)\\.ts$)`,
      "A kind's schema (targets/<kind>/schema.ts, targets/*-schema.ts) is read by the config: it imports zod, the config's shared fields, core and other kinds' schemas, never a client, a factory or a layer.",
    ),
    forbid(
      'foundations-import-no-layer',
      below.map(layer).join('|'),
      `${layer('notify')}|${targetsProper}|${layer('queue')}|${layer('metrics')}|${layer('intake')}|${layer('triggers')}|${layer('server')}|${layer('cli')}`,
      "config, paths, core, google, log and the other foundations (a peer's config-level files too) are imported by the layers, never the reverse. The kinds' schemas are config-level: the config may read them, and no other file under targets/.",
    ),
    {
      name: 'peer-files-have-a-layer',
      severity: 'error',
      comment: "A file in a peer folder is named for its layer (PEER_FILES in .dependency-cruiser.cjs), so the rules above know where it stands.",
      from: { path: '^src/peers/', pathNot: peerFiles(Object.values(PEER_FILES).flat()) },
      to: {},
    },
    {
      name: 'a-peer-keeps-to-itself',
      severity: 'error',
      comment: 'Each peer is one door: a peer imports the relay, never another peer.',
      from: { path: '^src/peers/([^/]+)/' },
      to: { path: '^src/peers/', pathNot: '^src/peers/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '^(node_modules|dist)/' },
  },
};
