import { Option, type Command } from 'commander';
import { UserError } from '../core/errors.ts';
import type { Config } from '../config/schema.ts';
import { scanFolderFor } from '../paths/folder.ts';
import { normalizeFolder } from '../paths/mapping.ts';
import { mapIncomingPath } from '../paths/rewrite.ts';
import { plexBackendFor } from '../targets/plex/create.ts';
import { plexKeyName, plexTargetNamed, resolveScanMethod, type PlexSettings } from '../targets/plex/settings.ts';
import { placeRewriter } from '../paths/rewrite.ts';
import type { PlexScanBackend } from '../targets/plex/backends/backend.ts';
import { PlexScannerBackend } from '../targets/plex/backends/scanner/backend.ts';
import { describeRun, exitStatusOf } from '../targets/plex/backends/scanner/run.ts';
import { createTarget } from '../targets/registry.ts';
import type { ScanItem } from '../core/scan.ts';
import { silentLogger } from '../core/logger.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

interface ScanOptions {
  section?: string;
  directory?: string;
  method?: 'api' | 'scanner';
  target?: string;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * `scanrelay scan`: one Plex scan now, bypassing the queue. `--dry-run` prints the exact command line or
 * request (pasteable); a real run says what it ran and how it ended, and exits with the scanner's status.
 * `--target` names another Plex, or a target of another kind, which is sent the folder as a delivery would.
 */
export function registerScan(program: Command): void {
  program
    .command('scan')
    .description('scan one folder in Plex (or in the target named by --target) now, bypassing the queue; prints the command line (scanner) or request (api)')
    .argument('[path]', 'a path in any form: mapped through SERVER_PATH_MAPPINGS, a file becomes its folder')
    .option('--section <id>', 'Plex library section id (default: the section whose location holds the folder)')
    .option('--directory <path>', 'the folder to scan, exactly as Plex sees it (not mapped)')
    .addOption(new Option('--method <method>', 'override PLEX_SCAN_METHOD').choices(['api', 'scanner']))
    .option('--target <name>', 'a target named in TARGETS (default: the top-level PLEX_* keys, "plex"); a target that is not a Plex is sent the folder as the queue would')
    .option('--dry-run', 'print what would run, run nothing')
    .option('--json', 'print JSON')
    .action(
      action(async (path: string | undefined, opts: ScanOptions, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        const other = opts.target === undefined ? undefined : config.targets.get(opts.target);
        if (other && other.TYPE !== 'plex') return scanOn(config, opts.target!, path, opts);
        const plex = plexTargetNamed(config, opts.target);
        const folder = folderOf(config, plex.settings, path, opts.directory);
        const method = opts.method ?? resolveScanMethod(plex.settings);
        const backend = backendFor(plex, method);
        const section = opts.section ?? (await sectionOf(backend, folder));
        const command = backend.describeScan(section, folder);
        const report = (extra: Record<string, unknown>) => {
          if (opts.json) process.stdout.write(`${JSON.stringify({ method, section, directory: folder, command, dryRun: !!opts.dryRun, ...extra })}\n`);
        };
        if (opts.dryRun) {
          if (!opts.json) process.stdout.write(`${command}\n`);
          return report({});
        }
        const what = `section ${section}, "${folder}"`;
        if (!opts.json) process.stdout.write(`${method === 'api' ? 'requesting' : 'running'}: ${command}\n`);

        if (backend instanceof PlexScannerBackend) {
          const result = await backend.run(backend.scanCommand(section, folder), { forwardSignals: true });
          const status = exitStatusOf(result);
          if (opts.json) {
            report({ status, stdout: result.stdout, stderr: result.stderr, error: status === 0 ? null : describeRun('Plex Media Scanner', result) });
          } else {
            process.stdout.write(result.stdout);
            process.stderr.write(result.stderr);
            if (status !== 0) process.stderr.write(`scanrelay: failed (${what}): ${describeRun('Plex Media Scanner', result)}\n`);
            else process.stdout.write(`done (${what}): Plex Media Scanner exited with status 0\n`);
          }
          process.exitCode = status;
          return;
        }
        try {
          await backend.scan(section, folder);
          report({ status: 0 });
          if (!opts.json) process.stdout.write(`done (${what}): Plex accepted the refresh and scans the folder in the background\n`);
        } catch (err) {
          report({ status: 1, error: (err as Error).message });
          if (!opts.json) process.stderr.write(`scanrelay: failed (${what}): ${(err as Error).message}\n`);
          process.exitCode = 1;
        }
      }),
    );
}

/**
 * A scan now on a target that is not a Plex: the folder (and the file, when the path names one) delivered as the
 * queue delivers it, its steps after the delivery included. Exit 0 when it is done, 1 otherwise.
 */
async function scanOn(config: Config, name: string, path: string | undefined, opts: ScanOptions): Promise<void> {
  if (opts.section !== undefined || opts.method !== undefined || opts.directory !== undefined) {
    throw new UserError(`--section, --method and --directory are for a Plex target; ${name} is a ${config.targets.get(name)!.TYPE} target: give a path`);
  }
  if (!path) throw new UserError('give a path to scan');
  const mapped = mapIncomingPath(config, path).path;
  const folder = scanFolderFor(mapped, config.SERVER_FILE_EXIST_PATH_MAPPINGS, undefined, Object.keys(config.SERVER_PATH_MAPPINGS));
  const target = await createTarget(name, config.targets.get(name)!, silentLogger(), config);
  try {
    const type = target.describe?.().type ?? config.targets.get(name)!.TYPE;
    const sent = target.toTargetPath ? target.toTargetPath(folder) : folder;
    const report = (extra: Record<string, unknown>) => {
      if (opts.json) process.stdout.write(`${JSON.stringify({ target: name, type, directory: sent, dryRun: !!opts.dryRun, ...extra })}\n`);
    };
    if (opts.dryRun) {
      if (!opts.json) process.stdout.write(`would send ${name} (${type}): ${sent}\n`);
      return report({});
    }
    const item: ScanItem = {
      id: 0, folder, files: normalizeFolder(mapped) !== folder ? [mapped] : [], moreFiles: 0, source: 'Manual', event: 'Manual', title: null, ids: {},
      updateType: 'Modified', priority: 0, requests: 1, upgrade: false, firstAt: Date.now(), attempt: 1, fileChecks: 0,
    };
    if (!opts.json) process.stdout.write(`sending: ${name} (${type}): ${sent}\n`);
    const result = await target.deliver(item);
    if (result.outcome !== 'done') {
      report({ status: 1, error: result.error });
      if (!opts.json) process.stderr.write(`scanrelay: failed (${name}, "${sent}"): ${result.error}\n`);
      process.exitCode = 1;
      return;
    }
    const after = result.after ? await result.after(new AbortController().signal) : undefined;
    const detail = (typeof after === 'string' ? after : after?.detail) ?? result.detail ?? 'sent';
    report({ status: 0, detail });
    if (!opts.json) process.stdout.write(`done (${name}, "${sent}"): ${detail}\n`);
  } finally {
    target.close?.();
  }
}

/** --directory as given, else the path mapped like a request, reduced to its folder, as this Plex names it (its REWRITE). */
function folderOf(config: Config, plex: Pick<PlexSettings, 'REWRITE' | 'REWRITE_MODE'>, path: string | undefined, directory: string | undefined): string {
  if (path !== undefined && directory !== undefined) throw new UserError('give either a path or --directory, not both');
  if (directory !== undefined) {
    if (!directory) throw new UserError('--directory must not be empty');
    return directory;
  }
  if (!path) throw new UserError('give a path to scan, or --section <id> --directory <path>');
  const folder = scanFolderFor(mapIncomingPath(config, path).path, config.SERVER_FILE_EXIST_PATH_MAPPINGS, undefined, Object.keys(config.SERVER_PATH_MAPPINGS));
  return placeRewriter(plex.REWRITE, plex.REWRITE_MODE)?.(folder) ?? folder;
}

function backendFor(plex: { name: string; settings: PlexSettings }, method: 'api' | 'scanner'): PlexScanBackend {
  if (method === 'api' && !plex.settings.TOKEN) throw new UserError(`the api method needs ${plexKeyName(plex.name, 'TOKEN')} in the config (or use --method scanner)`);
  return plexBackendFor(plex.settings, method);
}

async function sectionOf(backend: PlexScanBackend, folder: string): Promise<string> {
  try {
    const hit = await backend.resolveSection(folder);
    if (hit) return hit.id;
    const known = (await backend.knownLocations()).join(', ') || 'none';
    throw new UserError(`"${folder}" is in no Plex section (section locations: ${known}); check SERVER_PATH_MAPPINGS or pass --section`);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot find the Plex section for "${folder}": ${(err as Error).message}`, 1);
  }
}
