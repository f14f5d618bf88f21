import type { DeliveryResult, ScanItem, Target } from '../core/scan.ts';
import { placeRewriter, type RewriteMode, type RewriteRule } from '../paths/rewrite.ts';
import { resultFromError } from './http.ts';
import { itemForTarget } from './rewrite.ts';

/** What one HTTP kind adds to serviceTarget's frame. */
export interface ServiceKind {
  /** Sends one scan: `item` as this target names it (after its REWRITE), `queued` as the relay does. May throw. */
  send(item: ScanItem, queued: ScanItem): Promise<DeliveryResult>;
  /** Sends a backlog in one request (Target.deliverMany), the scans in the same order; a throw fails them all alike. */
  sendMany?(items: ScanItem[], queued: readonly ScanItem[]): Promise<DeliveryResult[]>;
  /** A cheap request that answers when the service is up and takes the key. */
  probe(): Promise<unknown>;
  libraryRoots?(fresh?: boolean): Promise<string[]>;
}

/**
 * The frame every kind behind ServiceClient shares (Audiobookshelf, Tdarr, FileFlows, Sonarr/Radarr, relay): its
 * own REWRITE (autoscan's per-target `t.rewrite`), a thrown error turned into a retry or a failure
 * (resultFromError), and `available` as "the probe answers".
 */
export function serviceTarget(
  name: string,
  paths: { REWRITE?: readonly RewriteRule[] | undefined; REWRITE_MODE?: RewriteMode | undefined },
  kind: ServiceKind,
): Target {
  const rewrite = placeRewriter(paths.REWRITE, paths.REWRITE_MODE);
  return {
    name,
    ...(rewrite ? { toTargetPath: rewrite } : {}),
    async deliver(queued: ScanItem): Promise<DeliveryResult> {
      try {
        return await kind.send(itemForTarget(queued, rewrite), queued);
      } catch (err) {
        return resultFromError(err);
      }
    },
    ...(kind.sendMany
      ? {
          async deliverMany(queued: readonly ScanItem[]): Promise<DeliveryResult[]> {
            try {
              return await kind.sendMany!(queued.map((q) => itemForTarget(q, rewrite)), queued);
            } catch (err) {
              const failed = resultFromError(err);
              return queued.map(() => failed);
            }
          },
        }
      : {}),
    ...(kind.libraryRoots ? { libraryRoots: kind.libraryRoots } : {}),
    async available() {
      try {
        await kind.probe();
        return { ok: true };
      } catch (err) {
        return { ok: false, error: (err as Error).message };
      }
    },
  };
}
