/**
 * How scanrelay makes Plex scan: over the HTTP API or by running the Plex Media Scanner binary
 * (PLEX_SCAN_METHOD). The Plex target's steps around the scan (checks, empty trash, analyze) are the
 * same for both; only these operations differ. Methods throw TargetError by kind.
 */
export interface PlexSectionRef {
  id: string;
  title: string;
  /** The section location that holds the folder. */
  location: string;
}

export interface PlexScanBackend {
  readonly method: 'api' | 'scanner';
  /** The section whose location holds the folder, or undefined when none does. */
  resolveSection(folder: string): Promise<PlexSectionRef | undefined>;
  /** Every section whose location holds the folder, the closest first (each one gets the scan). */
  resolveSections?(folder: string): Promise<PlexSectionRef[]>;
  /** Every section location, for error messages and the library check; `fresh` reads the list again. */
  knownLocations(fresh?: boolean): Promise<string[]>;
  /** A partial scan of one folder. */
  scan(sectionId: string, folder: string): Promise<{ detail?: string }>;
  /** Analyze metadata items (basic or deep). */
  analyze(metadataIds: readonly number[], deep: boolean): Promise<void>;
  /** The exact request or command line a scan makes, for logs and --dry-run. */
  describeScan(sectionId: string, folder: string): string;
  /** Cheap reachability check. */
  available(): Promise<{ ok: boolean; error?: string }>;
}
