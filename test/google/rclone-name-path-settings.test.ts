import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { remoteNameProblem } from '../../src/google/rclone-name.ts';
import { pathFromConfigFileOutput, resolveRcloneConfPath, searchRcloneConf } from '../../src/google/rclone-path.ts';
import { readInstallSettings, remoteFromSettings, setRemoteInSettings, writeRemoteToSettings } from '../../src/google/rclone-settings-yml.ts';
import { expandPath } from '../../src/paths/expand.ts';
import { tempDir } from '../helpers/relay.ts';

function rcloneAccepts(name: string): boolean {
  const conf = join(tempDir('scanrelay-name-'), 'rclone.conf');
  try {
    execFileSync('rclone', ['--config', conf, 'config', 'create', name, 'local', '--non-interactive'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

test('remote names: the rclone 1.60 character rule, checked against real rclone', () => {
  for (const name of ['cloud', 'gd', 'a.b_c-d', 'My Drive 2', 'a-', '.a', '_a', 'a  b', 'A9']) {
    assert.equal(remoteNameProblem(name), undefined, name);
    assert.equal(rcloneAccepts(name), true, `rclone accepts ${name}`);
  }
  for (const name of ['a+b', 'a@b', 'é', 'a:b', 'a/b', 'ü-drive']) {
    assert.match(remoteNameProblem(name)!, /invalid characters/, name);
    assert.equal(rcloneAccepts(name), false, `rclone refuses ${name}`);
  }
});

test('remote names: no leading "-" or space, no trailing space, not empty', () => {
  assert.match(remoteNameProblem('-a')!, /start with "-"/);
  assert.match(remoteNameProblem(' a')!, /start with a space/);
  assert.match(remoteNameProblem('a ')!, /end with a space/);
  assert.match(remoteNameProblem('')!, /empty/);
});

test('config path: --rclone-config, then $RCLONE_CONFIG, then rclone config file', () => {
  const dir = tempDir('scanrelay-path-');
  assert.deepEqual(resolveRcloneConfPath(join(dir, 'a.conf'), { RCLONE_CONFIG: '/x/b.conf' }), { path: join(dir, 'a.conf'), source: 'option' });
  assert.deepEqual(resolveRcloneConfPath(undefined, { RCLONE_CONFIG: '/x/b.conf', PATH: process.env.PATH }), { path: '/x/b.conf', source: 'env' });
  // With rclone on PATH, its own answer counts (HOME moved so it names a file under it).
  const found = resolveRcloneConfPath(undefined, { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg') });
  assert.deepEqual(found, { path: join(dir, 'xdg', 'rclone', 'rclone.conf'), source: 'rclone' });
  assert.equal(pathFromConfigFileOutput('Configuration file is stored at:\n/root/.config/rclone/rclone.conf\n'), '/root/.config/rclone/rclone.conf');
});

test('config path without rclone: rclone\'s search order, beside the binary first', () => {
  const dir = tempDir('scanrelay-path-');
  const home = join(dir, 'home');
  const bin = join(dir, 'bin');
  const xdg = join(dir, 'xdg');
  for (const d of [home, bin, join(xdg, 'rclone'), join(home, '.config', 'rclone')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(bin, 'rclone'), '#!/bin/sh\n');
  chmodSync(join(bin, 'rclone'), 0o755);
  const env = { XDG_CONFIG_HOME: xdg };
  // Nothing exists: the new file goes to the XDG folder, or ~/.config without XDG.
  assert.deepEqual(searchRcloneConf({ env, home }), { path: join(xdg, 'rclone', 'rclone.conf'), source: 'default' });
  assert.deepEqual(searchRcloneConf({ env: {}, home }), { path: join(home, '.config', 'rclone', 'rclone.conf'), source: 'default' });
  writeFileSync(join(home, '.rclone.conf'), '');
  assert.equal(searchRcloneConf({ env, home }).path, join(home, '.rclone.conf'));
  writeFileSync(join(home, '.config', 'rclone', 'rclone.conf'), '');
  assert.equal(searchRcloneConf({ env, home }).path, join(home, '.config', 'rclone', 'rclone.conf'));
  writeFileSync(join(xdg, 'rclone', 'rclone.conf'), '');
  assert.equal(searchRcloneConf({ env, home }).path, join(xdg, 'rclone', 'rclone.conf'));
  writeFileSync(join(bin, 'rclone.conf'), '');
  assert.equal(searchRcloneConf({ env, home, rcloneBinary: join(bin, 'rclone') }).path, join(bin, 'rclone.conf'));
});

test('settings.yml: remote key read and changed in place, default cloud', () => {
  const text = '---\n# install settings\nuser: media\nremote: google  # the rclone remote\nrclone:\n  remote: nested\n';
  assert.equal(remoteFromSettings(text), 'google');
  assert.equal(remoteFromSettings('remote: "my drive"\n'), 'my drive');
  assert.equal(remoteFromSettings('user: x\n'), undefined);
  assert.equal(setRemoteInSettings(text, 'gd'), text.replace('remote: google  # the rclone remote', 'remote: gd'));
  assert.equal(setRemoteInSettings('user: x', 'gd'), 'user: x\nremote: gd\n');
  const dir = tempDir('scanrelay-settings-');
  assert.deepEqual(readInstallSettings(join(dir, 'settings.yml')), { path: join(dir, 'settings.yml'), exists: false, remote: 'cloud' });
  writeFileSync(join(dir, 'settings.yml'), text);
  assert.equal(readInstallSettings(undefined, { SCANRELAY_SETTINGS: join(dir, 'settings.yml') }).remote, 'google');
  writeRemoteToSettings(join(dir, 'settings.yml'), 'my drive');
  assert.equal(readFileSync(join(dir, 'settings.yml'), 'utf8'), text.replace('remote: google  # the rclone remote', 'remote: "my drive"'));
});

test('service_account_file paths expand ~ and environment variables, as rclone does', () => {
  assert.equal(expandPath('~/sa.json', {}, '/home/u'), '/home/u/sa.json');
  assert.equal(expandPath('${RCLONE_CONFIG_DIR}/sa.json', { RCLONE_CONFIG_DIR: '/etc/rc' }, '/h'), '/etc/rc/sa.json');
  assert.equal(expandPath('$HOME/x/$NOPE.json', { HOME: '/h' }, '/h'), '/h/x/.json');
});
