// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { expandPath } from '../../src/paths/expand.ts';

// One expansion for every path a user types (config keys, rclone.conf's service_account_file, the walkthrough's
// prompts), in the shell's order: `~` first, then variables, so a variable that holds a `~` is left as it is.
test('~ is the home folder, then $VAR and ${VAR} are replaced, unset ones by nothing', () => {
  assert.equal(expandPath('~', {}, '/home/u'), '/home/u');
  assert.equal(expandPath('~/keys/sa.json', {}, '/home/u'), '/home/u/keys/sa.json');
  assert.equal(expandPath('${CONF}/sa.json', { CONF: '/etc/relay' }, '/h'), '/etc/relay/sa.json');
  assert.equal(expandPath('$CONF/$NAME.json', { CONF: '/etc/relay', NAME: 'sa' }, '/h'), '/etc/relay/sa.json');
  assert.equal(expandPath('$UNSET/sa.json', {}, '/h'), '/sa.json');
  assert.equal(expandPath('$DIR/sa.json', { DIR: '~/keys' }, '/home/u'), '~/keys/sa.json', 'a ~ that comes from a variable is not expanded, as in a shell');
  assert.equal(expandPath('/srv/~user/sa.json', {}, '/home/u'), '/srv/~user/sa.json', 'only a leading ~ is the home folder');
});
