import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { tempDir } from './temp-dir.ts';

/** Debian keeps PostgreSQL's programs out of PATH, under /usr/lib/postgresql/<version>/bin. */
export function postgresBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : undefined;
}

export interface PgCluster {
  /** postgres://scanrelay@127.0.0.1:<port>/<db> for a database created by createDatabase (or the default one). */
  url(db?: string): string;
  port: number;
  /** A fresh, empty database; returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server at once (like a crash or a lost network): open connections break. */
  stopNow(): void;
  /** Starts it again on the same port and data folder. */
  start(): void;
  /** Stops it and removes its folder. */
  destroy(): void;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

let dbCounter = 0;

/**
 * A throwaway PostgreSQL cluster: initdb in a temp folder, a free port on 127.0.0.1, its unix socket in the
 * same folder, trust authentication for the user `scanrelay`. PostgreSQL refuses to run as root, so as root
 * the cluster runs as the `postgres` system user (Debian's package creates it), or `nobody`. `statementStats`
 * loads pg_stat_statements and creates its view in the default database, ready to count.
 */
export async function startPgCluster(opts: { durable?: boolean; statementStats?: boolean } = {}): Promise<PgCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): npm test installs the postgresql package');
  // A file that ends without destroy() (a failing before hook, a thrown test) still stops its cluster, then
  // removes its folder, when its process exits: a server left running would hold its port and files. Whatever
  // this process believes, a postmaster.pid says a server may run there (pg_ctl start can time out after it started).
  const dir = tempDir('scanrelay-pg-', () => {
    if (existsSync(join(data, 'postmaster.pid'))) run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
  });
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const runAs = asRoot ? (spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody') : undefined;
  if (runAs) {
    const uid = Number(execFileSync('id', ['-u', runAs]).toString().trim());
    const gid = Number(execFileSync('id', ['-g', runAs]).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (program: string, args: string[]) => {
    const [cmd, ...rest] = runAs ? ['runuser', '-u', runAs, '--', join(bin, program), ...args] : [join(bin, program), ...args];
    const res = spawnSync(cmd!, rest, { encoding: 'utf8', cwd: dir });
    if (res.status !== 0) {
      const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8').slice(-2000) : '';
      throw new Error(`${program} failed (${res.status}): ${res.stderr || res.stdout}\n${log}`);
    }
  };
  run('initdb', ['-D', data, '-U', 'scanrelay', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const port = await freePort();
  // Tests need no crash safety of the cluster itself; a benchmark keeps PostgreSQL's (fsync on, as SQLite's synchronous=FULL).
  const speed = opts.durable ? '' : ' -c fsync=off -c full_page_writes=off';
  // A benchmark counts the statements each relay sends (pg_stat_statements, in the contrib modules Debian's package has).
  const stats = opts.statementStats ? ' -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all' : '';
  const serverOpts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${speed}${stats}`;
  let running = false;
  const start = () => {
    if (running) return;
    run('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', join(dir, 'server.log'), '-o', serverOpts]);
    running = true;
  };
  const stopNow = () => {
    if (!running) return;
    run('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w']);
    running = false;
  };
  start();
  const url = (db = 'postgres') => `postgres://scanrelay@127.0.0.1:${port}/${db}`;
  if (opts.statementStats) {
    const client = new pg.Client({ connectionString: url() });
    await client.connect();
    try {
      await client.query('CREATE EXTENSION pg_stat_statements');
    } finally {
      await client.end();
    }
  }
  return {
    url,
    port,
    async createDatabase(name = `t${process.pid}_${++dbCounter}`) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stopNow,
    start,
    destroy() {
      try {
        stopNow();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
