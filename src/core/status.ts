/**
 * The drive monitor's state as status displays show it (dashboard, metrics). The drive monitor
 * provides it through `AppDeps.driveStatus`; without one the dashboard shows "off".
 */
export interface DriveStatus {
  /** standby: relays share a queue and another one polls the drive (it holds the drive lease). */
  state: 'off' | 'needs-authorize' | 'polling' | 'standby' | 'backoff' | 'error';
  /** With a shared queue: the relay that polls the drive (this one while polling, the holder while on standby). */
  polledBy?: string;
  /** Epoch ms of the last completed poll. */
  lastPollAt?: number;
  /** Epoch ms when the next poll (or the retry after a backoff) is due. */
  nextPollAt?: number;
  /** The last error, while in backoff or error. */
  error?: string;
}

/** What the cmd API may ask of the drive monitor (plex_autoscan's `reset_page_token`). */
export interface DriveControl {
  enabled(): boolean;
  resetPageToken(): Promise<void>;
}

/** A problem the start-up check found with a target's set-up (logged, and shown on the dashboard). */
export interface SetupProblem {
  /** The config key to look at. */
  key: string;
  message: string;
}
