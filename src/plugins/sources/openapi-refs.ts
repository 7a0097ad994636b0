// The `$ref`s of an OpenAPI document, followed where they are met rather than all at once: a tool
// reads its operation's parameters, body and success response, and only the references on those
// paths are ever looked up. (Dereferencing a whole document first, as @readme/openapi-parser
// does, walks every example and webhook too, and was most of the time GitHub's document took to
// load: see bench/openapi-load.ts on the performance page.) Only references inside the
// document (`#/components/schemas/Pet`, `#/definitions/Pet`) are followed: one to another file or
// a URL is an error, so that reading a document never reads or fetches anything else. A reference
// with keywords beside it (OpenAPI 3.1 allows `description` next to `$ref`) stands for its
// target with those keywords laid over it. The same reference gives the same object every time:
// object identity is how the schema converter recognises a shared or a recursive type.

type Obj = Record<string, unknown>;

export class RefError extends Error {}

export interface Refs {
  /** What `value` stands for: itself, or the target of its `$ref` (followed through chains of them). */
  resolve(value: unknown): unknown;
}

const MAX_HOPS = 64;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function createRefs(doc: Obj): Refs {
  const byPointer = new Map<string, unknown>();
  const merged = new WeakMap<Obj, Obj>();

  function target(ref: string): unknown {
    const known = byPointer.get(ref);
    if (known !== undefined) return known;
    if (!ref.startsWith('#')) throw new RefError(`$ref '${ref}' names another file or a URL; only references inside the document are followed`);
    let here: unknown = doc;
    const pointer = ref.slice(1);
    if (pointer !== '' && !pointer.startsWith('/')) throw new RefError(`$ref '${ref}' is not a JSON pointer into the document (it should look like '#/components/schemas/Name')`);
    for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
      let token: string;
      try {
        token = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        throw new RefError(`$ref '${ref}' is not a valid JSON pointer`);
      }
      const container = here;
      if (Array.isArray(container) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < container.length) here = container[Number(token)];
      else if (isObj(container) && Object.hasOwn(container, token)) here = container[token];
      else throw new RefError(`$ref '${ref}' points at nothing in the document ('${token}' is not there)`);
    }
    byPointer.set(ref, here);
    return here;
  }

  return {
    resolve(value) {
      let here = value;
      const seen: string[] = [];
      while (isObj(here) && typeof here.$ref === 'string') {
        const ref = here.$ref;
        if (seen.includes(ref) || seen.length >= MAX_HOPS) throw new RefError(`$ref '${ref}' refers back to itself through ${seen.length} reference${seen.length === 1 ? '' : 's'}`);
        seen.push(ref);
        const holder = here;
        const found = target(ref);
        if (Object.keys(holder).length === 1 || !isObj(found)) {
          here = found;
          continue;
        }
        let laid = merged.get(holder);
        if (!laid) {
          const { $ref: _ref, ...siblings } = holder;
          // The keywords beside the reference first and winning, as @readme/openapi-parser lays them.
          laid = { ...siblings, ...(found.$ref === undefined ? found : (this.resolve(found) as Obj)), ...siblings };
          merged.set(holder, laid);
        }
        return laid;
      }
      return here;
    },
  };
}
