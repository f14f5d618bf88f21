import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';
import { credential, httpUrl } from '../fields-schema.ts';

/** A Tdarr server (docs/targets.md): its URL, the library id (DB_ID), and an API key when its auth is on. */
export const tdarrTargetSchema = targetBase.extend({
  TYPE: z.literal('tdarr'),
  URL: httpUrl(),
  /** The library's id, as Tdarr shows it in the library's settings. */
  DB_ID: z.string().trim().min(1, 'must name the Tdarr library id'),
  /** Tools -> API Keys, when the server runs with auth on; absent when it does not. */
  API_KEY: credential().optional(),
});
export type TdarrTarget = z.infer<typeof tdarrTargetSchema>;
