import Database from 'better-sqlite3';
import { UserError } from '../core/errors.ts';

/** Another program's SQLite file, opened read-only (it is never changed); a failure names what it is. */
export function openReadOnly(file: string, what: string): Database.Database {
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new UserError(`cannot open ${what} ${file}: ${(err as Error).message}`);
  }
}
