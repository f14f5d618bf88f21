import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PlexSettings } from '../../settings.ts';
import { longestPrefix } from '../../../../paths/mapping.ts';
import { TargetError } from '../../../http.ts';
import type { PlexApi } from '../../api.ts';
import { plexApiFor } from '../../tls-policy.ts';
import type { PlexScanBackend, PlexSectionRef } from '../backend.ts';
import { PlexDatabase } from '../../database.ts';
import { allSectionsFor, SectionCache } from '../../sections.ts';
import { noTokenNoScanner, scannerFile } from '../../setup-check.ts';
import { analyzeArgs, displayCommand, LIST_ARGS, scanArgs, scannerCommand, wrap, type ScannerCommand, type ScannerSettings } from './command.ts';
import { describeRun, runCommand, tail, type RunResult } from './run.ts';

export interface ScannerBackendOptions {
  /** Plex's library database: where the scanner method finds a folder's section (plex_autoscan's get_plex_section). */
  database: PlexDatabase;
  /** The HTTP API, when a token is set: the section list when the database cannot be read. */
  api?: PlexApi;
  /** Kill a scanner run after this long; 0 = never. */
  timeoutMs: number;
  /** PLEX_SCANNER_MAX_RETRIES: a scan whose scanner exits non-zero is run again at most this many times. */
  maxRetries?: number;
  /** Pause before running a failed scan again. */
  retryDelayMs?: number;
}

/** Pause before a failed scanner run is run again (PLEX_SCANNER_MAX_RETRIES). */
export const SCANNER_RETRY_DELAY_MS = 5_000;

/** The scanner kept exiting non-zero: the scan fails for good (the queue does not retry it). */
export class ScannerFailed extends TargetError {
  constructor(message: string) {
    super('fatal', message);
    this.name = 'ScannerFailed';
  }
}

/** A section location as the scanner method knows it. */
interface Location {
  sectionId: string;
  title: string;
  rootPath: string;
}

/** Scans by running the Plex Media Scanner binary, locally, with sudo, or through docker exec. */
export class PlexScannerBackend implements PlexScanBackend {
  readonly method = 'scanner' as const;
  private readonly apiSections: SectionCache | undefined;
  /** The tail of the run chain: one scanner process at a time, as plex_autoscan's scan lock did. */
  private lastRun: Promise<unknown> = Promise.resolve();

  constructor(
    readonly settings: ScannerSettings,
    private readonly opts: ScannerBackendOptions,
  ) {
    const api = opts.api;
    this.apiSections = api && new SectionCache(() => api.sections());
  }

  static fromSettings(config: PlexSettings): PlexScannerBackend {
    return new PlexScannerBackend(config, {
      database: new PlexDatabase(config.DATABASE_PATH),
      api: config.TOKEN ? plexApiFor(config) : undefined,
      timeoutMs: config.SCANNER_TIMEOUT * 1000,
      maxRetries: config.SCANNER_MAX_RETRIES,
    });
  }

  /** Section locations from Plex's database; from the API only when the database cannot be read and a token is set. */
  private async locations(): Promise<Location[]> {
    let dbError: string;
    try {
      return this.opts.database
        .sectionLocations()
        .map((l) => ({ sectionId: String(l.sectionId), title: l.title ?? '', rootPath: l.rootPath }));
    } catch (err) {
      dbError = (err as Error).message;
    }
    if (!this.apiSections) {
      // Neither the database nor the scanner here (the starter file on a machine without Plex): the key to
      // set is PLEX_TOKEN, and this is a setting to change, retried slowly.
      const file = scannerFile(this.settings.SCANNER);
      if (!this.settings.USE_DOCKER && file.startsWith('/') && !existsSync(file)) throw new TargetError('auth', noTokenNoScanner(this.settings.SCANNER));
      throw new TargetError('unavailable', `${dbError}; check PLEX_DATABASE_PATH (or set PLEX_TOKEN to read sections from the Plex API)`);
    }
    try {
      const sections = await this.apiSections.all();
      return sections.flatMap((s) => s.locations.map((rootPath) => ({ sectionId: s.id, title: s.title, rootPath })));
    } catch (err) {
      throw new TargetError(err instanceof TargetError ? err.kind : 'unavailable', `${dbError}; and the Plex API section list failed: ${(err as Error).message}`);
    }
  }

  async resolveSection(folder: string): Promise<PlexSectionRef | undefined> {
    const hit = longestPrefix(folder, await this.locations(), (l) => l.rootPath);
    return hit && { id: hit.sectionId, title: hit.title, location: hit.rootPath };
  }

