/** Secrets shown partly, so a user can recognise them on screen without exposing them. */
export const SECRET_OPTIONS = new Set(['client_secret', 'token', 'service_account_credentials']);

export function maskSecret(value: string): string {
  if (value.length <= 8) return '*'.repeat(value.length);
  return `${value.slice(0, 4)}${'*'.repeat(Math.min(value.length - 4, 12))}`;
}

/** The value of one option as shown at the confirm step: token JSON keeps its shape, its secrets masked. */
export function maskOption(key: string, value: string): string {
  if (!SECRET_OPTIONS.has(key) || !value) return value;
  if (key === 'token') {
    try {
      const token = JSON.parse(value) as Record<string, unknown>;
      for (const k of ['access_token', 'refresh_token']) if (typeof token[k] === 'string') token[k] = maskSecret(token[k] as string);
      return JSON.stringify(token);
    } catch {
      return maskSecret(value);
    }
  }
  return maskSecret(value);
}
