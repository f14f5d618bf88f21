import { BlobError, decodeConfigMap, encodeConfigMap } from './rclone-blob.ts';
import { formatToken, parseToken, TokenFormatError, type RcloneToken } from './rclone-token.ts';

export const PASTE_START = 'Paste the following into your remote machine --->';
export const PASTE_END = '<---End paste';

export class PasteError extends Error {}

export interface PasteResult {
  token: RcloneToken;
  /** The token as rclone stores it (one-line JSON). */
  tokenText: string;
  /** Other options the browser side sent (the base64 form can carry more than the token). */
  options: Record<string, string>;
  form: 'configmap' | 'token-json';
}

/** Text between the markers when they are there, else the whole paste; trimmed. */
export function stripMarkers(text: string): string {
  let body = text;
  const start = body.indexOf(PASTE_START);
  if (start >= 0) body = body.slice(start + PASTE_START.length);
  const end = body.indexOf(PASTE_END);
  if (end >= 0) body = body.slice(0, end);
  return body.trim();
}

/**
 * What the user pasted at `config_token>`: either form `rclone authorize` prints (base64 config map holding
 * `token`, or plain token JSON), with or without the markers. Throws PasteError saying why.
 */
export function parsePaste(text: string, now = Date.now()): PasteResult {
  const body = stripMarkers(text);
  if (!body) throw new PasteError('nothing was pasted: paste what "rclone authorize" printed between the markers');
  try {
    if (body.startsWith('{')) {
      const token = parseToken(body, now);
      return { token, tokenText: formatToken(token), options: {}, form: 'token-json' };
    }
    let map: Record<string, string>;
    try {
      map = decodeConfigMap(body);
    } catch (err) {
      throw new PasteError(`this is neither token JSON nor rclone's base64 answer: ${(err as BlobError).message}`);
    }
    const { token: tokenText, ...options } = map;
    if (!tokenText) throw new PasteError('the pasted answer holds no token: run "rclone authorize" again and paste its whole answer');
    const token = parseToken(tokenText, now);
    return { token, tokenText: formatToken(token), options, form: 'configmap' };
  } catch (err) {
    if (err instanceof TokenFormatError) throw new PasteError(err.message);
    throw err;
  }
}

/** What the browser-side half prints: the markers around a base64 config map holding the token. */
export function pasteBlock(options: Record<string, string>): string {
  return `${PASTE_START}\n${encodeConfigMap(options)}\n${PASTE_END}\n`;
}
