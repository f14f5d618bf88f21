import type { Command } from 'commander';
import type { Config } from '../config/schema.ts';
import { UserError } from '../core/errors.ts';
import { mapIncomingPath, placeRewriter } from '../paths/rewrite.ts';
import { invalidMappedPath, invalidRequestPath } from '../paths/validate.ts';
import { scanFolderFor } from '../paths/folder.ts';
import { normalizeFolder } from '../paths/mapping.ts';
import { buildTargets } from '../targets/index.ts';
import type { SectionRef, Target } from '../core/scan.ts';
import { silentLogger } from '../core/logger.ts';
import { scanModeOf } from '../targets/media-browser/target.ts';
import { triggerRouting } from '../config/named-targets.ts';
import type { TriggerRoute } from '../config/targets.ts';
import { leftOutBy, routeRequest, routeTable } from '../queue/route.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

export function registerMap(program: Command): void {
  program
    .command('map')
    .description('show what SERVER_PATH_REWRITES and SERVER_PATH_MAPPINGS make of a path (every rule that fired), what each target is sent or why it is left out, and the section it falls in on each Plex')
    .argument('<path>', 'a path in any form (container, mount, drive)')
    .option('--json', 'print JSON')
    .option('--trigger <name>', "apply this SERVER_AUTOSCAN_TRIGGERS entry's REWRITE first, and its TARGETS/EXCLUDE_TARGETS, as its /triggers/<name> route does")
    .option('--target <name>', 'the target whose section is shown (a Plex named in TARGETS; default: every Plex, the top-level one as `section`)')
    .action(
      action(async (input: string, opts: { json?: boolean; trigger?: string; target?: string }, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        let path = input;
        let trigger: TriggerRoute | undefined;
        if (opts.trigger !== undefined) {
          const entry = config.SERVER_AUTOSCAN_TRIGGERS[opts.trigger];
          if (!entry) throw new UserError(`--trigger: no SERVER_AUTOSCAN_TRIGGERS entry named "${opts.trigger}" (names: ${Object.keys(config.SERVER_AUTOSCAN_TRIGGERS).join(', ')})`);
          path = placeRewriter(entry.REWRITE)?.(input) ?? input;
          trigger = entry as TriggerRoute;
        }
        // The checks the relay makes on a request, before and after mapping: what it would refuse, map refuses.
        const problem = invalidRequestPath(path);
        if (problem) throw new UserError(`the relay would refuse this path (400): ${problem}`);
        const mapped = mapIncomingPath(config, path);
        const mappedProblem = invalidMappedPath(mapped.path);
        if (mappedProblem) throw new UserError(`the relay would refuse this path (400): ${mappedProblem}`);
        const folder = scanFolderFor(mapped.path, config.SERVER_FILE_EXIST_PATH_MAPPINGS, undefined, Object.keys(config.SERVER_PATH_MAPPINGS));
        const table = routeTable(config.targets);
        // The three servers of the plex_autoscan keys, as --json's `servers` showed them before TARGETS (scripts read it).
        const own = (name: string) => table.find((t) => t.name === name)?.rewrite?.(folder) ?? folder;
        const servers = { plex: own('plex'), jellyfin: own('jellyfin'), emby: own('emby') };
        // The same lookup the relay makes on each target with sections (every Plex): its API, or its database.
        const sections = await sectionsOf(config, folder, opts.target);
        // `section` and `sectionError`, as before there were named targets: the top-level Plex's, else the first.
        const first = sections.find((s) => s.target === 'plex') ?? sections[0];
        const section = first?.section ?? undefined;
        const sectionError = first ? first.error : 'no target has library sections (no Plex target)';
        const targets = targetsFor(config, folder, mapped.path, opts.trigger, trigger);
        // Jellyfin and Emby: the scan mode each would use (issue 50), asked of the server when SCAN_MODE is auto.
        const named = config.targets;
        await Promise.all(
          targets.map(async (t) => {
            const entry = named.get(t.name);
            if (entry?.TYPE === 'jellyfin' || entry?.TYPE === 'emby') t.scanMode = await scanModeOf(t.name, entry);
          }),
        );
        if (opts.json) {
          const sentTo = targets.filter((t) => t.sent).map((t) => t.name);
          process.stdout.write(
            `${JSON.stringify({ input, trigger: opts.trigger ?? null, afterTrigger: path, servers, rewrites: mapped.rewrites, mapped: mapped.path, match: mapped.match ?? null, folder, section: section ?? null, sectionError: sectionError ?? null, sections, targets, sentTo })}\n`,
          );
          return;
        }
        const lines = [
          `input:   ${input}`,
          ...(opts.trigger !== undefined ? [`trigger: ${opts.trigger}'s REWRITE: ${path}`] : []),
          ...mapped.rewrites.map((r) => `rewrite: SERVER_PATH_REWRITES[${r.index}] "${r.from}" -> "${r.to}": ${r.after}`),
          `mapped:  ${mapped.path}`,
          mapped.match ? `matched: "${mapped.match.value}" -> "${mapped.match.key}"` : 'matched: no SERVER_PATH_MAPPINGS entry (path left as it is)',
          `folder:  ${folder}`,
          ...(targets.length ? targets.flatMap((t) => [targetLine(t, folder), ...(t.scanMode ? [modeLine(t.name, t.scanMode)] : [])]) : ['target:  none (no target is enabled)']),
          ...(targets.length && !targets.some((t) => t.sent) ? ['route:   no target takes it: the relay would answer this request "ignored"'] : []),
          ...(sections.length ? sections.map((s) => sectionLine(s, sections.length > 1)) : [`section: none (${sectionError})`]),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}

/** The section that holds the folder on one target with sections, or why it is not known. */
interface SectionView {
  target: string;
  section: SectionRef | null;
  /** null: asked, and a section holds it, or none does. */
  error: string | null;
}

/** Each target with library sections (every Plex), or only `only` (--target), asked where the folder falls, at once. */
async function sectionsOf(config: Config, folder: string, only?: string): Promise<SectionView[]> {
  if (only !== undefined && !config.targets.has(only)) throw new UserError(`--target: no target is named "${only}" (targets: ${[...config.targets.keys()].join(', ') || 'none'})`);
  const built = await buildTargets(config, silentLogger());
  try {
    const withSections = built.filter((t): t is Target & { sections: NonNullable<Target['sections']> } => t.sections !== undefined && (only === undefined || t.name === only));
    if (only !== undefined && withSections.length === 0) throw new UserError(`--target: ${only} is a ${config.targets.get(only)!.TYPE} target, which has no library sections`);
    return await Promise.all(
      withSections.map(async (t) => {
        try {
          return { target: t.name, section: (await t.sections.find(folder)) ?? null, error: null };
        } catch (err) {
          return { target: t.name, section: null, error: (err as Error).message };
        }
      }),
    );
  } finally {
    for (const t of built) t.close?.();
  }
}

/** One target's section; with several, each line ends with the target's name. */
function sectionLine(s: SectionView, named: boolean): string {
  const which = named ? ` [${s.target}]` : '';
  if (s.section) return `section: ${s.section.id} (${s.section.title}), location ${s.section.location}${which}`;
  return `section: none (${s.error ?? 'no Plex section location holds this folder'})${which}`;
}

/** One named target as the map shows it: the folder it is sent, and what leaves it out, if anything. */
interface TargetView {
  name: string;
  type: string;
  /** The folder as this target is sent it: its REWRITE (with its REWRITE_MODE) of the relay's folder. */
  path: string;
  /** The path its INCLUDE/EXCLUDE are matched on (the file when the input names one), as the target names it. */
  checked: string;
  sent: boolean;
  /** The config key that leaves it out, with the pattern(s) for a target's own INCLUDE/EXCLUDE; null when sent. */
  leftOutBy: { key: string; pattern?: string; patterns?: string[] } | null;
  /** Jellyfin and Emby: how scans go (SCAN_MODE, or what auto picks), or why the server could not be asked. */
  scanMode?: { mode: string; why: string } | { mode: 'auto'; error: string };
}

function modeLine(name: string, m: NonNullable<TargetView['scanMode']>): string {
  return 'error' in m ? `mode:    ${name}: auto, not known yet (could not ask the server: ${m.error})` : `mode:    ${name}: ${m.mode} (${m.why})`;
}

/**
 * Where the relay would send this request: the queue's own routing (queue/route.ts routeRequest, as server/run.ts
 * decides it when a scan is queued) over every named target, then, for each target left out, the key that did it.
 */
function targetsFor(config: Config, folder: string, mappedPath: string, triggerName: string | undefined, trigger: TriggerRoute | undefined): TargetView[] {
  const named = config.targets;
  const table = routeTable(named);
  // A path below its folder is a file, as the intake stores it (intake/resolve.ts): routing matches the file.
  const files = normalizeFolder(mappedPath) !== folder ? [mappedPath] : [];
  const { targets: allowed } = triggerRouting(config, trigger);
  const route = routeRequest(table, { folder, files, ...(allowed ? { targets: allowed } : {}) });
  const checkedPath = files[0] ?? folder;
  return table.map((t): TargetView => {
    const own = (p: string) => (t.rewrite ? t.rewrite(p) : p);
    const sent = route === undefined || route.includes(t.name);
    const view = { name: t.name, type: named.get(t.name)!.TYPE, path: own(folder), checked: own(checkedPath), sent };
    if (sent) return { ...view, leftOutBy: null };
    if (allowed && !allowed.includes(t.name)) {
      const field = trigger?.TARGETS ? 'TARGETS' : 'EXCLUDE_TARGETS';
      return { ...view, leftOutBy: { key: `SERVER_AUTOSCAN_TRIGGERS.${triggerName}.${field}` } };
    }
    const why = leftOutBy(t, checkedPath);
    return { ...view, leftOutBy: why ? { ...why, key: `TARGETS.${t.name}.${why.key}` } : { key: 'unknown' } };
  });
}

function targetLine(t: TargetView, folder: string): string {
  const head = `target:  ${t.name} (${t.type}): ${t.path}${t.path !== folder ? ' (its own REWRITE)' : ''}`;
  if (!t.leftOutBy) return `${head}, sent`;
  const { key, pattern, patterns } = t.leftOutBy;
  if (pattern !== undefined) return `${head}, left out by ${key}: "${pattern}" matches ${t.checked}`;
  if (patterns) return `${head}, left out by ${key}: none of ${patterns.map((p) => `"${p}"`).join(', ')} matches ${t.checked}`;
  return `${head}, left out by ${key}`;
}
