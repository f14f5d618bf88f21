import { z } from 'zod';
import { scanActionSchema, type ScanAction } from '../core/scan.ts';
import { KIND_SCHEMAS } from '../targets/kinds-schema.ts';

/**
 * A target's name: the `TARGETS` key, stored with each delivery and shown everywhere. One URL path segment
 * without "@" (a shared queue names a delivery <name>@<server id>) or "," (a scan's route lists names).
 */
export const targetNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a target name is letters, digits, ".", "_" and "-", starting with a letter or digit');

/**
 * One `TARGETS` entry, chosen by its TYPE: built from the list of kinds (targets/kinds-schema.ts), the same list
 * the registry (targets/registry.ts) builds its factories from.
 */
export const targetSchema = z.discriminatedUnion('TYPE', KIND_SCHEMAS);
export type TargetConfig = z.infer<typeof targetSchema>;
export type TargetType = TargetConfig['TYPE'];

/** The TYPE values the union knows, for the message that names an unknown one. */
export const TARGET_TYPES: readonly string[] = targetSchema.options.map((o) => o.shape.TYPE.value);

/** `TARGETS`: name -> target. An entry whose TYPE is unknown is refused with the kinds that exist. */
export const targetsSchema = z
  .record(
    targetNameSchema,
    z.unknown().superRefine((entry, ctx) => {
      const type = entry && typeof entry === 'object' ? (entry as { TYPE?: unknown }).TYPE : undefined;
      if (typeof type === 'string' && TARGET_TYPES.includes(type)) return;
      ctx.addIssue({
        code: 'custom',
        path: ['TYPE'],
        message: `${type === undefined ? 'missing' : `unknown TYPE ${JSON.stringify(type)}`}: one of ${TARGET_TYPES.join(', ')}`,
      });
    }).pipe(targetSchema),
  )
  .default({});

/**
 * What every trigger may say about where its scans go (issue 39): `TARGETS` (only these) or `EXCLUDE_TARGETS`
 * (all but these), absent = every target; `DELAY` in seconds replaces SERVER_SCAN_DELAY for what it queues.
 */
export const triggerRouteFields = {
  TARGETS: z.array(targetNameSchema).min(1, 'name at least one target, or leave TARGETS out for all').optional(),
  EXCLUDE_TARGETS: z.array(targetNameSchema).optional(),
  DELAY: z.number().min(0).max(Math.floor((2 ** 31 - 1) / 1000)).optional(),
  /** What its requests ask the targets to do: scan (default), refresh or analyze the items at the files (core/scan.ts). */
  ACTION: scanActionSchema.optional(),
};
export type TriggerRoute = { TARGETS?: string[]; EXCLUDE_TARGETS?: string[]; DELAY?: number; ACTION?: ScanAction };

/** TARGETS and EXCLUDE_TARGETS together say two things: refused (on the trigger's object schema). */
export function oneSelection(route: TriggerRoute): boolean {
  return !(route.TARGETS && route.EXCLUDE_TARGETS);
}
export const ONE_SELECTION = { message: 'TARGETS and EXCLUDE_TARGETS: use one of them', path: ['EXCLUDE_TARGETS'] };

/**
 * The target names a trigger's requests may go to; undefined: every target. The one rule for every trigger's
 * TARGETS / EXCLUDE_TARGETS (scanrelay's own, autoscan's and autopulse's, live or taken over).
 */
export function triggerSelection(route: Pick<TriggerRoute, 'TARGETS' | 'EXCLUDE_TARGETS'> | undefined, names: readonly string[]): string[] | undefined {
  if (route?.TARGETS) return [...route.TARGETS];
  // A relay without targets has nothing to leave out.
  if (route?.EXCLUDE_TARGETS && names.length) return names.filter((n) => !route.EXCLUDE_TARGETS!.includes(n));
  return undefined;
}
