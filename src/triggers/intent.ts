import type { Source, UpdateType } from '../core/scan.ts';

/**
 * What a trigger understood from one request, before any mapping: which paths to scan and how.
 * `file` scans the file's folder, `folder` the folder itself, `guess` lets the name (or the file
 * system, when visible) decide, `gone` is a deleted folder whose nearest existing ancestor is scanned.
 */
export interface ScanPath {
  path: string;
  kind: 'file' | 'folder' | 'guess' | 'gone';
}

export type Intent =
  | {
      kind: 'scan';
      source: Source;
      event: string;
      title?: string;
      ids?: Record<string, string | number>;
      updateType: UpdateType;
      paths: ScanPath[];
    }
  | { kind: 'test'; source: Source | 'Unknown' }
  | { kind: 'ignore'; source: Source | 'Unknown'; event: string; reason: string };

/** A trigger's recognizer: an intent when the payload has this trigger's shape, else undefined. */
export type Recognizer = (body: Record<string, unknown>) => Intent | undefined;

/** Thrown by a recognizer that knows the shape but finds a field wrong: answered 400 with the message. */
export class PayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadError';
  }
}
