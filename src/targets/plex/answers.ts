import { z } from 'zod';
import { parseJsonAnswer } from '../http.ts';

/*
 * The JSON answers of Plex's HTTP API that scanrelay reads (docs/protocols.md section 1), as zod schemas: only
 * the fields the code uses, looseObject everywhere because Plex adds fields freely. Ids come as strings in
 * some answers and numbers in others, so both are taken and kept as strings.
 */

const id = z.union([z.string(), z.number()]).transform(String);
const list = <T extends z.ZodType>(item: T) => z.array(item).optional().default([]);
const text = z.string().optional().catch(undefined);
const int = z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]).optional().catch(undefined);

export const sectionsAnswer = z.looseObject({
  MediaContainer: z.looseObject({
    Directory: list(
      z.looseObject({
        key: id,
        title: z.string().optional().default(''),
        type: z.string().optional().default(''),
        /** The metadata agent and its language (PLEX_FIX_MISMATCHED tells legacy agents from today's by it). */
        agent: z.string().optional().default(''),
        language: z.string().optional().default(''),
        Location: list(z.looseObject({ path: z.string() })),
        /** The section is being scanned: true/false in JSON (1/0 in XML). */
        refreshing: z.union([z.boolean(), z.number(), z.string()]).optional().transform((v) => v === true || v === 1 || v === '1'),
      }),
    ),
  }),
});

export const identityAnswer = z.looseObject({
  MediaContainer: z.looseObject({ machineIdentifier: z.string().optional(), version: z.string().optional() }),
});

/** `GET /` (with the token): the server's name as its owner set it in Plex's settings. */
export const serverAnswer = z.looseObject({
  MediaContainer: z.looseObject({ friendlyName: z.string().optional() }),
});

/** plex_autoscan's "ready" test: the account answer holds a MyPlex object once Plex can scan. */
export const accountAnswer = z.looseObject({
  MyPlex: z.looseObject({ username: z.string().optional() }),
});

export const activitiesAnswer = z.looseObject({
  MediaContainer: z.looseObject({
    Activity: list(
      z.looseObject({
        uuid: z.string().optional(),
        type: z.string(),
        title: z.string().optional(),
        Context: z.looseObject({ librarySectionID: id.optional() }).optional(),
      }),
    ),
  }),
});

/** A listing of items (a section's, or an item's children): each with its media parts' files. */
export const itemsAnswer = z.looseObject({
  MediaContainer: z.looseObject({
    totalSize: z.number().optional(),
    Metadata: list(
      z.looseObject({
        ratingKey: id,
        parentRatingKey: id.optional(),
        grandparentRatingKey: id.optional(),
        // What a notification names the item by; never a reason to refuse the listing, so a bad value is dropped.
        type: text,
        title: text,
        year: int,
        grandparentTitle: text,
        parentTitle: text,
        parentIndex: int,
        index: int,
        Media: list(z.looseObject({ Part: list(z.looseObject({ file: z.string().optional() })) })),
      }),
    ),
  }),
});
export type ItemsAnswer = z.infer<typeof itemsAnswer>;

/** Parses one of Plex's answers (see parseJsonAnswer); `what` names it: "section list", "activities". */
export function parseAnswer<S extends z.ZodType>(text: string, schema: S, what: string): z.infer<S> {
  return parseJsonAnswer(text, schema, `Plex ${what}`);
}

/** One item with its external ids (`GET /library/metadata/{key}?includeGuids=1`), for PLEX_FIX_MISMATCHED. */
export const itemAnswer = z.looseObject({
  MediaContainer: z.looseObject({
    Metadata: list(z.looseObject({
      ratingKey: id,
      title: z.string().optional().default(''),
      guid: z.string().optional().default(''),
      Guid: list(z.looseObject({ id: z.string() })),
    })),
  }),
});

/** Plex's Fix Match candidates (`GET /library/metadata/{key}/matches`). */
export const matchesAnswer = z.looseObject({
  MediaContainer: z.looseObject({
    SearchResult: list(z.looseObject({ guid: z.string(), name: z.string().optional().default(''), year: id.optional(), score: z.number().optional() })),
  }),
});
