import { z } from 'zod';

/**
 * The `token` option of an rclone oauth remote: one-line JSON of Go's oauth2.Token, i.e. exactly
 * access_token, token_type, refresh_token, expiry (RFC 3339), in that order.
 */
export const rcloneTokenSchema = z.object({
  access_token: z.string().min(1, 'access_token is empty'),
  token_type: z.string().default('Bearer'),
  refresh_token: z.string().optional(),
  expiry: z
    .string()
    .refine((s) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s), 'expiry is not an RFC 3339 time')
    .optional(),
});

export type RcloneToken = z.infer<typeof rcloneTokenSchema>;

export class TokenFormatError extends Error {}

/** Parses token JSON (as rclone stores it, or as a token endpoint answers with expires_in). */
export function parseToken(text: string, now = Date.now()): RcloneToken {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new TokenFormatError('the token is not valid JSON');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new TokenFormatError('the token is not a JSON object');
  const obj = raw as Record<string, unknown>;
  if (obj.expiry === undefined && typeof obj.expires_in === 'number') obj.expiry = new Date(now + obj.expires_in * 1000).toISOString();
  const parsed = rcloneTokenSchema.safeParse(obj);
  if (!parsed.success) throw new TokenFormatError(`the token is not usable: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'token'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** One-line JSON in rclone's field order; Go's oauth2.Token always carries token_type Bearer and an expiry. */
export function formatToken(token: RcloneToken): string {
  const out: Record<string, string> = { access_token: token.access_token, token_type: token.token_type || 'Bearer' };
  if (token.refresh_token) out.refresh_token = token.refresh_token;
  out.expiry = token.expiry ?? '0001-01-01T00:00:00Z';
  return goJson(out);
}

/** JSON.stringify as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
