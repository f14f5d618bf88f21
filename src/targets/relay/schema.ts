import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';
import { credential, httpUrl } from '../fields-schema.ts';

/**
 * Another relay that scans the folder in turn (docs/targets.md): a scanrelay (its secret URL, SERVER_PASS),
 * an autopulse (its manual trigger, `/triggers/<TRIGGER>?path=`) or an autoscan (`/triggers/manual?dir=`).
 * USERNAME and PASSWORD are its Basic auth, when it asks for one.
 */
export const relayTargetSchema = targetBase
  .extend({
    TYPE: z.literal('relay'),
    URL: httpUrl(),
    PEER: z.enum(['scanrelay', 'autopulse', 'autoscan']).default('scanrelay'),
    /** scanrelay: the other relay's SERVER_PASS, the secret part of its scan URL. */
    SECRET: credential().optional(),
    /** autopulse: the name of its manual trigger. */
    TRIGGER: z.string().regex(/^[A-Za-z0-9._~-]+$/, 'must be one URL path segment').default('manual'),
    USERNAME: z.string().optional(),
    PASSWORD: z.string().optional(),
  })
  .superRefine((entry, ctx) => {
    if (entry.PEER === 'scanrelay' && !entry.SECRET) ctx.addIssue({ code: 'custom', path: ['SECRET'], message: "a scanrelay peer needs SECRET, the other relay's SERVER_PASS" });
    if ((entry.USERNAME === undefined) !== (entry.PASSWORD === undefined)) ctx.addIssue({ code: 'custom', path: [entry.USERNAME === undefined ? 'USERNAME' : 'PASSWORD'], message: 'USERNAME and PASSWORD go together (Basic auth)' });
  });
export type RelayTarget = z.infer<typeof relayTargetSchema>;
