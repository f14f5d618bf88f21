import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';
import { credential, httpUrl } from '../fields-schema.ts';

/** A FileFlows server (docs/targets.md): its URL, and its access token when it has one. */
export const fileflowsTargetSchema = targetBase.extend({
  TYPE: z.literal('fileflows'),
  URL: httpUrl(),
  /** FileFlows' access token (sent as x-token); absent when the server asks none. */
  API_KEY: credential().optional(),
});
export type FileflowsTarget = z.infer<typeof fileflowsTargetSchema>;
