import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { separatorOf } from '../paths/mapping.ts';
import { plexApiFor } from '../targets/plex/tls-policy.ts';
import { displayCommand } from '../targets/plex/backends/scanner/command.ts';
import { PlexScannerBackend } from '../targets/plex/backends/scanner/backend.ts';
import { plexKeyName, plexTargetNamed } from '../targets/plex/settings.ts';
import { describeRun, exitStatusOf } from '../targets/plex/backends/scanner/run.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

const HEADER = 'Plex Sections:\n==============\n';
const TARGET_HELP = 'the Plex target named in TARGETS (default: the top-level PLEX_* keys, "plex")';

/**
 * plex_autoscan's two section listings: `sections` asks the scanner binary (`--list`, through the same
 * docker/sudo wrapper as scans, no token needed); `sections+` asks the HTTP API and shows each location.
 */
export function registerSections(program: Command): void {
  program
    .command('sections')
    .description('list Plex library sections with the Plex Media Scanner (--list; no token needed)')
    .option('--target <name>', TARGET_HELP)
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean; target?: string }, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        const backend = PlexScannerBackend.fromSettings(plexTargetNamed(config, opts.target).settings);
        const list = backend.listCommand();
        const result = await backend.run(list, { forwardSignals: true });
        const status = exitStatusOf(result);
        const error = status === 0 ? null : describeRun('Plex Media Scanner --list', result);
        if (opts.json) {
          const sections = result.stdout.split('\n').flatMap((line) => {
            const m = /^\s*(\d+):\s*(.*?)\s*$/.exec(line);
            return m ? [{ id: m[1], title: m[2] }] : [];
          });
          process.stdout.write(`${JSON.stringify({ command: displayCommand(list), status, sections, stderr: result.stderr, error })}\n`);
        } else {
          // The header only over a list: a scanner that failed prints what it said and why, nothing more.
          process.stdout.write(error ? result.stdout : HEADER + result.stdout);
          process.stderr.write(result.stderr);
          if (error) process.stderr.write(`scanrelay: ${error}\n`);
        }
        process.exitCode = status;
      }),
    );

  program
    .command('sections+')
    .description('list Plex library sections and their locations through the Plex API (needs PLEX_TOKEN)')
    .option('--target <name>', TARGET_HELP)
    .option('--json', 'print JSON')
    .action(
      action(async (opts: { json?: boolean; target?: string }, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        const { name, settings } = plexTargetNamed(config, opts.target);
        if (!settings.TOKEN) throw new UserError(`sections+ needs ${plexKeyName(name, 'TOKEN')} in the config (or use "scanrelay sections", which asks the scanner)`);
        let sections;
        try {
          sections = await plexApiFor(settings).sections('/library/sections/all');
        } catch (err) {
          throw new UserError(`cannot list Plex sections: ${(err as Error).message}`, 1);
        }
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ sections })}\n`);
          return;
        }
        const blocks = sections.map((s) => {
          const heading = `${s.id}) ${s.title}`;
          // A trailing separator, as plex_autoscan's os.path.join(path, '').
          const paths = s.locations.map((p) => (/[\\/]$/.test(p) ? p : p + separatorOf(p)));
          return `\n${heading}\n${'-'.repeat([...heading].length)}\n${paths.map((p) => `${p}\n`).join('')}`;
        });
        process.stdout.write(HEADER + blocks.join(''));
      }),
    );
}
