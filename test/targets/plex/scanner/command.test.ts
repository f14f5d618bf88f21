// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PLEX_SCANNER_DEFAULT, PLEX_SUPPORT_DIR_DEFAULT } from '../../../../src/config/schema.ts';
import {
  analyzeArgs,
  displayCommand,
  innerCommand,
  scanArgs,
  scannerCommand,
  shellQuote,
  type ScannerSettings,
} from '../../../../src/targets/plex/backends/scanner/command.ts';

const BASE: ScannerSettings = {
  SCANNER: PLEX_SCANNER_DEFAULT,
  LD_LIBRARY_PATH: '/usr/lib/plexmediaserver/lib',
  SUPPORT_DIR: PLEX_SUPPORT_DIR_DEFAULT,
  USER: 'plex',
  USE_SUDO: true,
  USE_DOCKER: false,
  DOCKER_NAME: 'plex',
};

describe('scanner command builder (plex_autoscan plex.py forms)', () => {
  test('shellQuote leaves safe words bare and single-quotes everything else, as shlex.quote', () => {
    assert.equal(shellQuote('1'), '1');
    assert.equal(shellQuote('/data/Movies/Heat_1995'), '/data/Movies/Heat_1995');
    assert.equal(shellQuote(''), "''");
    assert.equal(shellQuote('/data/Movies/Heat (1995)'), "'/data/Movies/Heat (1995)'");
    assert.equal(shellQuote("It's"), `'It'"'"'s'`);
  });

  test('outside docker the support folder is exported; admin keys are inserted verbatim', () => {
    assert.equal(
      innerCommand(BASE, scanArgs('1', '/data/Movies/Heat (1995)')),
      'export LD_LIBRARY_PATH=/usr/lib/plexmediaserver/lib;' +
        'export PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR=/var/lib/plexmediaserver/Library/Application\\ Support;' +
        "/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner --scan --refresh --section 1 --directory '/data/Movies/Heat (1995)'",
    );
  });

  test('with docker the support folder is not exported and the inner command goes to docker exec as one argument', () => {
    const cmd = scannerCommand({ ...BASE, USE_DOCKER: true, USER: 'abc', DOCKER_NAME: 'plex' }, scanArgs('2', '/tv/Dark'));
    const inner = "export LD_LIBRARY_PATH=/usr/lib/plexmediaserver/lib;/usr/lib/plexmediaserver/Plex\\ Media\\ Scanner --scan --refresh --section 2 --directory /tv/Dark";
    assert.deepEqual(cmd, { file: 'docker', args: ['exec', '-u', 'abc', '-i', 'plex', 'bash', '-c', inner] });
    // The printed line is the spec's `docker exec -u <user> -i <container> bash -c '<inner>'`.
    assert.equal(displayCommand(cmd), `docker exec -u abc -i plex bash -c '${inner.replace(/'/g, `'"'"'`)}'`);
  });

  test('sudo and plain bash wrappers', () => {
    assert.deepEqual(scannerCommand(BASE, '--list').file, 'sudo');
    assert.deepEqual(scannerCommand(BASE, '--list').args.slice(0, 4), ['-u', 'plex', 'bash', '-c']);
    const plain = scannerCommand({ ...BASE, USE_SUDO: false }, '--list');
    assert.equal(plain.file, 'bash');
    assert.equal(plain.args[0], '-c');
    assert.match(plain.args[1]!, /Scanner --list$/);
  });

  test('analyze follows the deep flag and joins item ids', () => {
    assert.equal(analyzeArgs([12, 13], false), '--analyze --item 12,13');
    assert.equal(analyzeArgs([7], true), '--analyze-deeply --item 7');
  });
});
