/**
 * A URL or text with the relay's secret replaced, for logs: the secret is the only credential a
 * webhook sender has, and log files travel (bug reports, support forums).
 */
export function redactSecret(text: string, secret: string): string {
  if (!secret) return text;
  let out = text.split(secret).join('<secret>');
  // The router decodes %XX in the secret segment; a URL may carry the encoded form.
  const encoded = encodeURIComponent(secret);
  if (encoded !== secret) out = out.split(encoded).join('<secret>');
  return out;
}

/** The scan URL as shown after the first start: the secret's first four characters and an ellipsis. */
export function shortSecretUrl(base: string, secret: string): string {
  return `${base}/${encodeURIComponent(secret.slice(0, 4))}…`;
}
