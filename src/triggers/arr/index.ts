import type { Recognizer } from '../../intake/intent.ts';
import { recognizeLidarr } from './lidarr.ts';
import { recognizeArrNotice } from './notice.ts';
import { recognizeRadarr } from './radarr.ts';
import { recognizeReadarr } from './readarr.ts';
import { recognizeSonarr } from './sonarr.ts';

/** Media-manager webhooks, recognised by shape; notices without an item (Health, updates) last. */
export const ARR_RECOGNIZERS: Recognizer[] = [recognizeSonarr, recognizeRadarr, recognizeLidarr, recognizeReadarr, recognizeArrNotice];
