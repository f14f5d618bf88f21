import { asOutcome, type AfterDelivery, type AfterOutcome, type DeliveryResult, type ScanItem, type SectionRef, type Target, type TargetDescription, type TargetSections } from '../../core/scan.ts';
import type { SetupProblem } from '../../core/status.ts';
import type { PlexSettings } from './settings.ts';
import { plexSetupProblems } from './setup-check.ts';
import type { Logger } from '../../core/logger.ts';
import { statProbe, type FolderProbe } from '../../paths/folder.ts';
import { answeredWithout, resultFromError } from '../http.ts';
import { analyzeFiles } from './analyze.ts';
import type { PlexApi } from './api.ts';
import type { PlexScanBackend, PlexSectionRef } from './backends/backend.ts';
import { runScanCommand } from './commands.ts';
import { plexScanWatch, type ScanWatch, type ScanWatchTimings } from './completion.ts';
import type { Transport } from './notifications/stream.ts';
import { refreshScannedItems } from './metadata-refresh.ts';
import { actOnItems } from './item-action.ts';
import { PlexApiBackend } from './backends/api.ts';
import { SectionCache } from './sections.ts';
import type { PlexDatabase } from './database.ts';
import { emptyTrashEnabled, emptyTrashGuarded } from './empty-trash.ts';
import { decideFileCheck, pathsForCheck } from './file-checks.ts';
import { fixMismatched } from './fix-match.ts';
import { filesInPlex, statFileSize, type FileSize } from './in-plex.ts';
import type { RcloneRc } from './rclone-rc.ts';
import { runningScanner, type ProcessDeps } from './scanner-process.ts';
import { ScannerFailed } from './backends/scanner/backend.ts';
import { WaitTracker } from './wait.ts';
import type { PathRewriter } from '../../paths/rewrite.ts';
import { itemForTarget } from '../rewrite.ts';
import { plexApiFor } from './tls-policy.ts';
import { scannedItems } from './scanned-items.ts';

/** Waits and caps of the steps around a scan; plex_autoscan's values where it had one. */
export interface PlexTimings extends ScanWatchTimings {
  /**
   * PLEX_WAIT_FOR_EXTERNAL_SCANNERS: poll interval and the cap before scanning anyway. plex_autoscan polled
   * every 60 s; shorter here because scanrelay's own previous scan also counts and usually ends in seconds.
   */
  externalScanPollMs: number;
  /** The same poll while the notification stream is connected (reading it costs Plex nothing). */
  externalScanStreamPollMs: number;
  externalScanMaxWaitMs: number;
  /** PLEX_CHECK_BEFORE_SCAN: first retry (plex_autoscan: 15 s), doubling up to the max. */
  aliveRetryMs: number;
  aliveRetryMaxMs: number;
  /** Database lookups for analyze and empty-trash PUTs: plex_autoscan's 5 tries, 10 s apart. */
  lookupTries: number;
  lookupDelayMs: number;
  emptyTrashTries: number;
  emptyTrashRetryMs: number;
}

export const DEFAULT_PLEX_TIMINGS: PlexTimings = {
  externalScanPollMs: 10_000,
  externalScanStreamPollMs: 1_000,
  externalScanMaxWaitMs: 60 * 60_000,
  aliveRetryMs: 15_000,
  aliveRetryMaxMs: 2 * 60_000,
  // One Plex scan at a time waits for this watch, so it polls often enough to see a short scan end.
  activitiesMaxAgeMs: 150,
  // While the stream is away: often enough to see a short scan (Plex's own take about 0.1-0.2 s for a folder).
  completionPollMs: 200,
  completionAppearMs: 2_000,
  completionMaxMs: 2 * 60 * 60_000,
  completionFallbackMs: 10_000,
  streamBackoffMs: 1_000,
  streamBackoffMaxMs: 60_000,
  streamKeepaliveMs: 30_000,
  lookupTries: 5,
  lookupDelayMs: 10_000,
  emptyTrashTries: 5,
  emptyTrashRetryMs: 10_000,
};

