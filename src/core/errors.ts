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
