/** A mistake in the user's config or command line: printed as one message, exit status 2, no stack trace. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/**
 * The queue's database cannot be reached (PostgreSQL down, the network lost). Nothing was queued: the
 * server answers 503 with Retry-After, so a sender that retries loses nothing.
 */
export class QueueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}