/** What the steps around the scan need: the settings always, the rest where this setup has it. */
export interface PlexSteps {
  /** Its own entry and the relay-wide slice (settings.ts). */
  settings: PlexSettings;
  /** The HTTP API (needs PLEX_TOKEN): /activities, /myplex/account, emptyTrash. */
  api?: PlexApi;
  db?: PlexDatabase;
  rclone?: RcloneRc;
  probe?: FolderProbe;
  fileSize?: FileSize;
  timings?: Partial<PlexTimings>;
  /** How running Plex Media Scanner processes are found (PLEX_WAIT_FOR_EXTERNAL_SCANNERS without a token). */
  processes?: ProcessDeps;
  /** PLEX_REWRITE: the relay's path as Plex names it (autoscan's targets/plex/plex.go:79). */
  rewrite?: PathRewriter;
  /**
   * Plex's notification stream for scan completion (API method only): the transports to try, in order;
   * false never connects (completion by polling only).
   */
  notifications?: readonly Transport[] | false;
}

/**
 * Plex: a partial scan of exactly the queued folder, in the section that holds it, by API or scanner,
 * with plex_autoscan's steps around it. Steps that wait before the turn (file checks, other scans running)
 * answer "retry later" so the queue delivers other items meanwhile; once a scan's before-command ran, or
 * while it waits for Plex to answer, it keeps the turn (holdTurn), as under plex_autoscan's scan lock.
 * Steps after the scan run after the delivery is recorded (see AfterDelivery) and hold the turn too.
 */
export class PlexTarget implements Target {
  /** One scan at a time per Plex server, from the before-command to the after-command (plex.py:134-232). */
  readonly serial = true;
  readonly kind = 'plex';
  private readonly timings: PlexTimings;
  private readonly externalWaits = new WaitTracker();
  private readonly aliveWaits = new WaitTracker();
  private readonly warned = new Set<string>();
  /** Scans whose RUN_COMMAND_BEFORE_SCAN already ran (until their delivery ends), with the folder their file check chose. */
  private readonly beforeRan = new Map<number, { folder: string; folderOnly: boolean }>();
  private watch: ScanWatch | undefined;
  private sectionList: SectionCache | undefined;

  constructor(
    readonly backend: PlexScanBackend,
    private readonly log: Logger,
    private readonly steps: PlexSteps,
    /** The TARGETS key (`plex` for the top-level PLEX_* keys): its deliveries, turn and logs go by it. */
    readonly name = 'plex',
  ) {
    this.timings = { ...DEFAULT_PLEX_TIMINGS, ...steps.timings };
    if (steps.rewrite) this.toTargetPath = steps.rewrite;
    this.address = steps.settings.URL;
    const config = steps.settings;
    if (config.FIX_MISMATCHED && !steps.api) {
      // plex_autoscan fixed matches only with a token too (plex.py:213).
      log.warn({ key: 'PLEX_FIX_MISMATCHED' }, 'PLEX_FIX_MISMATCHED needs PLEX_TOKEN (and PLEX_LOCAL_URL): matches are not checked');
    }
    if (!config.SERVER_FILE_CHECKS_ENABLED) {
      log.info({ key: 'SERVER_FILE_CHECKS_ENABLED' }, 'file-exists checks are off: folders are scanned without looking for the files first');
    }
    if (config.ANALYZE_TYPE === 'deep' && backend.method === 'api') {
      log.info({ key: 'PLEX_ANALYZE_TYPE' }, 'PLEX_ANALYZE_TYPE "deep": the Plex HTTP API has one analyze action, so a basic analysis runs (the scanner method can analyze deeply)');
    }
  }

  readonly toTargetPath?: (path: string) => string;
  readonly address: string;

  /** The settings this target's steps read: its own entry, with the relay-wide slice (settings.ts). */
  get settings(): PlexSettings {
    return this.steps.settings;
  }

  describe(): TargetDescription {
    return { type: 'plex', url: this.steps.settings.URL, method: this.backend.method };
  }

  /** What the scan method needs (setup-check.ts), against this target's own settings. */
  setupProblems(): Promise<SetupProblem[]> {
    return plexSetupProblems(this.steps.settings, this.backend);
  }

