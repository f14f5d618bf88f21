import type { Target } from '../core/scan.ts';
import type { Logger } from '../core/logger.ts';

/** After a failed question, the next one (a Plex down at start is asked again, not at every look). */
const ASK_AGAIN_MS = 30_000;

/**
 * The one-at-a-time turn of a serial target's server: its kind and its own id (`plex@<machineIdentifier>`) once the
 * server said it, else its address, else the target's name. Two names for one Plex (the PLEX_* keys and a TARGETS
 * entry with another rewrite) so share one turn, and a 4K Plex beside it (another id) has its own. The shared queue
 * names the turn the same way (pg/relays.ts), so relays of either store agree.
 */
export function serverTurnKey(target: Pick<Target, 'name' | 'kind' | 'address'>, id?: string): string {
  if (id !== undefined) return `${target.kind ?? target.name}@${id}`;
  if (target.address !== undefined) return `${target.kind ?? target.name} at ${normaliseAddress(target.address)}`;
  return target.name;
}

/** One spelling per address: scheme and host in lower case, the default port and a trailing slash dropped. */
export function normaliseAddress(address: string): string {
  try {
    const u = new URL(address);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return address.trim().replace(/\/+$/, '');
  }
}

interface Known {
  id?: string;
  /** The first question ended (answered or failed): until then the target sends nothing. */
  asked?: boolean;
  /** The server answered without an id: its address stands for it for good. */
  settled?: boolean;
  asking?: Promise<void>;
  nextAskAt?: number;
}

/**
 * Which serial targets are one server, for the in-process scheduler: each is asked who it is (Target.identity,
 * Plex's `/identity`) in the background, one question at a time. A target sends nothing until its first question
 * ends (its server's own timeout ends it); a server that could not say is known by its address meanwhile, and
 * asked again later.
 */
export class ServerTurns {
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly log: Logger,
    /** A first question ended: the targets it held may send now. */
    private readonly answered: () => void,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Its first question has not ended yet (the scheduler gives it no turn until then). */
  pending(target: Target): boolean {
    this.key(target);
    const k = this.entry(target.name);
    return target.serial === true && target.identity !== undefined && !k.asked;
  }

  /** The turn `target` takes now; asks its server again when its id is unknown and the last try is old enough. */
  key(target: Target): string {
    if (!target.serial) return target.name;
    const k = this.entry(target.name);
    if (k.id === undefined && !k.settled && !k.asking && target.identity && (k.nextAskAt ?? 0) <= this.clock()) {
      k.asking = this.ask(target, k).finally(() => (k.asking = undefined));
    }
    return serverTurnKey(target, k.id);
  }

  /** Ends when every question started so far has been answered (tests, and the start). */
  async settled(): Promise<void> {
    await Promise.all([...this.known.values()].map((k) => k.asking));
  }

  private entry(name: string): Known {
    let k = this.known.get(name);
    if (!k) this.known.set(name, (k = {}));
    return k;
  }

  private async ask(target: Target, k: Known): Promise<void> {
    try {
      const who = await target.identity!();
      if (who) {
        k.id = who.id;
        this.log.debug({ target: target.name, turn: serverTurnKey(target, who.id) }, 'server id known: its scans take the turn of that server, whatever its name here');
      } else k.settled = true;
    } catch (err) {
      k.nextAskAt = this.clock() + ASK_AGAIN_MS;
      this.log.debug({ target: target.name, err: (err as Error).message }, 'cannot ask the server its id yet: its address stands for it');
    }
    if (!k.asked) {
      k.asked = true;
      this.answered();
    }
  }
}
