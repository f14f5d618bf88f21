import type { Command } from 'commander';
import type { Config } from '../config/schema.ts';
import { httpRequest } from '../targets/http.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';

/** Where the relay's /healthz is, from the same config (and environment overrides) the server reads. */
export function healthUrl(config: Pick<Config, 'SERVER_IP' | 'SERVER_PORT'>): string {
  // A wildcard listen address is reached through loopback.
  const host = config.SERVER_IP === '0.0.0.0' || config.SERVER_IP === '' ? '127.0.0.1' : config.SERVER_IP === '::' ? '[::1]' : config.SERVER_IP.includes(':') ? `[${config.SERVER_IP}]` : config.SERVER_IP;
  return `http://${host}:${config.SERVER_PORT}/healthz`;
}

export function registerHealth(program: Command): void {
  program
    .command('health')
    .description("exit 0 when the relay configured by --config answers GET /healthz (the Docker image's health check)")
    .option('--timeout <seconds>', 'give up after this long', '4')
    .action(
      action(async (opts: { timeout: string }, cmd: Command) => {
        const { config } = loadExistingConfig(settingsOf(cmd));
        const url = healthUrl(config);
        try {
          const res = await httpRequest({ url, timeoutMs: Math.max(1, Number(opts.timeout) || 4) * 1000 }, `the relay at ${url}`);
          if (res.status === 200) {
            process.stdout.write(`healthy: ${url} answered 200\n`);
            return;
          }
          process.stderr.write(`scanrelay: unhealthy: ${url} answered HTTP ${res.status}\n`);
        } catch (err) {
          process.stderr.write(`scanrelay: unhealthy: ${(err as Error).message} (is "scanrelay server" running with this config?)\n`);
        }
        process.exit(1);
      }),
    );
}
