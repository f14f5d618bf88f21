import type { SonarrTarget } from './schema.ts';
import type { Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { createArrTarget } from '../arr/refresh.ts';

/** Sonarr: RefreshSeries of the series whose folder holds the scan's folder (autopulse's sonarr.rs:92-98). */
export function createSonarrTarget(name: string, entry: SonarrTarget, log: Logger): Target {
  return createArrTarget({ product: 'Sonarr', list: '/api/v3/series', noun: 'series', command: (id) => ({ name: 'RefreshSeries', seriesId: id }) }, name, entry, log);
}