  /** The section holding a folder: asked in Plex's own path (its REWRITE), from the API or Plex's database. */
  readonly sections: TargetSections = {
    find: (folder: string): Promise<SectionRef | undefined> => this.backend.resolveSection(this.toTargetPath ? this.toTargetPath(folder) : folder),
  };

  async deliver(queued: ScanItem): Promise<DeliveryResult> {
    const item = itemForTarget(queued, this.steps.rewrite);
    if (this.steps.api) this.scanWatch(this.steps.api).start();
    let result = await this.attempt(item);
    // Once its before-command ran, a scan keeps Plex's turn until its after-command ran (plex.py:134-232:
    // both inside the scan lock), so no other scan's commands run in between.
    if (result.outcome === 'retry' && this.beforeRan.has(item.id)) result = { ...result, holdTurn: true };
    if (result.outcome !== 'retry') {
      this.externalWaits.end(item.id);
      this.aliveWaits.end(item.id);
      this.beforeRan.delete(item.id);
    }
    return result;
  }

  private async attempt(item: ScanItem): Promise<DeliveryResult> {
    const config = this.steps.settings;
    let folder = item.folder;
    let sectionId = '';
    try {
      // The skip and the file checks come before the turn (plex.py:63-109); a scan holding the turn keeps what
      // they found, so it never ends without its after-command.
      const holding = this.beforeRan.get(item.id);
      // A refresh or analyze of the items at the files: no scan, no before/after commands. No item there yet: scanned.
      if (!holding && item.action) {
        const acted = await this.itemAction(item, item.action);
        if (acted) return acted;
      }
      const skip = holding ? undefined : this.alreadyInPlex(item, config);
      if (skip) return skip;
      const checked = holding ?? (await this.checkFiles(item, config));
      if ('outcome' in checked) return checked;
      folder = checked.folder;
      const folderOnly = checked.folderOnly;
      // plex_autoscan's order (plex.py:134-173): other scans, the before-command, then Plex answering;
      // all before the section lookup, which itself needs Plex up. A scan whose before-command ran does
      // not wait for other scans again: it holds the turn.
      const held =
        (this.beforeRan.has(item.id) ? undefined : await this.waitForExternalScans(item, config)) ??
        (await this.beforeCommand(item, checked, config)) ??
        (await this.waitForPlex(item, config));
      if (held) return held;
      // Every library whose location holds the folder gets the scan (autoscan targets/plex/plex.go:81-104),
      // in this one delivery: the next queued scan still waits for all of them and their after-steps.
      const sections = this.backend.resolveSections
        ? await this.backend.resolveSections(folder)
        : [await this.backend.resolveSection(folder)].filter((s): s is PlexSectionRef => s !== undefined);
      if (sections.length === 0) {
        const known = (await this.backend.knownLocations()).join(', ') || 'none';
        return await this.failAfterBefore(item, folder, '', `"${folder}" is in no Plex section (section locations: ${known}); check SERVER_PATH_MAPPINGS`);
      }
      const afters: AfterDelivery[] = [];
      const details: string[] = [];
      for (const [n, section] of sections.entries()) {
        sectionId = section.id;
        this.log.debug({ scan: item.id, section: section.id, request: this.backend.describeScan(section.id, folder) }, 'requesting Plex partial scan');
        let detail: string | undefined;
        const sentAt = Date.now();
        if (this.steps.api && this.backend.method === 'api') this.scanWatch(this.steps.api).noteSent(section.id, sentAt);
        try {
          ({ detail } = await this.backend.scan(section.id, folder));
        } catch (err) {
          if (!(err instanceof ScannerFailed)) throw err;
          // plex_autoscan goes on after a failed scanner run (plex.py:173-232). Empty trash and analyze make no
          // sense after a scan that failed; the after-command does (it pairs with the before-command).
          this.log.error({ scan: item.id, key: 'PLEX_SCANNER_MAX_RETRIES', error: err.message }, 'the Plex Media Scanner kept failing; the scan fails');
          return await this.failAfterBefore(item, folder, section.id, err.message, true);
        }
        const base = [
          `section ${section.id} (${section.title}) via ${this.backend.method}`,
          folder !== item.folder || folderOnly ? `scanned folder ${folder} (files never appeared)` : undefined,
          detail,
        ].filter(Boolean).join('; ');
        details.push(base);
        afters.push(this.afterScan(item, section, folder, folderOnly, base, config, sentAt, n === sections.length - 1));
      }
      const after: AfterDelivery =
        afters.length === 1 ? afters[0]! : async (signal) => {
          const out: AfterOutcome[] = [];
          for (const next of afters) out.push(asOutcome(await next(signal)));
          const lookups = out.flatMap((o) => (o.items ? [o.items] : []));
          return {
            detail: out.map((o) => o.detail).join(' | '),
            ...(lookups.length ? { items: async (s: AbortSignal) => (await Promise.all(lookups.map((l) => l(s)))).flat() } : {}),
          };
        };
      return { outcome: 'done', detail: `${details.join(' | ')}; sent, completion unknown`, after };
    } catch (err) {
      const result = resultFromError(err);
      return result.outcome === 'failed' ? await this.failAfterBefore(item, folder, sectionId, result.error) : result;
    }
  }

