import { DRIVE_OPTIONS } from './rclone-drive-options.ts';
import { goJson } from './rclone-token.ts';

/**
 * rclone's configmap.Simple encoding, used on both sides of `rclone authorize`: base64 (standard alphabet,
 * no padding) of the JSON of a string map. Go marshals maps with sorted keys.
 */
export function encodeConfigMap(map: Record<string, string>): string {
  const keys = Object.keys(map).sort();
  if (!keys.length) return '';
  const sorted: Record<string, string> = {};
  for (const k of keys) sorted[k] = map[k];
  return Buffer.from(goJson(sorted), 'utf8').toString('base64').replace(/=+$/, '');
}

export class BlobError extends Error {}

/** Decodes a configmap blob (whitespace ignored, as rclone does; padding and URL-safe letters tolerated). */
export function decodeConfigMap(blob: string): Record<string, string> {
  const text = blob.replace(/\s+/g, '');
  if (!text) return {};
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new BlobError('it is not base64');
  const json = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
  let map: unknown;
  try {
    map = JSON.parse(json);
  } catch {
    throw new BlobError('it decodes to something that is not JSON');
  }
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw new BlobError('it decodes to JSON that is not an object');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map as Record<string, unknown>)) {
    if (typeof v !== 'string') throw new BlobError(`its value for "${k}" is not a string`);
    out[k] = v;
  }
  return out;
}

/**
 * The blob rclone prints in `rclone authorize "drive" "<blob>"`: the drive options whose value differs from
 * rclone's default, minus `token` (lib/oauthutil `*oauth-remote`: Options.NonDefault, then delete token).
 * Keys that are not drive options (type, ...) are not sent.
 */
export function authorizeBlob(remote: Record<string, string>): string {
  const nonDefault: Record<string, string> = {};
  for (const opt of DRIVE_OPTIONS) {
    const value = remote[opt.name];
    if (value === undefined || opt.name === 'token') continue;
    if (value !== opt.default) nonDefault[opt.name] = value;
  }
  return encodeConfigMap(nonDefault);
}

/** The command rclone tells the user to run on the machine with a browser. */
export function authorizeCommand(remote: Record<string, string>, program = 'rclone'): string {
  const blob = authorizeBlob(remote);
  return blob ? `${program} authorize "drive" "${blob}"` : `${program} authorize "drive"`;
}
