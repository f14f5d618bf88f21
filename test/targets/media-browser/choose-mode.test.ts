// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseMode } from '../../../src/targets/media-browser/scan-mode.ts';

// Issue 50: what SCAN_MODE auto picks from /System/Info's Version and /Plugins.

test('auto: the active TargetedScan plugin, else item on Jellyfin 10.11 or later, else media-updated', () => {
  const plugin = [{ name: 'TargetedScan', version: '1.9.0.0', status: 'Active' }];
  const table: Array<[product: 'Jellyfin' | 'Emby', version: string | undefined, plugins: typeof plugin, mode: string]> = [
    ['Jellyfin', '10.11.3', [], 'item'],
    ['Jellyfin', '10.11.0', [], 'item'],
    ['Jellyfin', '12.0.0', [], 'item'],
    ['Jellyfin', '10.10.7', [], 'media-updated'],
    ['Jellyfin', '10.9.11', [], 'media-updated'],
    // A Jellyfin that does not say its version is taken as a new one: Media/Updated there may cost the library.
    ['Jellyfin', undefined, [], 'item'],
    ['Emby', '4.9.1.80', [], 'media-updated'],
    ['Jellyfin', '10.11.3', plugin, 'plugin'],
    ['Jellyfin', '10.10.7', plugin, 'plugin'],
    // Emby lists loaded plugins without a Status.
    ['Emby', '4.8.10.0', [{ name: 'TargetedScan', version: '1.8.0.0', status: undefined as unknown as string }], 'plugin'],
    // Installed but not loaded (a restart pending, disabled, broken): not used.
    ['Jellyfin', '10.11.3', [{ name: 'TargetedScan', version: '1.9.0.0', status: 'Restart' }], 'item'],
    ['Jellyfin', '10.11.3', [{ name: 'TargetedScan', version: '1.9.0.0', status: 'Malfunctioned' }], 'item'],
    ['Jellyfin', '10.11.3', [{ name: 'Other', version: '1', status: 'Active' }], 'item'],
  ];
  for (const [product, version, plugins, mode] of table) {
    const plain = plugins.map((p) => (p.status === undefined ? { name: p.name, version: p.version } : p));
    assert.equal(chooseMode(product, version, plain).mode, mode, `${product} ${version} ${JSON.stringify(plugins)}`);
  }
  assert.equal(chooseMode('Jellyfin', '10.11.3', [{ name: 'TargetedScan', status: 'Disabled' }]).why, 'Jellyfin 10.11.3, its TargetedScan plugin is Disabled: Media/Updated would scan the whole library there');
});
