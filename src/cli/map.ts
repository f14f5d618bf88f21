import type { Command } from 'commander';
import { UserError } from '../config/errors.ts';
import { mapIncomingPath, placeRewriter } from '../paths/rewrite.ts';
import { invalidMappedPath, invalidRequestPath } from '../paths/validate.ts';
import { scanFolderFor } from '../paths/folder.ts';
import { plexBackendFor } from '../targets/index.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

export function registerMap(program: Command): void {
  program
    .command('map')
    .description('show what SERVER_PATH_REWRITES and SERVER_PATH_MAPPINGS make of a path (every rule that fired), and the Plex section it falls in')
    .argument('<path>', 'a path in any form (container, mount, drive)')
    .option('--json', 'print JSON')
    .option('--trigger <name>', "apply this SERVER_AUTOSCAN_TRIGGERS entry's REWRITE first, as its /triggers/<name> route does")
    .action(
      action(async (input: string, opts: { json?: boolean; trigger?: string }, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        let path = input;
        if (opts.trigger !== undefined) {
          const trigger = config.SERVER_AUTOSCAN_TRIGGERS[opts.trigger];
          if (!trigger) throw new UserError(`--trigger: no SERVER_AUTOSCAN_TRIGGERS entry named "${opts.trigger}" (names: ${Object.keys(config.SERVER_AUTOSCAN_TRIGGERS).join(', ')})`);
          path = placeRewriter(trigger.REWRITE)?.(input) ?? input;
        }
        // The checks the relay makes on a request, before and after mapping: what it would refuse, map refuses.
        const problem = invalidRequestPath(path);
        if (problem) throw new UserError(`the relay would refuse this path (400): ${problem}`);
        const mapped = mapIncomingPath(config, path);
        const mappedProblem = invalidMappedPath(mapped.path);
        if (mappedProblem) throw new UserError(`the relay would refuse this path (400): ${mappedProblem}`);
        const folder = scanFolderFor(mapped.path, config.SERVER_FILE_EXIST_PATH_MAPPINGS, undefined, Object.keys(config.SERVER_PATH_MAPPINGS));
        // Each target's own rewrite (PLEX_REWRITE, JELLYFIN.REWRITE, EMBY.REWRITE): what that server is sent.
        const plexFolder = placeRewriter(config.PLEX_REWRITE)?.(folder) ?? folder;
        const servers = { plex: plexFolder, jellyfin: placeRewriter(config.JELLYFIN.REWRITE)?.(folder) ?? folder, emby: placeRewriter(config.EMBY.REWRITE)?.(folder) ?? folder };
        let section: { id: string; title: string; location: string } | undefined;
        let sectionError: string | undefined;
        try {
          // The same lookup the relay makes: Plex's API, or its database for the scanner method.
          section = await plexBackendFor(config).resolveSection(plexFolder);
        } catch (err) {
          sectionError = (err as Error).message;
        }
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ input, trigger: opts.trigger ?? null, afterTrigger: path, servers, rewrites: mapped.rewrites, mapped: mapped.path, match: mapped.match ?? null, folder, section: section ?? null, sectionError: sectionError ?? null })}\n`);
          return;
        }
        const lines = [
          `input:   ${input}`,
          ...(opts.trigger !== undefined ? [`trigger: ${opts.trigger}'s REWRITE: ${path}`] : []),
          ...mapped.rewrites.map((r) => `rewrite: SERVER_PATH_REWRITES[${r.index}] "${r.from}" -> "${r.to}": ${r.after}`),
          `mapped:  ${mapped.path}`,
          mapped.match ? `matched: "${mapped.match.value}" -> "${mapped.match.key}"` : 'matched: no SERVER_PATH_MAPPINGS entry (path left as it is)',
          `folder:  ${folder}`,
          ...(['plex', 'jellyfin', 'emby'] as const).filter((k) => servers[k] !== folder).map((k) => `${`${k}:`.padEnd(8)} ${servers[k]} (its own REWRITE)`),
          section
            ? `section: ${section.id} (${section.title}), location ${section.location}`
            : `section: none${sectionError ? ` (${sectionError})` : ' (no Plex section location holds this folder)'}`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
