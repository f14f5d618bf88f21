import Database from 'better-sqlite3';

/**
 * A fake Plex library database: a real SQLite file with Plex's real table and column names
 * (trimmed to what scan tools touch; from a real PMS schema, docs/protocols.md section 2).
 */
export const PLEX_SCHEMA = `
CREATE TABLE "library_sections" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_id" integer, "name" varchar(255),
  "name_sort" varchar(255) COLLATE NOCASE, "section_type" integer, "language" varchar(255), "agent" varchar(255),
  "scanner" varchar(255), "created_at" datetime, "updated_at" datetime, "scanned_at" datetime, "uuid" varchar(255),
  "changed_at" integer(8) DEFAULT 0, "content_changed_at" integer(8) DEFAULT 0);
CREATE TABLE "section_locations" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer,
  "root_path" varchar(255), "available" boolean DEFAULT 't', "scanned_at" datetime, "created_at" datetime, "updated_at" datetime);
CREATE TABLE "directories" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer,
  "parent_directory_id" integer, "path" varchar(255), "created_at" datetime, "updated_at" datetime, "deleted_at" datetime);
CREATE TABLE "metadata_items" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer, "parent_id" integer,
  "metadata_type" integer, "guid" varchar(255), "media_item_count" integer, "title" varchar(255), "title_sort" varchar(255),
  "original_title" varchar(255), "index" integer, "year" integer, "originally_available_at" datetime, "added_at" datetime,
  "created_at" datetime, "updated_at" datetime, "deleted_at" datetime, "hash" varchar(255));
CREATE TABLE "media_items" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "library_section_id" integer, "section_location_id" integer,
  "metadata_item_id" integer, "type_id" integer, "width" integer, "height" integer, "size" integer(8), "duration" integer,
  "bitrate" integer, "container" varchar(255), "video_codec" varchar(255), "audio_codec" varchar(255),
  "created_at" datetime, "updated_at" datetime, "deleted_at" datetime, "media_analysis_version" integer DEFAULT 0);
CREATE TABLE "media_parts" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "media_item_id" integer, "directory_id" integer,
  "hash" varchar(255), "open_subtitle_hash" varchar(255), "file" varchar(255), "index" integer, "size" integer(8),
  "duration" integer, "created_at" datetime, "updated_at" datetime, "deleted_at" datetime, "extra_data" varchar(255));
`;

export interface FakeDbSection {
  id: number;
  name: string;
  type: 1 | 2 | 8;
  roots: string[];
}

/** Creates (or replaces) a Plex library database file with sections; returns the open handle for more rows. */
export function createPlexDb(path: string, sections: FakeDbSection[] = []): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(PLEX_SCHEMA);
  const insertSection = db.prepare(
    `INSERT INTO library_sections (id, name, section_type, language, agent, scanner, uuid) VALUES (?, ?, ?, 'en', 'com.plexapp.agents.imdb', 'Plex Movie Scanner', ?)`,
  );
  const insertLocation = db.prepare(
    `INSERT INTO section_locations (library_section_id, root_path, available, created_at, updated_at) VALUES (?, ?, 't', '2020-07-04 12:25:59', '2020-07-04 12:25:59')`,
  );
  for (const s of sections) {
    insertSection.run(s.id, s.name, s.type, `uuid-${s.id}`);
    for (const root of s.roots) insertLocation.run(s.id, root);
  }
  return db;
}

/** Adds a movie (or episode under a parent) with one media part; returns the ids. */
export function addMediaFile(
  db: Database.Database,
  opts: { sectionId: number; file: string; size: number; title?: string; parentId?: number | null; metadataType?: number; deletedAt?: string | null },
): { metadataItemId: number; mediaItemId: number; mediaPartId: number } {
  const meta = db
    .prepare(
      `INSERT INTO metadata_items (library_section_id, parent_id, metadata_type, guid, title, deleted_at) VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .run(opts.sectionId, opts.parentId ?? null, opts.metadataType ?? 1, `com.plexapp.agents.imdb://tt${Date.now()}?lang=en`, opts.title ?? opts.file, opts.deletedAt ?? null);
  const metadataItemId = Number(meta.lastInsertRowid);
  const media = db
    .prepare(`INSERT INTO media_items (library_section_id, section_location_id, metadata_item_id, size, container) VALUES (?, 1, ?, ?, 'mkv')`)
    .run(opts.sectionId, metadataItemId, opts.size);
  const mediaItemId = Number(media.lastInsertRowid);
  const part = db
    .prepare(`INSERT INTO media_parts (media_item_id, directory_id, file, size, deleted_at) VALUES (?, 1, ?, ?, ?)`)
    .run(mediaItemId, opts.file, opts.size, opts.deletedAt ?? null);
  return { metadataItemId, mediaItemId, mediaPartId: Number(part.lastInsertRowid) };
}
