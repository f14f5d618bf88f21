import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { sendTestMessages } from '../notify/test-message.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

export function registerNotifyTest(program: Command): void {
  program
    .command('notify-test [name]')
    .description('send a test message to each NOTIFICATIONS destination (or to <name>) and print what each service answered')
    .action(
      action(async (name: string | undefined, _opts: unknown, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        const names = Object.keys(config.NOTIFICATIONS);
        if (names.length === 0) throw new UserError('no NOTIFICATIONS in the config: add one (docs/notifications.md)');
        if (name !== undefined && !names.includes(name)) throw new UserError(`no notification named ${JSON.stringify(name)}: the config has ${names.join(', ')}`);
        const results = await sendTestMessages(config.NOTIFICATIONS, name);
        for (const r of results) {
          const line = `${r.name} (${r.type}, ${r.url}): ${r.ok ? 'sent' : r.outcome === 'refused' ? 'refused' : 'not taken'}: ${r.answer}\n`;
          (r.ok ? process.stdout : process.stderr).write(line);
        }
        if (results.some((r) => !r.ok)) process.exit(1);
      }),
    );
}
