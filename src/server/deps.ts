import type { FastifyInstance } from 'fastify';
import type { DiskFullMonitor } from '../db/disk-full.ts';
import type { Config } from '../config/schema.ts';
import type { DriveControl, DriveStatus, NotificationHealth, SetupProblem } from '../core/status.ts';
import type { Target } from '../core/scan.ts';
import type { Recognizer } from '../intake/intent.ts';
import type { Logger } from '../core/logger.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { HoldStatus } from '../paths/anchors.ts';
import type { FolderProbe } from '../paths/folder.ts';
import type { QueueIntake } from '../queue/door.ts';
import type { QueueBackend } from '../queue/backend.ts';
import type { LibraryRoots } from '../targets/library-roots.ts';
import type { Guards } from './guard.ts';

/** What the HTTP surface is built from (src/server/run.ts wires it; tests build it with fakes). */
export interface AppDeps {
  config: Config;
  log: Logger;
  intake: QueueIntake;
  store: QueueBackend;
  /** Payload recognizers tried in order on POST /<secret>. */
  recognizers: Recognizer[];
  drive?: DriveControl;
  probe?: FolderProbe;
  /** Called after a scan was made due again from the dashboard or the API (wakes the scheduler). */
  onQueued?: () => void;
  /** Whether folders lie in a library of an enabled target (built with the targets); absent: not checked. */
  libraries?: Pick<LibraryRoots, 'check' | 'places'>;
  /** The enabled targets, for status displays and the mapping preview (never called to scan from here). */
  targets?: readonly Target[];
  metrics?: Metrics;
  /** The drive monitor's state; absent when there is no drive monitor ("off"). */
  driveStatus?: () => DriveStatus;
  /** Problems the start-up check found with the Plex scan method (each names the key to fix). */
  setupProblems?: () => readonly SetupProblem[];
  /** Each NOTIFICATIONS destination's health (the notification sender's); absent or empty when none is configured. */
  notifications?: () => readonly NotificationHealth[];
  /** The mount guard's state (SERVER_ANCHOR_FILES); absent when no anchor is configured. */
  holdStatus?: () => HoldStatus;
  /** Extra plugins (dashboard, metrics) registered with the same deps and the app's credential checks. */
  plugins?: Array<(app: FastifyInstance, deps: PluginDeps) => Promise<void>>;
  /** Client connections held open at most (default: from the soft open-file limit). */
  maxConnections?: number;
  /** The queue disk's state when writes are refused for lack of space (default: one for the store's file). */
  diskFull?: DiskFullMonitor;
  /** The config file the relay was started with: `scanrelay setup` has the running relay read its new triggers from it. */
  configPath?: string;
  /** Failed credential checks per client and minute before 429 (default AUTH_FAILURES_PER_MINUTE). */
  authFailuresPerMinute?: number;
}

/** What a plugin gets: the deps, the shared credential checks and the rate-limit option for quiet routes. */
export interface PluginDeps extends AppDeps {
  guards: Guards;
  /** Route config for authenticated routes a browser polls (dashboard parts, preview, metrics). */
  quietRateLimit: { rateLimit: { max: number; timeWindow: string } | false };
}
