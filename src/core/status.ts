/**
 * The drive monitor's state as status displays show it (dashboard, metrics). The drive monitor
 * provides it through `AppDeps.driveStatus`; without one the dashboard shows "off".
 */
export interface DriveStatus {
  state: 'off' | 'needs-authorize' | 'polling' | 'backoff' | 'error';
  /** Epoch ms of the last completed poll. */
  lastPollAt?: number;
  /** Epoch ms when the next poll (or the retry after a backoff) is due. */
  nextPollAt?: number;
  /** The last error, while in backoff or error. */
  error?: string;
}
