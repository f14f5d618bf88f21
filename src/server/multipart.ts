import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/*
 * multipart/form-data bodies, as `curl -F eventType=Manual -F filepath=...` sends them. plex_autoscan read
 * them through Flask's request.form (scan.py:316-318 for scans, scan.py:249 for the API). Only text fields
 * are read, into the same plain object a urlencoded form gives. A file part is refused with 400: Flask
 * left files out of request.form, and `-F filepath=@/mnt/x.mkv` (curl's "@" uploads the file) is a
 * mistake worth naming rather than a 400 "filepath is missing" or a 1 MiB upload.
 */

const FILE_REFUSED =
  'file parts are not accepted: send filepath as a text field (curl -F "filepath=/path/to/folder", without "@", which uploads a file)';

const httpError = (statusCode: number, message: string) => Object.assign(new Error(message), { statusCode });

/**
 * Registers the multipart parser with the whole body held to `bodyLimit`, as every other body is. The
 * plugin reads the raw request itself (fastify's bodyLimit does not apply), so the limit is checked here:
 * at once from Content-Length, else by counting the bytes as they arrive. A malformed body is a 400.
 */
export async function registerMultipart(app: FastifyInstance, bodyLimit: number): Promise<void> {
  await app.register(multipart, { limits: { fieldSize: bodyLimit, fields: 1000, parts: 1000, fileSize: 0 } });
  app.addHook('preValidation', async (req: FastifyRequest) => {
    if (!req.isMultipart()) return;
    const declared = Number(req.headers['content-length']);
    if (declared > bodyLimit) throw httpError(413, 'body too large');
    let seen = 0;
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= bodyLimit) return;
      req.raw.off('data', count);
      // The plugin listens for request errors and ends its parts with this one.
      req.raw.emit('error', httpError(413, 'body too large'));
    };
    req.raw.on('data', count);
    req.body = await readFields(req);
  });
}

/** The text fields as a plain object, as a urlencoded form gives them (a repeated name becomes a list). */
async function readFields(req: FastifyRequest): Promise<Record<string, string | string[]>> {
  const body: Record<string, string | string[]> = Object.create(null);
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        part.file.resume();
        throw httpError(400, FILE_REFUSED);
      }
      const value = String(part.value);
      const prev = body[part.fieldname];
      body[part.fieldname] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
  } catch (err) {
    const e = err as Error & { statusCode?: number };
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) throw e;
    // busboy's own parse errors carry no status: the body is the client's mistake.
    throw httpError(400, `malformed multipart/form-data body: ${e.message}`);
  }
  return { ...body };
}
