import type { Config } from '../../config/schema.ts';
import { longestPrefix } from '../../paths/mapping.ts';
import { TargetError } from '../http.ts';
import { PlexApi } from '../plex/api.ts';
import type { PlexScanBackend, PlexSectionRef } from '../plex/backend.ts';
import { PlexDatabase } from '../plex/database.ts';
import { SectionCache } from '../plex/sections.ts';
import { analyzeArgs, displayCommand, LIST_ARGS, scanArgs, scannerCommand, wrap, type ScannerCommand, type ScannerSettings } from './command.ts';
import { describeRun, runCommand, tail, type RunResult } from './run.ts';

export interface ScannerBackendOptions {
  /** Plex's library database: where the scanner method finds a folder's section (plex_autoscan's get_plex_section). */
  database: PlexDatabase;
  /** The HTTP API, when a token is set: the section list when the database cannot be read. */
  api?: PlexApi;
  /** Kill a scanner run after this long; 0 = never. */
  timeoutMs: number;
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

  static fromConfig(config: Config): PlexScannerBackend {
    return new PlexScannerBackend(config, {
      database: new PlexDatabase(config.PLEX_DATABASE_PATH),
      api: config.PLEX_TOKEN ? new PlexApi(config.PLEX_LOCAL_URL, config.PLEX_TOKEN) : undefined,
      timeoutMs: config.PLEX_SCANNER_TIMEOUT * 1000,
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

  async scan(sectionId: string, folder: string): Promise<{ detail?: string }> {
    const result = await this.runOrThrow('Plex Media Scanner', this.scanCommand(sectionId, folder));
    // The history keeps what the scanner said (e.g. the deprecation notice newer Plex versions print).
    const said = tail(result.stderr) || tail(result.stdout);
    return { detail: `scanner exited with status 0${said ? `; output: ${said}` : ''}` };
  }

  async analyze(metadataIds: readonly number[], deep: boolean): Promise<void> {
    if (metadataIds.length === 0) return;
    await this.runOrThrow(`Plex Media Scanner ${deep ? '--analyze-deeply' : '--analyze'}`, this.analyzeCommand(metadataIds, deep));
  }

  /** The scanner exists, checked through the same wrapper (docker, sudo) by bash, so escaped forms work. */
  async available(): Promise<{ ok: boolean; error?: string }> {
    const result = await runCommand(wrap(this.settings, `[ -e ${this.settings.PLEX_SCANNER} ]`), { timeoutMs: 15_000 });
    if (result.status === 0) return { ok: true };
    // `[ -e ]` fails silently; anything on stderr came from docker, sudo or bash.
    if (result.status === 1 && !result.stderr.trim()) {
      return { ok: false, error: `the Plex Media Scanner ${this.settings.PLEX_SCANNER} does not exist (check PLEX_SCANNER)` };
    }
    return { ok: false, error: describeRun('the Plex Media Scanner check', result) };
  }
}
