/**
 * Remote names as rclone 1.60 and later accept them: ASCII letters, digits, `_`, `-`, `.` and space, not
 * starting with `-` or space and not ending with space. (rclone 1.60 rejects `+`, `@` and non-ASCII letters;
 * later versions accept some of those, so a name valid here works everywhere.)
 */
const NAME = /^[A-Za-z0-9_.](?:[A-Za-z0-9_. -]*[A-Za-z0-9_.-])?$/;

/** undefined when valid, else the reason in rclone's words. */
export function remoteNameProblem(name: string): string | undefined {
  if (name === '') return 'the remote name is empty';
  if (name.startsWith('-')) return 'the remote name cannot start with "-"';
  if (name.startsWith(' ')) return 'the remote name cannot start with a space';
  if (name.endsWith(' ')) return 'the remote name cannot end with a space';
  if (!NAME.test(name)) return 'config name contains invalid characters - may only contain `0-9`, `A-Z`, `a-z`, `_`, `-`, `.` and space';
  return undefined;
}

export function isValidRemoteName(name: string): boolean {
  return remoteNameProblem(name) === undefined;
}