  /**
   * A scan that fails for good. When its RUN_COMMAND_BEFORE_SCAN ran (or `always`: a scanner that kept failing,
   * as plex_autoscan went on to its after-command), RUN_COMMAND_AFTER_SCAN runs too: the pair always closes.
   */
  private async failAfterBefore(item: ScanItem, folder: string, section: string, error: string, always = false): Promise<DeliveryResult> {
    if (!always && !this.beforeRan.has(item.id)) return { outcome: 'failed', error };
    const config = this.steps.settings;
    const after = await runScanCommand('RUN_COMMAND_AFTER_SCAN', config.RUN_COMMAND_AFTER_SCAN, { path: folder, section }, this.log, config.RUN_COMMAND_TIMEOUT * 1000);
    return { outcome: 'failed', error: `${error}${after ? `; after-scan command ${after.ok && after.code === 0 ? 'ok' : 'failed'}` : ''}` };
  }

  async available(): Promise<{ ok: boolean; error?: string; note?: string }> {
    const api = this.steps.api;
    if (api) this.scanWatch(api).start();
    const r = await this.backend.available();
    return this.backend.method === 'api' && api ? { ...r, note: this.scanWatch(api).describe() } : r;
  }

  /**
   * Plex's machineIdentifier (`GET /identity` needs no token, so the scanner method can ask it too) and, with a
   * token, its friendlyName. The same Plex answers the same id whichever URL a relay uses.
   */
  async identity(): Promise<{ id: string; name?: string } | undefined> {
    let machineIdentifier: string | undefined;
    try {
      ({ machineIdentifier } = await (this.steps.api ?? plexApiFor(this.steps.settings)).identity());
    } catch (err) {
      // Something that answers HTTP but not /identity (a proxy, a stand-in): it cannot say who it is, ever.
      if (answeredWithout(err)) return undefined;
      throw err;
    }
    if (!machineIdentifier) return undefined;
    const name = await this.steps.api?.friendlyName().catch(() => undefined);
    return name ? { id: machineIdentifier, name } : { id: machineIdentifier };
  }

  /**
   * The library scans Plex runs now: /activities (or its notification stream) with a token, else a running Plex
   * Media Scanner process. Asked by a relay that took Plex's turn over from a relay that died, before it sends.
   */
  async scanning(): Promise<string[]> {
    const api = this.steps.api;
    if (api) return (await this.scanWatch(api).running()).map((a) => a.title ?? a.sectionId ?? 'a library scan');
    const proc = await runningScanner(this.steps.settings, this.steps.processes);
    return proc ? [`${proc.name} (pid ${proc.pid})`] : [];
  }

  /** Closes the notification stream (scanrelay stopping). */
  close(): void {
    this.watch?.close();
  }

  /** Section locations: from the API, or Plex's database for the scanner method. */
  libraryRoots(fresh = false): Promise<string[]> {
    return this.backend.knownLocations(fresh);
  }

