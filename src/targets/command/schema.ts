import { z } from 'zod';
import { targetBase } from '../../config/target-base.ts';

/**
 * A program run for each scan (docs/targets.md). COMMAND is the program and its first arguments, never a
 * shell line: the scan's paths follow as further arguments, so no path can inject shell syntax.
 */
export const commandTargetSchema = targetBase.extend({
  TYPE: z.literal('command'),
  COMMAND: z
    .array(z.string())
    .min(1, 'must name the program to run, e.g. ["/usr/local/bin/on-scan.sh"]')
    .refine((argv) => argv.length === 0 || argv[0]!.trim() !== '', 'the program (the first item) must not be empty'),
  /**
   * Seconds before the program is killed (and the scan tried again). Always a finite time: a program that never
   * exits would hold its scan's delivery slot for good, so 0 ("no limit" elsewhere) is refused at load.
   */
  TIMEOUT: z
    .number()
    .positive('must be more than 0 seconds: a program that never exits would hold its scans for good (at most 86400, a day)')
    .max(86_400, 'must be at most 86400 seconds (a day)')
    .default(120),
});
export type CommandTarget = z.infer<typeof commandTargetSchema>;
