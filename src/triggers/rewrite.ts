import type { Intent } from '../intake/intent.ts';
import type { PathRewriter } from '../paths/rewrite.ts';

/**
 * A trigger's own rewrite (autoscan's per-trigger `rewrite`, e.g. triggers/sonarr/sonarr.go `h.rewrite`):
 * it takes this trigger's paths to the relay's own path, and no other trigger's. Returns the intent with
 * its paths rewritten; an intent without paths, or a trigger without rules, is returned as it is.
 */
export function rewriteIntent<I extends Intent>(intent: I, rewrite: PathRewriter | undefined): I {
  if (!rewrite || intent.kind !== 'scan') return intent;
  return { ...intent, paths: intent.paths.map((p) => ({ ...p, path: rewrite(p.path) })) };
}
