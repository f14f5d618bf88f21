import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './relay.ts';

/**
 * A self-signed certificate for `*.<hash>.plex.direct`, as Plex serves one (never for the address it is reached
 * at), made with the machine's openssl for this test run.
 */
export function plexLikeCertificate(): { key: string; cert: string } {
  const dir = tempDir('scanrelay-tls-');
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
      '-subj', '/CN=*.0123456789abcdef.plex.direct', '-addext', 'subjectAltName=DNS:*.0123456789abcdef.plex.direct'],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}
