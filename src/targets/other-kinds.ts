/**
 * The target kinds beyond Plex, loaded together the first time a config names one of them (registry.ts): a Plex-only
 * relay never loads their code. One import for all of them, not one each: each dynamic import is a bundle entry, and
 * nine of them split the code they share into 15 more chunks, each about 6 KB of an idle relay's heap.
 */
export * as jellyfin from './jellyfin/kind.ts';
export * as emby from './emby/kind.ts';
export * as audiobookshelf from './audiobookshelf/kind.ts';
export * as tdarr from './tdarr/kind.ts';
export * as fileflows from './fileflows/kind.ts';
export * as sonarr from './sonarr/kind.ts';
export * as radarr from './radarr/kind.ts';
export * as command from './command/kind.ts';
export * as relay from './relay/kind.ts';
