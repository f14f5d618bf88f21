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

/**
 * A notification destination's health as status displays show it (dashboard, JSON API, metrics): whether its
 * service takes what it is sent, and what waits or was dropped. URLs are never part of it.
 */
export interface NotificationHealth {
  name: string;
  type: string;
  /** here: this relay sends its events; elsewhere: another relay sharing the queue does; starting: not looked yet. */
  turn: 'here' | 'elsewhere' | 'starting';
  /** Epoch ms when the service last took a message (any relay's, as the queue recorded it); null: not yet. */
  lastSuccessAt: number | null;
  /** Events it takes that are not sent yet, as of the last look (counted up to 1,000). */
  waiting: number;
  /** Events given up since the relay started (refused for GIVE_UP_AFTER, or refused outright with a 4xx). */
  givenUp: number;
  lastGiveUpAt: number | null;
  /** Epoch ms of the first refusal since the last success; null while it takes what it is sent. */
  failingSince: number | null;
  /** The service's last refusal (secrets taken out); null after a success. */
  lastAnswer: string | null;
}
