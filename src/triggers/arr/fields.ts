import { z } from 'zod';
import { invalidRequestPath } from '../../paths/validate.ts';

/*
 * The payload fields scanrelay reads from Sonarr/Radarr/Lidarr/Readarr webhooks. The managers write
 * camelCase and omit nulls; other senders may write null, so every optional field takes null as absent.
 * Paths are checked here so a bad one is answered 400 naming the field. Titles and ids are never
 * required and a wrong type drops them instead of failing the request.
 */

/** A path as the manager sends it: a non-empty string without NUL bytes or ".." segments. */
export const pathField = z.string().superRefine((value, ctx) => {
  const problem = invalidRequestPath(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem.replace(/^filepath /, '') });
});

const optionalPath = pathField.nullish().transform((v) => v ?? undefined);

/** Display-only text: kept when it is a non-empty string (cut to 300 characters for logs and history), dropped otherwise. */
export const lenientText = z
  .unknown()
  .transform((v) => (typeof v === 'string' && v.trim() !== '' ? v.slice(0, 300) : undefined))
  .optional();

/** An external id (tvdbId, tmdbId, imdbId, mbId ...): kept when it is a non-zero number or a short non-empty string. */
export const lenientId = z
  .unknown()
  .transform((v) => ((typeof v === 'number' && Number.isFinite(v) && v !== 0) || (typeof v === 'string' && v.trim() !== '' && v.length <= 100) ? v : undefined))
  .optional();

/** A field read as-is (isUpgrade, deletedFiles): its value is checked where it is used. */
export const anyValue = z.unknown().optional();

/**
 * The two fields every manager's import and delete events share, read loosely: `isUpgrade` (an import that
 * replaced files) and `deletedFiles` (the replaced files on an import, a boolean on a series/movie/artist/author
 * delete). Spread into each manager's payload.
 */
export const upgradeAndDeleteFields = { isUpgrade: anyValue, deletedFiles: anyValue };

/** One media file in a payload: `path` is absolute, `relativePath` is below the item's folder. */
export const mediaFileSchema = z.object({
  path: optionalPath,
  relativePath: optionalPath,
});

/** A renamed file: its new location and where it was before. */
export const renamedFileSchema = mediaFileSchema.extend({
  previousPath: optionalPath,
  previousRelativePath: optionalPath,
});

export type MediaFile = z.output<typeof mediaFileSchema>;

/** The path fields a file entry may carry (mediaFileSchema and renamedFileSchema). */
const FILE_PATH_KEYS = ['path', 'relativePath', 'previousPath', 'previousRelativePath'] as const;

/**
 * A file list (episodeFiles, trackFiles ...), null meaning absent. An import can list tens of thousands of
 * files, and walking each through the zod schema holds the event loop for a tenth of a second; so entries
 * are first checked by hand against the same rules (an object whose path fields are absent, null or valid
 * paths), and only a list with an entry that fails goes through the schema, for its error naming the field.
 * Either way the result is the schema's.
 */
export function fileList<T extends typeof mediaFileSchema | typeof renamedFileSchema>(item: T) {
  const slow = z.array(item);
  const keys = FILE_PATH_KEYS.filter((key) => key in item.shape);
  const plain = (entry: unknown): entry is Record<string, unknown> =>
    !!entry &&
    typeof entry === 'object' &&
    !Array.isArray(entry) &&
    keys.every((key) => {
      const value = (entry as Record<string, unknown>)[key];
      return value === undefined || value === null || (typeof value === 'string' && invalidRequestPath(value) === undefined);
    });
  return z.unknown().transform((value, ctx): Array<z.output<T>> | undefined => {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value) && value.every(plain)) {
      return value.map((entry) => Object.fromEntries(keys.map((key) => [key, (entry[key] as string | null | undefined) ?? undefined])) as z.output<T>);
    }
    const parsed = slow.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message, path: issue.path } as never);
    return z.NEVER;
  })
    .optional();
}

/** An optional object or array field: null means absent; any other wrong type is an error naming the field. */
export function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => v ?? undefined);
}

/** A field's position as users read it: `episodeFiles[0].path`. */
export function fieldName(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)), '');
}

/** An object read only for titles and ids (remoteMovie, album, book): anything else counts as absent. */
export function lenientObject<T extends z.ZodObject>(schema: T) {
  return z
    .unknown()
    .transform((v): z.output<T> | undefined => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
      const parsed = schema.safeParse(v);
      return parsed.success ? parsed.data : undefined;
    })
    .optional();
}
