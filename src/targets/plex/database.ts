import Database from 'better-sqlite3';

/**
 * Plex's library database (com.plexapp.plugins.library.db), opened read-only: scanrelay never writes
 * it, and Plex holds it in WAL mode, so reads tolerate a busy database instead of failing at once.
 * Table and column names are Plex's own (docs/protocols.md section 2).
 */
export class PlexDatabase {
  private db: Database.Database | undefined;

  constructor(readonly path: string) {}

  /** Opens on first use; throws with the path when the file is missing or unreadable. */
  protected handle(): Database.Database {
    if (!this.db) {
      try {
        this.db = new Database(this.path, { readonly: true, fileMustExist: true });
        this.db.pragma('busy_timeout = 5000');
      } catch (err) {
        throw new Error(`cannot open the Plex database ${this.path} read-only: ${(err as Error).message}`);
      }
    }
    return this.db;
  }

  /** Every (section, root path) pair, as plex_autoscan reads them to find a path's section. */
  sectionLocations(): Array<{ sectionId: number; rootPath: string; title: string | null }> {
    return this.handle()
      .prepare<[], { sectionId: number; rootPath: string; title: string | null }>(
        `SELECT sl.library_section_id AS sectionId, sl.root_path AS rootPath, ls.name AS title
         FROM section_locations sl LEFT JOIN library_sections ls ON ls.id = sl.library_section_id
         ORDER BY sl.id`,
      )
      .all();
  }

  /**
   * Sizes of the media parts whose file ends with `path` (plex_autoscan's `file LIKE '%' || path`: a
   * suffix match, case-insensitive for ASCII as SQLite's LIKE is; `%` and `_` in the path match themselves).
   */
  partSizesEndingWith(path: string): number[] {
    const pattern = `%${path.replace(/[\\%_]/g, (c) => `\\${c}`)}`;
    return this.handle()
      .prepare<[string], { size: number | null }>(`SELECT size FROM media_parts WHERE file LIKE ? ESCAPE '\\'`)
      .all(pattern)
      .map((r) => Number(r.size));
  }

  /** Rows Plex marked deleted (the trash): metadata items plus media parts, as plex_autoscan counts them. */
  deletedCount(): number {
    const db = this.handle();
    const count = (table: 'metadata_items' | 'media_parts') =>
      Number(db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${table} WHERE deleted_at IS NOT NULL`).get()!.n);
    return count('metadata_items') + count('media_parts');
  }

  /** The metadata item of a file (media_parts.file -> media_items.metadata_item_id), or undefined. */
  metadataItemOfFile(file: string): number | undefined {
    const row = this.handle()
      .prepare<[string], { id: number | null }>(
        `SELECT mi.metadata_item_id AS id FROM media_parts mp JOIN media_items mi ON mi.id = mp.media_item_id WHERE mp.file = ? LIMIT 1`,
      )
      .get(file);
    return row?.id ? Number(row.id) : undefined;
  }

  /** A metadata item's parent (episode -> season), or undefined for a top-level item such as a movie. */
  parentOf(metadataItemId: number): number | undefined {
    const row = this.handle()
      .prepare<[number], { parent_id: number | null }>(`SELECT parent_id FROM metadata_items WHERE id = ?`)
      .get(metadataItemId);
    return row?.parent_id ? Number(row.parent_id) : undefined;
  }

  /** The metadata items under a parent (a season's episodes), in id order. */
  childrenOf(parentId: number): number[] {
    return this.handle()
      .prepare<[number], { id: number }>(`SELECT id FROM metadata_items WHERE parent_id = ? ORDER BY id`)
      .all(parentId)
      .map((r) => Number(r.id));
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
  }
}
