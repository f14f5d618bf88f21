import { z } from 'zod';
import { scanActionSchema, sourceSchema, updateTypeSchema, type Source } from '../core/scan.ts';

/** The source label of a request no trigger could place (metrics, logs): one spelling everywhere. */
export const UNKNOWN_SOURCE = 'Unknown';
type SourceOrUnknown = Source | typeof UNKNOWN_SOURCE;

/**
 * A path to scan, before any mapping. `file` scans the file's folder, `folder` the folder itself, `guess` lets the
 * name (or the file system, when visible) decide, `gone` is a deleted folder whose nearest existing ancestor is scanned.
 */
export const scanPathSchema = z.object({ path: z.string(), kind: z.enum(['file', 'folder', 'guess', 'gone']) });
export type ScanPath = z.infer<typeof scanPathSchema>;

/** What a trigger understood from one request that asks for scans: which paths, and how. A schema, as a held request keeps one. */
export const scanIntentSchema = z.object({
  kind: z.literal('scan'),
  source: sourceSchema,
  event: z.string(),
  title: z.string().optional(),
  ids: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  updateType: updateTypeSchema,
  paths: z.array(scanPathSchema),
  /** The trigger's own priority (autoscan's per-trigger one), used when no SERVER_SCAN_PRIORITIES entry matches. */
  priority: z.number().optional(),
  /** The targets the trigger sends to (its TARGETS / EXCLUDE_TARGETS, config/targets.ts triggerSelection); absent: all. */
  targets: z.array(z.string()).optional(),
  /** The trigger's DELAY in seconds, replacing SERVER_SCAN_DELAY. */
  delay: z.number().optional(),
  /** The trigger's ACTION (or a manual request's `action=`); absent: scan. */
  action: scanActionSchema.optional(),
});
export type ScanIntent = z.infer<typeof scanIntentSchema>;

/** What a trigger understood from one request, before any mapping: scans, a test, or nothing to do. */
export type Intent = ScanIntent | { kind: 'test'; source: SourceOrUnknown } | { kind: 'ignore'; source: SourceOrUnknown; event: string; reason: string };

/** Distinct folders one request may ask to scan; a payload naming more is refused (400) before any per-file work. */
export const MAX_FOLDERS_PER_REQUEST = 1000;

/** The message for a request naming more than MAX_FOLDERS_PER_REQUEST folders. */
export function tooManyFolders(): string {
  return `this request names more than ${MAX_FOLDERS_PER_REQUEST} folders to scan (the most one request may name): send the import in smaller parts, or scan their common folder`;
}

/** A trigger's recognizer: an intent when the payload has this trigger's shape, else undefined. */
export type Recognizer = (body: Record<string, unknown>) => Intent | undefined;

/** Thrown by a recognizer that knows the shape but finds a field wrong: answered 400 with the message. */
export class PayloadError extends Error {
  constructor(
    message: string,
    /** The manager whose payload it is, when its shape said so (the metrics and logs keep it). */
    readonly source?: Source,
  ) {
    super(message);
    this.name = 'PayloadError';
  }
}