  /** SERVER_SKIP_FILES_IN_PLEX (and always for drive changes, as plex_autoscan did): files Plex already has need no scan. */
  private alreadyInPlex(item: ScanItem, config: PlexSettings): DeliveryResult | undefined {
    // With files beyond the kept sample (moreFiles), Plex having the sample says nothing about the rest.
    if (!(config.SERVER_SKIP_FILES_IN_PLEX || item.source === 'Drive') || item.files.length === 0 || item.moreFiles || item.updateType === 'Deleted' || !this.steps.db) return undefined;
    let found;
    try {
      found = filesInPlex(this.steps.db, item.files, config, this.steps.fileSize ?? statFileSize);
    } catch (err) {
      this.log.warn({ scan: item.id, key: 'SERVER_SKIP_FILES_IN_PLEX', err: (err as Error).message }, 'cannot read the Plex database; scanning anyway');
      return undefined;
    }
    if (found.notInPlex.length > 0) return undefined;
    this.log.info({ scan: item.id, key: 'SERVER_SKIP_FILES_IN_PLEX', files: found.inPlex }, 'every file is already in Plex with the same size; no scan needed');
    return { outcome: 'done', detail: `not scanned: ${found.inPlex.length === 1 ? 'the file is' : 'every file is'} already in Plex` };
  }

  /**
   * SERVER_MAX_FILE_CHECKS / SERVER_FILE_CHECK_DELAY: one check per delivery attempt, the count kept with
   * the delivery; between checks the item waits in the queue, not in a sleeping task. Deletions are not
   * checked (the file is meant to be gone).
   */
  private async checkFiles(item: ScanItem, config: PlexSettings): Promise<DeliveryResult | { folder: string; folderOnly: boolean }> {
    if (item.updateType === 'Deleted' || !config.SERVER_FILE_CHECKS_ENABLED) return { folder: item.folder, folderOnly: false };
    const probe = this.steps.probe ?? statProbe;
    const check = item.fileChecks + 1;
    const max = Math.max(1, config.SERVER_MAX_FILE_CHECKS);
    if (check > 1 && this.steps.rclone) {
      const missing = pathsForCheck(item, config, check).paths.filter((p) => probe(p.visible) === 'missing');
      for (const p of missing) await this.steps.rclone.refreshFor(p.visible);
    }
    const decision = decideFileCheck(item, config, probe);
    const ctx = { scan: item.id, key: 'SERVER_MAX_FILE_CHECKS', check, of: max };
    switch (decision.kind) {
      case 'ready':
        if (decision.folderOnly) {
          this.log.warn({ ...ctx, key: 'SERVER_SCAN_FOLDER_ON_FILE_EXISTS_EXHAUSTION', folder: decision.folder }, 'the files never appeared but their folder exists; scanning the folder');
        } else if (check > 1 || decision.missing.length) {
          this.log.info({ ...ctx, missing: decision.missing.map((p) => p.visible) }, 'file exists; scanning');
        } else {
          this.log.debug(ctx, 'file exists on the first check');
        }
        return { folder: decision.folder, folderOnly: decision.folderOnly };
      case 'wait': {
        const missing = decision.missing[0]!.visible;
        this.log.info({ ...ctx, path: missing, retryInS: config.SERVER_FILE_CHECK_DELAY }, 'file not there yet; checking again later (other scans go on meanwhile)');
        return {
          outcome: 'retry',
          error: `waiting for ${missing} to appear (check ${check} of ${max})`,
          retryAfterMs: config.SERVER_FILE_CHECK_DELAY * 1000,
          countsAsAttempt: false,
          fileChecks: check,
        };
      }
      case 'exhausted': {
        const missing = decision.missing.map((p) => p.visible).join(', ');
        this.log.warn({ ...ctx, missing }, 'file never appeared; not scanning');
        return { outcome: 'failed', error: `not scanned: ${missing} did not appear after ${check} file check(s) (SERVER_MAX_FILE_CHECKS)` };
      }
    }
  }

