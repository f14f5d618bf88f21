import Database from 'better-sqlite3';

/**
 * Plex's library database (com.plexapp.plugins.library.db), opened read-only: scanrelay never writes
 * it, and Plex holds it in WAL mode, so reads tolerate a busy database instead of failing at once.
 * Table and column names are Plex's own (see shared/research/protocols.md section 2).
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
   * plex_autoscan's check for drive changes (utils.remove_files_exist_in_plex_database): the size of
   * the first media part whose file ends with `path` (`file LIKE '%' || path`, so a suffix match,
   * case-insensitive for ASCII, as there). Undefined when Plex has no such part.
   */
  mediaPartSize(path: string): { size: number | null } | undefined {
    const row = this.handle().prepare<[string], { size: number | null }>(`SELECT size FROM media_parts WHERE file LIKE ?`).get(`%${path}`);
    return row ? { size: row.size === null ? null : Number(row.size) } : undefined;
  }

  close(): void {
    this.db?.close();
    this.db = undefined;
  }
}
