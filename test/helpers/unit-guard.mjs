// Loaded with --import by `npm run test:unit` (scripts/test-unit.mjs) into each test file's process: the unit set
// has no child process, no port and no database server. Each of those throws here, so a file that needs one fails
// the unit run and has to leave the set (drop its first-line marker) instead of slowing it down.
import childProcess from 'node:child_process';
import net from 'node:net';
import { syncBuiltinESMExports } from 'node:module';

function refuse(what) {
  return () => {
    throw new Error(`the unit set runs no ${what}: this file needs \`npm test\`; drop its unit-set marker (scripts/test-unit.mjs)`);
  };
}
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  childProcess[name] = refuse(`child process (${name})`);
}
net.Server.prototype.listen = refuse('listening port');
net.Socket.prototype.connect = refuse('network connection');
syncBuiltinESMExports();
