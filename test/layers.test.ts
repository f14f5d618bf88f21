import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from './helpers/relay.ts';

/*
 * The layering rules (.dependency-cruiser.cjs, run by `npm run layers` in the test command) catch what they
 * are meant to: checked on a small tree that breaks each one, so a rule that matches nothing cannot pass silently.
 */

/** A tree of its own for each test, with the rules and a tsconfig. */
function newTree(): string {
  const t = tempDir('scanrelay-layers-');
  cpSync(join(ROOT, '.dependency-cruiser.cjs'), join(t, '.dependency-cruiser.cjs'));
  writeFileSync(join(t, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', allowImportingTsExtensions: true, noEmit: true } }));
  return t;
}
let tree = newTree();

function write(path: string, text: string): void {
  mkdirSync(dirname(join(tree, path)), { recursive: true });
  writeFileSync(join(tree, path), text);
}

function cruise(): { status: number | null; out: string } {
  const res = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs'), 'src/**/*.ts', '--config', '.dependency-cruiser.cjs'], {
    cwd: tree,
    encoding: 'utf8',
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

/** Writes each [rule, file, text] into the tree; the check fails, naming each rule for its file. Returns its output. */
function breakEach(bad: Array<[string, string, string]>): string {
  for (const [, file, text] of bad) write(file, text);
  const broken = cruise();
  assert.notEqual(broken.status, 0);
  for (const [rule, file] of bad) assert.match(broken.out, new RegExp(`error ${rule}: ${file.replaceAll('.', '\\.')}`), `${rule} was not reported for ${file}:\n${broken.out}`);
  return broken.out;
}

test('the layer rules pass a tree that keeps them and name each rule a tree breaks', () => {
  write('src/targets/plex.ts', 'export const scan = () => 1;\n');
  write('src/queue/store.ts', "import { scan } from '../targets/plex.ts';\nexport const q = scan;\n");
  write('src/intake/submit.ts', "import { q } from '../queue/store.ts';\nexport const submit = q;\n");
  // The queue opens its PostgreSQL store; the database's toolkit below (db/pg) is anyone's.
  write('src/queue/pg/lease.ts', 'export const lease = 1;\n');
  write('src/queue/open.ts', "import { lease } from './pg/lease.ts';\nexport const open = lease;\n");
  write('src/db/pg/redact.ts', 'export const redact = 1;\n');
  write('src/triggers/arr.ts', "import { submit } from '../intake/submit.ts';\nexport const recognize = submit;\n");
  write('src/server/app.ts', "import { recognize } from '../triggers/arr.ts';\nexport const app = recognize;\n");
  write('src/cli/main.ts', "import { app } from '../server/app.ts';\nexport const main = app;\n");
  write('src/targets/plex/target.ts', 'export class PlexTarget {}\n');
  write('src/targets/plex/create.ts', "import { PlexTarget } from './target.ts';\nexport const create = () => new PlexTarget();\n");
  // A kind is one folder; its schema is config-level, so the config builds its union from the list of kinds.
  write('src/config/target-base.ts', 'export const base = {};\n');
  write('src/targets/sonarr/schema.ts', "import { base } from '../../config/target-base.ts';\nexport const schema = base;\n");
  write('src/targets/kinds-schema.ts', "import { schema } from './sonarr/schema.ts';\nexport const KIND_SCHEMAS = [schema];\n");
  write('src/config/targets.ts', "import { KIND_SCHEMAS } from '../targets/kinds-schema.ts';\nexport const union = KIND_SCHEMAS;\n");
  write('src/targets/sonarr/kind.ts', "import { schema as s } from './schema.ts';\nimport { scan } from '../plex.ts';\nexport const schema = s;\nexport const create = scan;\n");
  const clean = cruise();
  assert.equal(clean.status, 0, clean.out);

  write('src/triggers/drive.ts', "import { scan } from '../targets/plex.ts';\nexport const d = scan;\n");
  write('src/intake/uses-trigger.ts', "import { recognize } from '../triggers/arr.ts';\nexport const u = recognize;\n");
  write('src/queue/a.ts', "import { b } from './b.ts';\nexport const a = () => b;\n");
  write('src/queue/b.ts', "import { a } from './a.ts';\nexport const b = () => a;\n");
  write('src/paths/mapping.ts', "import { main } from '../cli/main.ts';\nexport const m = main;\n");
  write('src/server/readiness.ts', "import { PlexTarget } from '../targets/plex/target.ts';\nexport const isPlex = (t: unknown) => t instanceof PlexTarget;\n");
  // A kind's schema that reaches a client, and a config that reaches a kind's factory rather than its schema.
  write('src/targets/radarr/schema.ts', "import { scan } from '../plex.ts';\nexport const schema = scan;\n");
  write('src/config/load.ts', "import { create } from '../targets/sonarr/kind.ts';\nexport const load = create;\n");
  // A trigger (or the CLI) that reaches into the queue's PostgreSQL store rather than db/pg or queue/open.ts.
  write('src/triggers/drive/pg-cache.ts', "import { lease } from '../../queue/pg/lease.ts';\nimport { redact } from '../../db/pg/redact.ts';\nexport const c = lease + redact;\n");
  write('src/cli/move-queue.ts', "import { lease } from '../queue/pg/lease.ts';\nimport { open } from '../queue/open.ts';\nexport const m = lease + open;\n");
  const broken = cruise();
  assert.notEqual(broken.status, 0);
  for (const rule of ['triggers-produce-intents-only', 'intake-below-triggers', 'no-cycle', 'nothing-imports-the-cli', 'foundations-import-no-layer', 'the-plex-class-stays-home', 'kind-schemas-are-config-level', 'the-queue-keeps-its-postgresql']) {
    assert.match(broken.out, new RegExp(`error ${rule}`), `${rule} was not reported:\n${broken.out}`);
  }
  assert.match(broken.out, /error kind-schemas-are-config-level: src\/targets\/radarr\/schema\.ts → src\/targets\/plex\.ts/);
  assert.match(broken.out, /error foundations-import-no-layer: src\/config\/load\.ts → src\/targets\/sonarr\/kind\.ts/);
  assert.match(broken.out, /error the-queue-keeps-its-postgresql: src\/triggers\/drive\/pg-cache\.ts → src\/queue\/pg\/lease\.ts/);
  assert.match(broken.out, /error the-queue-keeps-its-postgresql: src\/cli\/move-queue\.ts → src\/queue\/pg\/lease\.ts/);
  // db/pg and queue/open.ts are open to them: no rule names those imports.
  assert.doesNotMatch(broken.out, /→ src\/(db\/pg\/redact|queue\/open)\.ts/);
  // The config may still read a kind's schema: no rule names that import.
  assert.doesNotMatch(broken.out, /src\/config\/targets\.ts → /);
});

test('one target model: below config nothing reads PLEX_*, JELLYFIN or EMBY, and only targets/plex knows the Plex class', () => {
  // Config loading turns those keys into `config.targets` (config/named-targets.ts relayConfig); the relay's Config
  // type has no such keys, and this catches a read that goes around the type.
  const files = spawnSync('git', ['ls-files', 'src'], { cwd: ROOT, encoding: 'utf8' }).stdout.split('\n').filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 100, 'the sources were listed');
  // Setup writes a Plex or Jellyfin the user gave into the file's own JSON (its PLEX_* and JELLYFIN keys); it reads
  // the relay's servers from config.targets (setup/servers.ts).
  const editsTheFile = new Set(['src/setup/config-edit.ts']);
  // A peer's importer is config-level (.dependency-cruiser.cjs counts it with the foundations) and writes the file's
  // keys as src/config/ does: autoscan's Plex becomes the file's PLEX_* keys.
  const rules = (createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as { forbidden: { name: string; from: { path?: string } }[] }).forbidden;
  const foundations = new RegExp(rules.find((r) => r.name === 'foundations-import-no-layer')?.from.path ?? '^$');
  const configLevel = (file: string) => file.startsWith('src/config/') || (file.startsWith('src/peers/') && foundations.test(file));
  assert.ok(configLevel('src/peers/autoscan/import.ts') && !configLevel('src/peers/autoscan/routes.ts'), "the peers' config-level files were found");
  const offenders: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    text.split('\n').forEach((line, i) => {
      if (!configLevel(file) && !editsTheFile.has(file) && /\.(PLEX_[A-Z_]+|JELLYFIN|EMBY)\b|\[['"]PLEX_/.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      if (!file.startsWith('src/targets/plex/') && /instanceof PlexTarget\b/.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(offenders, []);
});

test("a peer's files stand in the layer their names say: the one-way walk holds inside src/peers/<peer>/", () => {
  tree = newTree();
  write('src/queue/store.ts', 'export const q = 1;\n');
  write('src/intake/submit.ts', "import { q } from '../queue/store.ts';\nexport const submit = q;\n");
  write('src/config/load.ts', 'export const load = 1;\n');
  // One peer across the layers, each import running downward.
  write('src/peers/p/import.ts', "import { load } from '../../config/load.ts';\nexport const imp = load;\n");
  write('src/peers/p/event-list.ts', "import { q } from '../../queue/store.ts';\nexport const list = q;\n");
  write('src/peers/p/queue-db.ts', "import { submit } from '../../intake/submit.ts';\nimport { imp } from './import.ts';\nexport const take = submit + imp;\n");
  write('src/peers/p/routes.ts', "import { take } from './queue-db.ts';\nimport { list } from './event-list.ts';\nexport const routes = take + list;\n");
  write('src/peers/p/command.ts', "import { routes } from './routes.ts';\nexport const command = routes;\n");
  write('src/server/app.ts', "import { routes } from '../peers/p/routes.ts';\nexport const app = routes;\n");
  write('src/cli/main.ts', "import { command } from '../peers/p/command.ts';\nexport const main = command;\n");
  const clean = cruise();
  assert.equal(clean.status, 0, clean.out);

  const bad: Record<string, [string, string]> = {
    'triggers-produce-intents-only': ['src/peers/p/takeover.ts', "import { routes } from './routes.ts';\nexport const t = routes;\n"],
    'queue-below-intake': ['src/peers/p/event-list.ts', "import { take } from './queue-db.ts';\nexport const list = take;\n"],
    'foundations-import-no-layer': ['src/peers/p/names.ts', "import { list } from './event-list.ts';\nexport const n = list;\n"],
    'only-the-top-imports-the-server': ['src/queue/view.ts', "import { routes } from '../peers/p/routes.ts';\nexport const v = routes;\n"],
    'nothing-imports-the-cli': ['src/server/cmd.ts', "import { command } from '../peers/p/command.ts';\nexport const c = command;\n"],
    'a-peer-keeps-to-itself': ['src/peers/other/import.ts', "import { imp } from '../p/import.ts';\nexport const o = imp;\n"],
    'peer-files-have-a-layer': ['src/peers/p/helper.ts', "import { imp } from './import.ts';\nexport const h = imp;\n"],
  };
  breakEach(Object.entries(bad).map(([rule, [file, text]]) => [rule, file, text]));
});

test("a trigger's routes.ts is its HTTP edge, in the server layer: it may use the server's helpers, the rest of triggers/ may not", () => {
  tree = newTree();
  write('src/intake/submit.ts', 'export const submit = 1;\n');
  write('src/server/reply.ts', 'export const sendError = 1;\n');
  write('src/cli/main.ts', "import { app } from '../server/app.ts';\nexport const main = app;\n");
  write('src/triggers/manual/recognize.ts', "import { submit } from '../../intake/submit.ts';\nexport const recognize = submit;\n");
  // The trigger's fastify plugin: its recognizer below it, the server's replies beside it, and the app registers it.
  write('src/triggers/manual/routes.ts', "import { recognize } from './recognize.ts';\nimport { sendError } from '../../server/reply.ts';\nexport const routes = recognize + sendError;\n");
  write('src/peers/p/routes.ts', "import { routes as door } from '../../triggers/manual/routes.ts';\nexport const routes = door;\n");
  write('src/server/app.ts', "import { routes } from '../triggers/manual/routes.ts';\nimport { routes as peer } from '../peers/p/routes.ts';\nexport const app = routes + peer;\n");
  const clean = cruise();
  assert.equal(clean.status, 0, clean.out);

  const bad: Array<[string, string, string]> = [
    // Only a file named routes.ts, directly in a trigger's folder, is the server's.
    ['triggers-produce-intents-only', 'src/triggers/manual/page.ts', "import { sendError } from '../../server/reply.ts';\nexport const p = sendError;\n"],
    ['triggers-produce-intents-only', 'src/triggers/routes.ts', "import { sendError } from '../server/reply.ts';\nexport const r = sendError;\n"],
    ['triggers-produce-intents-only', 'src/triggers/drive/http/routes.ts', "import { sendError } from '../../../server/reply.ts';\nexport const r = sendError;\n"],
    // A trigger's routes are the top, as the server is: no trigger and nothing below imports them.
    ['only-the-top-imports-the-server', 'src/triggers/arr/notice.ts', "import { routes } from '../manual/routes.ts';\nexport const n = routes;\n"],
    ['only-the-top-imports-the-server', 'src/intake/door.ts', "import { routes } from '../triggers/manual/routes.ts';\nexport const d = routes;\n"],
    ['nothing-imports-the-cli', 'src/triggers/arr/routes.ts', "import { main } from '../../cli/main.ts';\nexport const routes = main;\n"],
  ];
  const broken = breakEach(bad);
  // The plugin's own imports of the server stay allowed.
  assert.doesNotMatch(broken, /src\/triggers\/manual\/routes\.ts → /);
});