  /**
   * PLEX_WAIT_FOR_EXTERNAL_SCANNERS: while Plex is scanning, this scan waits (capped). With a token, Plex's
   * /activities says so; without one, a running Plex Media Scanner process, found as plex_autoscan finds it.
   */
  private async waitForExternalScans(item: ScanItem, config: PlexSettings): Promise<DeliveryResult | undefined> {
    if (!config.WAIT_FOR_EXTERNAL_SCANNERS) return undefined;
    const api = this.steps.api;
    let running: unknown[];
    try {
      if (api) {
        running = (await this.scanWatch(api).running()).map((a) => a.title ?? a.sectionId);
      } else {
        const proc = await runningScanner(config, this.steps.processes);
        running = proc ? [`${proc.name} (pid ${proc.pid}${proc.container ? `, container ${proc.container}` : ''})`] : [];
      }
    } catch (err) {
      this.log.debug({ scan: item.id, err: (err as Error).message }, 'cannot tell whether Plex is scanning; not waiting for other scans');
      this.externalWaits.end(item.id);
      return undefined;
    }
    if (running.length === 0) {
      const waited = this.externalWaits.end(item.id);
      if (waited) this.log.info({ scan: item.id, key: 'PLEX_WAIT_FOR_EXTERNAL_SCANNERS', waitedS: Math.round((Date.now() - waited.since) / 1000) }, 'other Plex scans ended; scanning');
      return undefined;
    }
    const wait = this.externalWaits.poll(item.id);
    const waited = Date.now() - wait.since;
    const ctx = { scan: item.id, key: 'PLEX_WAIT_FOR_EXTERNAL_SCANNERS', running, waitedS: Math.round(waited / 1000) };
    if (waited >= this.timings.externalScanMaxWaitMs) {
      this.externalWaits.end(item.id);
      this.log.warn(ctx, 'gave up waiting for other Plex scans to end; scanning anyway');
      return undefined;
    }
    const retryAfterMs = api && this.scanWatch(api).mode() !== 'polling' ? this.timings.externalScanStreamPollMs : this.timings.externalScanPollMs;
    // One line when the wait begins; the frequent looks after it are debug.
    this.log[wait.polls === 1 ? 'info' : 'debug']({ ...ctx, retryInS: retryAfterMs / 1000 }, 'another Plex library scan is running; waiting');
    // `busy`: Plex's turn is held meanwhile, not this scan; when Plex is free the first scan by priority and age goes.
    return { outcome: 'retry', error: 'waiting for another Plex library scan to end', retryAfterMs, countsAsAttempt: false, busy: true };
  }

  /**
   * RUN_COMMAND_BEFORE_SCAN, once per queued scan (not again while it waits for Plex or is retried). The
   * section is looked up first when Plex (or its database) can be asked without waiting: a folder in no
   * section then fails here, before any command runs, as plex_autoscan refused it before queueing
   * (scan.py:116-118). When Plex cannot be asked (it may be down, and the command may be what brings it up),
   * the command runs with an empty $SCANRELAY_SECTION, and the after-command is then sure to run too
   * (failAfterBefore). Holds the scan only for a folder in no section.
   */
  private async beforeCommand(item: ScanItem, checked: { folder: string; folderOnly: boolean }, config: PlexSettings): Promise<DeliveryResult | undefined> {
    const folder = checked.folder;
    if (config.RUN_COMMAND_BEFORE_SCAN.length <= 2 || this.beforeRan.has(item.id)) return undefined;
    let section: PlexSectionRef | undefined;
    let known = true;
    try {
      section = await this.backend.resolveSection(folder);
    } catch {
      known = false;
    }
    if (known && !section) {
      const roots = (await this.backend.knownLocations().catch(() => [])).join(', ') || 'none';
      return { outcome: 'failed', error: `"${folder}" is in no Plex section (section locations: ${roots}); check SERVER_PATH_MAPPINGS; RUN_COMMAND_BEFORE_SCAN not run` };
    }
    this.beforeRan.set(item.id, checked);
    await runScanCommand('RUN_COMMAND_BEFORE_SCAN', config.RUN_COMMAND_BEFORE_SCAN, { path: folder, section: section?.id ?? '' }, this.log, config.RUN_COMMAND_TIMEOUT * 1000);
    return undefined;
  }

