import { UserError } from '../core/errors.ts';
import { loopbackAuthorize, runRcloneAuthorize } from '../google/rclone-authorize.ts';
import { BlobError, decodeConfigMap } from '../google/rclone-blob.ts';
import { googleEndpoints } from '../google/endpoints.ts';
import { findRcloneBinary } from '../google/rclone-path.ts';
import { pasteBlock } from '../google/rclone-paste.ts';

/**
 * `scanrelay authorize drive "<blob>"`: the browser-machine half of a headless remote setup, so that
 * machine needs no rclone. Prints the token between rclone's paste markers, in the base64 form rclone's
 * `config_token>` (and `scanrelay remote`) accept.
 */
export async function authorizeRclone(
  backend: string,
  blob: string | undefined,
  io: { out: (text: string) => void; env?: NodeJS.ProcessEnv } = { out: (t) => process.stdout.write(t) },
): Promise<void> {
  const env = io.env ?? process.env;
  if (backend !== 'drive') throw new UserError(`scanrelay authorizes only "drive" remotes, not "${backend}": use "rclone authorize ${JSON.stringify(backend)}" for other backends`);
  let options: Record<string, string>;
  try {
    options = decodeConfigMap(blob ?? '');
  } catch (err) {
    throw new UserError(`the blob after "drive" is not one that rclone prints (${(err as BlobError).message}): copy it again from "scanrelay remote" or "rclone config"`);
  }
  if (!options.client_id) {
    const rclone = findRcloneBinary(env);
    if (!rclone) {
      throw new UserError(
        'this remote uses rclone\'s own client id, which only rclone itself may use, and rclone is not installed here. ' +
          'Install rclone on this machine and run the same command with "rclone" instead of "scanrelay", or better: ' +
          'create your own client id (https://rclone.org/drive/#making-your-own-client-id), enter it in "scanrelay remote", and run the new command it prints.',
      );
    }
    io.out('This remote uses rclone\'s own client id: running rclone authorize.\n');
    const result = await runRcloneAuthorize(rclone, blob ?? '', io.out);
    if (result.code !== 0) throw new UserError(`rclone authorize failed (exit status ${result.code})`, 1);
    return;
  }
  let token: string;
  try {
    token = await loopbackAuthorize(options, googleEndpoints({ env, remote: options }), (line) => io.out(`${line}\n`));
  } catch (err) {
    throw new UserError(`authorization failed: ${(err as Error).message}`, 1);
  }
  io.out(pasteBlock({ token }));
}
