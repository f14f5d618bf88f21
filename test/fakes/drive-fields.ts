/**
 * Drive v3's partial responses (docs/protocols.md section 6): an answer holds only the fields the request's
 * `fields` parameter names, or the method's default set when it names none. The grammar: a comma-separated
 * list of names, `a/b` for a field inside `a`, `a(b,c)` for several fields inside `a` (applied to each element
 * of an array), `*` for every field at that level. A malformed selection is answered 400, as Drive does.
 */

export type FieldSelection = Map<string, FieldSelection | true>;

export class FieldSelectionError extends Error {}

/** Parses a `fields` value; throws FieldSelectionError on a malformed one. */
export function parseFields(spec: string): FieldSelection {
  let at = 0;
  const fail = (why: string): never => {
    throw new FieldSelectionError(`Invalid field selection ${spec}: ${why} at ${at}`);
  };
  const merge = (into: FieldSelection, name: string, sub: FieldSelection | true) => {
    const had = into.get(name);
    if (had === true || sub === true) into.set(name, true);
    else if (had) for (const [k, v] of sub) merge(had, k, v);
    else into.set(name, sub);
  };
  const list = (closing: boolean): FieldSelection => {
    const out: FieldSelection = new Map();
    for (;;) {
      const path: string[] = [];
      for (;;) {
        const m = /^(\*|[A-Za-z][A-Za-z0-9_]*)/.exec(spec.slice(at));
        if (!m) fail('expected a field name');
        path.push(m![1]!);
        at += m![1]!.length;
        if (spec[at] !== '/') break;
        at++;
      }
      let leaf: FieldSelection | true = true;
      if (spec[at] === '(') {
        at++;
        leaf = list(true);
        if (spec[at] !== ')') fail('expected ")"');
        at++;
      }
      // a/b(c) is a(b(c)): build from the innermost name out.
      let node: FieldSelection | true = leaf;
      for (let i = path.length - 1; i > 0; i--) node = new Map([[path[i]!, node]]);
      merge(out, path[0]!, node);
      if (spec[at] === ',') {
        at++;
        continue;
      }
      if (closing ? spec[at] === ')' : at === spec.length) return out;
      fail('unexpected character');
    }
  };
  if (!spec.trim()) fail('empty');
  return list(false);
}

/** The part of `value` a selection keeps. Arrays apply the selection to each element. */
export function selectFields(value: unknown, selection: FieldSelection | true): unknown {
  if (selection === true || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => selectFields(v, selection));
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const all = selection.get('*');
  for (const [key, v] of Object.entries(source)) {
    const sub = selection.get(key) ?? all;
    if (sub !== undefined) out[key] = selectFields(v, sub);
  }
  return out;
}

/** The fields each method answers when the request names none (Drive v3's defaults). */
export const DEFAULT_FIELDS = {
  file: 'kind,id,name,mimeType',
  changeList: 'kind,nextPageToken,newStartPageToken,changes(kind,changeType,time,removed,fileId,driveId,file(kind,id,name,mimeType),drive(kind,id,name))',
  startPageToken: 'kind,startPageToken',
  driveList: 'kind,nextPageToken,drives(kind,id,name)',
  drive: 'kind,id,name',
} as const;

/** Answers 200 with the selected part of `payload`, or Drive's 400 for a malformed `fields`. */
export function answerWithFields(query: URLSearchParams, defaults: string, payload: unknown, send: (status: number, payload: unknown) => void): void {
  let selection: FieldSelection;
  try {
    selection = parseFields(query.get('fields') ?? defaults);
  } catch (err) {
    const message = (err as Error).message;
    return send(400, { error: { code: 400, message, errors: [{ domain: 'global', reason: 'invalidParameter', message, location: 'fields', locationType: 'parameter' }] } });
  }
  send(200, selectFields(payload, selection));
}
