// Run as a child process (under strace in test/config/atomic-write.test.ts): writes config.json,
// rclone.conf and token.json into the folder named by argv[2] with the relay's own writers.
import { join } from 'node:path';
import { writeConfigFile } from '../../src/config/load.ts';
import { writeTokenFile } from '../../src/google/token-file.ts';
import { writeRcloneConf } from '../../src/google/rclone-conf.ts';

const dir = process.argv[2]!;
writeConfigFile(join(dir, 'config.json'), { SERVER_PASS: 'x' });
writeRcloneConf(join(dir, 'rclone.conf'), '[gd]\ntype = drive\n');
writeTokenFile(join(dir, 'token.json'), { access_token: 'a', refresh_token: 'r', expires_in: 3600, token_type: 'Bearer' } as never);
