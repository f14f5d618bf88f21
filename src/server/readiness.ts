import type { AppDeps } from './deps.ts';

/**
 * Why no enabled target can scan yet, or undefined when one can. A scan request is still queued (nothing is
 * lost), but its answer says that it will wait, so a new user does not read "queued" as "scanned soon".
 * A target without a set-up check (Target.setupProblems: only Plex has one) is taken as able to scan.
 */
export function notReadyReason(deps: Pick<AppDeps, 'targets' | 'setupProblems'>): string | undefined {
  const targets = deps.targets ?? [];
  if (targets.length === 0) return 'no media server is enabled (PLEX_ENABLED is false and no JELLYFIN or EMBY): the scan waits in the queue';
  // A target without a set-up check is taken as able to scan.
  if (targets.some((t) => !t.setupProblems)) return undefined;
  // The check runs once, at start. A config problem (no token, no scanner) stays until a restart; Plex being
  // down or without libraries (PLEX_LOCAL_URL) may end at any time, so it is not repeated to every request.
  const problems = (deps.setupProblems?.() ?? []).filter((p) => p.key !== 'PLEX_LOCAL_URL');
  if (problems.length === 0) return undefined;
  return `no media server can scan yet, so the scan waits in the queue: ${problems.map((p) => p.message).join('; ')}`;
}

/** A scan answer with the reason it will wait, when no target can scan yet. */
export function withReadiness<R extends { status: string }>(result: R, deps: Pick<AppDeps, 'targets' | 'setupProblems'>): R & { warning?: string } {
  const warning = result.status === 'ignored' ? undefined : notReadyReason(deps);
  return warning ? { ...result, warning } : result;
}
