import type { Command } from 'commander';
import { mapPath } from '../paths/mapping.ts';
import { scanFolderFor } from '../paths/folder.ts';
import { plexBackendFor } from '../targets/index.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

export function registerMap(program: Command): void {
  program
    .command('map')
    .description('show what SERVER_PATH_MAPPINGS makes of a path, and the Plex section it falls in')
    .argument('<path>', 'a path in any form (container, mount, drive)')
    .option('--json', 'print JSON')
    .action(
      action(async (path: string, opts: { json?: boolean }, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        const mapped = mapPath(config.SERVER_PATH_MAPPINGS, path);
        const folder = scanFolderFor(mapped.path, config.SERVER_FILE_EXIST_PATH_MAPPINGS);
        let section: { id: string; title: string; location: string } | undefined;
        let sectionError: string | undefined;
        try {
          // The same lookup the relay makes: Plex's API, or its database for the scanner method.
          section = await plexBackendFor(config).resolveSection(folder);
        } catch (err) {
          sectionError = (err as Error).message;
        }
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ input: path, mapped: mapped.path, match: mapped.match ?? null, folder, section: section ?? null, sectionError: sectionError ?? null })}\n`);
          return;
        }
        const lines = [
          `input:   ${path}`,
          `mapped:  ${mapped.path}`,
          mapped.match ? `matched: "${mapped.match.value}" -> "${mapped.match.key}"` : 'matched: no SERVER_PATH_MAPPINGS entry (path left as it is)',
          `folder:  ${folder}`,
          section
            ? `section: ${section.id} (${section.title}), location ${section.location}`
            : `section: none${sectionError ? ` (${sectionError})` : ' (no Plex section location holds this folder)'}`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
