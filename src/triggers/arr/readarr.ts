import { z } from 'zod';
import { deleteInsideItem, deleteOfItem, fileDelete, rename, upgradeOr } from './events.ts';
import { fileList, lenientId, lenientObject, lenientText, mediaFileSchema, optional, pathField, renamedFileSchema, upgradeAndDeleteFields } from './fields.ts';
import { arrRecognizer } from './recognizer.ts';
import { fileScans, filesOf, fullPath, previousPath, type Base } from './scans.ts';

const readarrPayload = z.object({
  author: optional(z.object({ path: optional(pathField), name: lenientText, goodreadsId: lenientId })),
  book: lenientObject(z.object({ title: lenientText, goodreadsId: lenientId })),
  bookFiles: fileList(mediaFileSchema),
  bookFile: optional(mediaFileSchema),
  renamedBookFiles: fileList(renamedFileSchema),
  ...upgradeAndDeleteFields,
});
type ReadarrPayload = z.output<typeof readarrPayload>;

const base = (p: ReadarrPayload): Base => ({ path: p.author?.path, field: 'author.path' });
const bookFilesOf = (p: ReadarrPayload, expected: string) =>
  filesOf(
    [
      { field: 'bookFile', file: p.bookFile },
      { field: 'bookFiles', files: p.bookFiles },
    ],
    base(p),
    expected,
  );

export const recognizeReadarr = arrRecognizer({
  source: 'Readarr',
  shapeKeys: ['author', 'book', 'books', 'bookFile', 'bookFiles', 'renamedBookFiles'],
  schema: readarrPayload,
  events: {
    Download: (p) => ({ ...upgradeOr(p.isUpgrade), paths: fileScans(bookFilesOf(p, 'bookFiles[] with path, or relativePath and author.path')) }),
    Rename: (p) =>
      rename(
        p.author?.path,
        'author.path',
        'renamedBookFiles',
        (p.renamedBookFiles ?? []).map((f, i) => ({ now: fullPath(f, base(p), `renamedBookFiles[${i}]`), before: previousPath(f, base(p)) })),
      ),
    Retag: (p) => ({ updateType: 'Modified', paths: fileScans(bookFilesOf(p, 'bookFile with path')) }),
    BookFileDelete: (p) => fileDelete(fileScans(bookFilesOf(p, 'bookFile with path, or relativePath and author.path'))),
    AuthorDelete: (p) => deleteOfItem(p.author?.path, 'author.path', p.deletedFiles),
    // The payload names no book folder: the author folder above it is scanned.
    BookDelete: (p) => deleteInsideItem(p.author?.path, 'author.path', p.deletedFiles),
  },
  describe: (p) => ({
    title: p.author?.name && p.book?.title ? `${p.author.name} - ${p.book.title}` : p.author?.name,
    ids: { authorGoodreadsId: p.author?.goodreadsId, bookGoodreadsId: p.book?.goodreadsId },
  }),
});
