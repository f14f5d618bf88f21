import type { RadarrTarget } from './schema.ts';
import type { Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { createArrTarget } from '../arr/refresh.ts';

/** Radarr: RefreshMovie of the movie whose folder holds the scan's folder (autopulse's radarr.rs:95-101). */
export function createRadarrTarget(name: string, entry: RadarrTarget, log: Logger): Target {
  return createArrTarget({ product: 'Radarr', list: '/api/v3/movie', noun: 'movie', command: (id) => ({ name: 'RefreshMovie', movieIds: [id] }) }, name, entry, log);
}