  /** PLEX_CHECK_BEFORE_SCAN (plex_autoscan's wait_plex_alive): wait until Plex answers /myplex/account; never drop the scan. */
  private async waitForPlex(item: ScanItem, config: PlexSettings): Promise<DeliveryResult | undefined> {
    if (!config.CHECK_BEFORE_SCAN) return undefined;
    const api = this.steps.api;
    if (!api) {
      this.warnOnce('alive-no-api', { key: 'PLEX_CHECK_BEFORE_SCAN' }, 'PLEX_CHECK_BEFORE_SCAN needs PLEX_LOCAL_URL and PLEX_TOKEN; not checking');
      return undefined;
    }
    try {
      const user = await api.myplexAccount();
      const waited = this.aliveWaits.end(item.id);
      this.log.info({ scan: item.id, key: 'PLEX_CHECK_BEFORE_SCAN', account: user, ...(waited && { waitedS: Math.round((Date.now() - waited.since) / 1000) }) }, 'Plex is available for scanning');
      return undefined;
    } catch (err) {
      const wait = this.aliveWaits.poll(item.id);
      const retryAfterMs = Math.min(this.timings.aliveRetryMaxMs, this.timings.aliveRetryMs * 2 ** Math.min(20, wait.polls - 1));
      this.log.warn({ scan: item.id, key: 'PLEX_CHECK_BEFORE_SCAN', attempt: wait.polls, err: (err as Error).message, retryInS: retryAfterMs / 1000 }, 'Plex is not ready for scans; waiting');
      // plex_autoscan waits inside its scan lock (plex.py:163-167): no other scan starts meanwhile.
      return { outcome: 'retry', error: `waiting for Plex to answer: ${(err as Error).message}`, retryAfterMs, countsAsAttempt: false, holdTurn: true };
    }
  }

  /**
   * Completion watch, empty trash, analyze, fix match and RUN_COMMAND_AFTER_SCAN, in plex_autoscan's order.
   * The first two per library; the others once per scan, after the last library's (`last`): the
   * after-command pairs with the one before-command.
   */
  private afterScan(item: ScanItem, section: PlexSectionRef, folder: string, folderOnly: boolean, base: string, config: PlexSettings, sentAt: number, last = true): AfterDelivery {
    return async (signal) => {
      const steps = this.steps;
      const log = this.log.child({ scan: item.id, section: section.id });
      const parts = [base];
      if (this.backend.method === 'scanner') {
        // The scanner binary returns when its scan is done.
        parts.push('completed');
      } else if (steps.api) {
        const done = await this.scanWatch(steps.api).waitForScan(section.id, sentAt, log, signal);
        parts.push(done.completed ? 'completed' : `sent, completion unknown (${done.reason})`);
      } else {
        parts.push('sent, completion unknown');
      }
      if (emptyTrashEnabled(config) && steps.db) {
        // plex.py:199: an upgrade empties the trash even with nothing deleted; any merged upgrade counts.
        parts.push(await emptyTrashGuarded({ config, api: steps.api, db: steps.db, log, tries: this.timings.emptyTrashTries, retryMs: this.timings.emptyTrashRetryMs }, section.id, item.upgrade, signal));
      }
      // The items the scan added or updated, for its `scanned` event: looked up by the scheduler off Plex's turn.
      const items = steps.api && item.updateType !== 'Deleted' && !item.removal ? this.itemsLookup(steps.api, section.id, folder, folderOnly ? [] : item.files) : undefined;
      const outcome = (detail: string): string | AfterOutcome => (items ? { detail, items } : detail);
      if (!last) return outcome(parts.filter(Boolean).join('; '));
      // plex_autoscan analyzes file requests only, never a folder scan.
      if (config.ANALYZE_TYPE !== 'off' && !folderOnly && item.files.length > 0 && item.updateType !== 'Deleted' && steps.db) {
        parts.push(await analyzeFiles({ config, db: steps.db, backend: this.backend, log, retry: { tries: this.timings.lookupTries, delayMs: this.timings.lookupDelayMs } }, item.files, signal));
      }
      // plex.py:212-221: file requests only, after analyze, before the after-command.
      if (steps.api && !folderOnly && item.updateType !== 'Deleted') {
        parts.push(await fixMismatched({ config, api: steps.api, log, retry: { tries: this.timings.lookupTries, delayMs: this.timings.lookupDelayMs } }, item, signal));
      }
      if (config.REFRESH_METADATA && item.updateType !== 'Deleted') parts.push(await this.refreshMetadata(folder, folderOnly ? [] : item.files, log, signal));
      const after = await runScanCommand('RUN_COMMAND_AFTER_SCAN', config.RUN_COMMAND_AFTER_SCAN, { path: folder, section: section.id }, log, config.RUN_COMMAND_TIMEOUT * 1000);
      if (after) parts.push(after.ok && after.code === 0 ? 'after-scan command ok' : 'after-scan command failed');
      return outcome(parts.filter(Boolean).join('; '));
    };
  }

