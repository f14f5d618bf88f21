// Types for scripts/test-deps.mjs (plain JS so it runs before anything is compiled).
export declare const NEEDED: ReadonlyArray<{ command: string; pkg: string; why: string }>;
export declare function missingPackages(has: (command: string) => boolean): string[];
export declare function plan(
  missing: string[],
  uid: number,
): { action: 'none' } | { action: 'install'; commands: string[][] } | { action: 'stop'; message: string };
export declare function onPath(command: string, path?: string): boolean;
export declare function hasInitdb(path?: string, base?: string): boolean;