  async resolveSections(folder: string): Promise<PlexSectionRef[]> {
    return allSectionsFor((await this.locations()).map((l) => ({ id: l.sectionId, title: l.title, location: l.rootPath })), folder);
  }

  async knownLocations(): Promise<string[]> {
    return (await this.locations()).map((l) => l.rootPath);
  }

  scanCommand(sectionId: string, folder: string): ScannerCommand {
    return scannerCommand(this.settings, scanArgs(sectionId, folder));
  }

  analyzeCommand(metadataIds: readonly number[], deep: boolean): ScannerCommand {
    return scannerCommand(this.settings, analyzeArgs(metadataIds, deep));
  }

  listCommand(): ScannerCommand {
    return scannerCommand(this.settings, LIST_ARGS);
  }

  describeScan(sectionId: string, folder: string): string {
    return displayCommand(this.scanCommand(sectionId, folder));
  }

  /**
   * Runs a command and gives back what happened, whatever its status (the CLI uses this). Runs wait
   * for each other: concurrent scanners fight over Plex's database.
   */
  run(cmd: ScannerCommand, opts: { forwardSignals?: boolean } = {}): Promise<RunResult> {
    const next = this.lastRun.then(() => runCommand(cmd, { timeoutMs: this.opts.timeoutMs, forwardSignals: opts.forwardSignals }));
    this.lastRun = next.catch(() => undefined);
    return next;
  }

  /** Runs a command; anything but status 0 is a failed delivery the queue retries. */
  private async runOrThrow(what: string, cmd: ScannerCommand): Promise<RunResult> {
    const result = await this.run(cmd);
    if (result.status !== 0) throw new TargetError('unavailable', describeRun(what, result));
    return result;
  }

  /**
   * One partial scan. A scanner that exits non-zero is run again, at most PLEX_SCANNER_MAX_RETRIES times,
   * then the scan fails for good (ScannerFailed). A run killed at PLEX_SCANNER_TIMEOUT (or by any signal) is a
   * failed run too: retried as unavailable, it would hang and be killed again forever. Only a scanner that cannot
   * be started at all is a retryable failure (TargetError 'unavailable').
   */
  async scan(sectionId: string, folder: string): Promise<{ detail?: string }> {
    const maxRetries = Math.max(0, this.opts.maxRetries ?? 3);
    let lastFailure = '';
    for (let run = 1; ; run++) {
      const result = await this.run(this.scanCommand(sectionId, folder));
      if (result.status === 0) {
        // The history keeps what the scanner said (e.g. the deprecation notice newer Plex versions print),
        // and why earlier runs failed.
        const said = tail(result.stderr) || tail(result.stdout);
        const earlier = run > 1 ? ` on run ${run} (before: ${lastFailure})` : '';
        return { detail: `scanner exited with status 0${earlier}${said ? `; output: ${said}` : ''}` };
      }
      const what = describeRun('Plex Media Scanner', result);
      if (result.spawnError) throw new TargetError('unavailable', what);
      if (run > maxRetries) throw new ScannerFailed(`${what}; gave up after ${run} runs (PLEX_SCANNER_MAX_RETRIES ${maxRetries})`);
      lastFailure = what;
      await sleep(this.opts.retryDelayMs ?? SCANNER_RETRY_DELAY_MS);
    }
  }

  async analyze(metadataIds: readonly number[], deep: boolean): Promise<void> {
    if (metadataIds.length === 0) return;
    await this.runOrThrow(`Plex Media Scanner ${deep ? '--analyze-deeply' : '--analyze'}`, this.analyzeCommand(metadataIds, deep));
  }

  /** The scanner exists, checked through the same wrapper (docker, sudo) by bash, so escaped forms work. */
  async available(): Promise<{ ok: boolean; error?: string }> {
    const result = await runCommand(wrap(this.settings, `[ -e ${this.settings.SCANNER} ]`), { timeoutMs: 15_000 });
    if (result.status === 0) return { ok: true };
    // `[ -e ]` fails silently; anything on stderr came from docker, sudo or bash.
    if (result.status === 1 && !result.stderr.trim()) {
      return { ok: false, error: `the Plex Media Scanner ${this.settings.SCANNER} does not exist (check PLEX_SCANNER)` };
    }
    return { ok: false, error: describeRun('the Plex Media Scanner check', result) };
  }
}
