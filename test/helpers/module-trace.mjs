// Loaded with `node --import` into a relay under test: appends every module specifier the process resolves
// (with the URL it resolved to) to the file named by SCANRELAY_TRACE_MODULES, one per line, so a test can
// check what a configuration loads.
import { register } from 'node:module';

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
}