  /** Finds the items at a scanned folder's files (scanned-items.ts), for the scheduler to run once the turn is let go. */
  private itemsLookup(api: PlexApi, sectionId: string, folder: string, files: readonly string[]): NonNullable<AfterOutcome['items']> {
    return async () => {
      this.sectionList ??= this.backend instanceof PlexApiBackend ? this.backend.sections : new SectionCache(() => api.sections());
      return scannedItems({ api, sections: this.sectionList }, sectionId, folder, files);
    };
  }

  /**
   * A request's `refresh` or `analyze` (item-action.ts), within this delivery (the turn is held while it runs).
   * undefined: scan instead (no token for the HTTP API, or no item at the files yet).
   */
  private async itemAction(item: ScanItem, action: 'refresh' | 'analyze'): Promise<DeliveryResult | undefined> {
    const api = this.steps.api;
    if (!api) {
      this.warnOnce('action-no-api', { action }, `a ${action} of an item needs PLEX_TOKEN (the Plex HTTP API); the folder is scanned instead`);
      return undefined;
    }
    this.sectionList ??= this.backend instanceof PlexApiBackend ? this.backend.sections : new SectionCache(() => api.sections());
    const detail = await actOnItems({ api, sections: this.sectionList, log: this.log }, action, item.folder, item.moreFiles ? [] : item.files);
    if (detail === undefined) {
      this.log.info({ scan: item.id, action, folder: item.folder }, `no Plex item at the request's files for the ${action}; scanning the folder instead`);
      return undefined;
    }
    this.log.info({ scan: item.id, action }, detail);
    return { outcome: 'done', detail };
  }

  /** PLEX_REFRESH_METADATA, through the HTTP API (the scanner method too, when PLEX_TOKEN is set). */
  private async refreshMetadata(folder: string, files: readonly string[], log: Logger, signal: AbortSignal): Promise<string> {
    const api = this.steps.api;
    if (!api) {
      this.warnOnce('refresh-no-api', { key: 'PLEX_REFRESH_METADATA' }, 'PLEX_REFRESH_METADATA needs PLEX_TOKEN (the Plex HTTP API); metadata is not refreshed');
      return '';
    }
    this.sectionList ??= this.backend instanceof PlexApiBackend ? this.backend.sections : new SectionCache(() => api.sections());
    return refreshScannedItems({ api, sections: this.sectionList, log, retry: { tries: this.timings.lookupTries, delayMs: this.timings.lookupDelayMs } }, folder, files, signal);
  }

  /** Plex's scans, from its notification stream (API method) or by polling; created on first use. */
  private scanWatch(api: PlexApi): ScanWatch {
    const transports = this.backend.method === 'api' ? (this.steps.notifications ?? ['websocket', 'sse']) : false;
    this.watch ??= plexScanWatch(api, this.steps.settings, this.timings, this.log, transports);
    return this.watch;
  }

  private warnOnce(id: string, fields: Record<string, unknown>, message: string): void {
    if (this.warned.has(id)) return;
    this.warned.add(id);
    this.log.warn(fields, message);
  }
}
