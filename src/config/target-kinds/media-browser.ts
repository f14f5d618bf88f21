import { z } from 'zod';
import { targetBase } from '../target-base.ts';

/** Jellyfin and Emby share one API (targets/media-browser): the same settings, a different TYPE. */
export const mediaBrowserFields = {
  URL: z.string().min(1, 'must be the server\'s address, e.g. http://localhost:8096'),
  API_KEY: z.string().default(''),
};
export const mediaBrowserBase = targetBase.extend(mediaBrowserFields);
