// Loaded with `node --import` into a relay under test: appends every module specifier the process resolves
// (with the URL it resolved to) to the file named by SCANRELAY_TRACE_MODULES, one per line, so a test can
// check what a configuration loads. In Node 20 that hook sees only imports, so the CommonJS modules the
// process required (fastify's own dependencies) are appended too when it exits, as "require <url>", and node's
// built-in modules it loaded, as "builtin <name>".
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

if (process.env.SCANRELAY_TRACE_MODULES) {
  const hooks = `
    import { appendFileSync } from 'node:fs';
    const file = ${JSON.stringify(process.env.SCANRELAY_TRACE_MODULES)};
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      appendFileSync(file, specifier + ' ' + result.url + '\\n');
      return result;
    }`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
  const required = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const lines = Object.keys(required).map((path) => `require ${pathToFileURL(path).href}\n`);
    // node's own public modules the process loaded (http2, zlib, ...), as "builtin <name>".
    const builtins = process.moduleLoadList.filter((m) => m.startsWith('NativeModule ') && !m.startsWith('NativeModule internal/'));
    appendFileSync(process.env.SCANRELAY_TRACE_MODULES, lines.join('') + builtins.map((m) => `builtin ${m.slice('NativeModule '.length)}\n`).join(''));
  });
}
