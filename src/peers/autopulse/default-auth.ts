/**
 * autopulse's default Basic-auth pair (auth.rs:19-21): what `import-autopulse` carries over when the user never
 * changed it, and what anyone tries first.
 */
export const DEFAULT_AUTH = { user: 'admin', pass: 'password' } as const;

export const isDefaultCredentials = (user: unknown, pass: unknown): boolean => user === DEFAULT_AUTH.user && pass === DEFAULT_AUTH.pass;

/** The warning at every start and the dashboard's banner while the default pair is configured. */
export const DEFAULT_AUTH_WARNING =
  "SERVER_AUTH_USER and SERVER_AUTH_PASS are autopulse's default admin/password: requests with them are accepted only from loopback and private networks, refused (401) from any other address. Set a strong password (`scanrelay import-autopulse --new-password`, or by hand), then the same in every webhook";
