// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { z } from 'zod';
import { fieldName, fileList, mediaFileSchema, optional, renamedFileSchema } from '../../../src/triggers/arr/fields.ts';

/*
 * fileList checks large file lists by hand before (and instead of) the zod walk. Whatever the entries, it must
 * answer exactly as the plain schema does: the same files, or the same first error on the same field.
 */

const pathValue = fc.oneof(
  fc.constantFrom('/tv/Show/Season 01/a.mkv', 'Season 01/a.mkv', '/tv/../etc', 'a\u0000b', '', '/movies/M (2001)/M.mkv'),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.constant({}),
);
const entry = fc.oneof(
  { weight: 8, arbitrary: fc.record({ path: pathValue, relativePath: pathValue, previousPath: pathValue, previousRelativePath: pathValue, title: fc.string() }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.string(), fc.array(fc.string(), { maxLength: 2 })) },
);
const list = fc.oneof(fc.array(entry, { maxLength: 6 }), fc.constant(null), fc.constant(undefined), fc.string());

/** Drops keys whose value is undefined: both forms mean "absent" to the code that reads them. */
const defined = (value: unknown) => JSON.parse(JSON.stringify(value ?? null));

for (const [name, item] of [['mediaFileSchema', mediaFileSchema], ['renamedFileSchema', renamedFileSchema]] as const) {
  test(`fileList(${name}) answers as the plain schema does, for any entries`, () => {
    const fast = z.object({ files: fileList(item) });
    const plain = z.object({ files: optional(z.array(item)) });
    fc.assert(
      fc.property(list, (files) => {
        const a = fast.safeParse({ files });
        const b = plain.safeParse({ files });
        assert.equal(a.success, b.success, JSON.stringify(files));
        if (a.success && b.success) assert.deepEqual(defined(a.data.files), defined(b.data.files));
        else {
          const [x, y] = [a.error!.issues[0]!, b.error!.issues[0]!];
          assert.equal(`${fieldName(x.path)}: ${x.message}`, `${fieldName(y.path)}: ${y.message}`);
        }
      }),
      { numRuns: 2000 },
    );
  });
}
