import { createRequire } from 'node:module';
import { _, Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as formatsModule from 'ajv-formats';
import * as standaloneModule from 'ajv/dist/standalone/index.js';
import { cacheKey, type DiskCache } from '../cache/disk-cache.js';
import { createMetaCheck } from './meta-check.js';
import { LINEAR_REGEXP_MODULE, linearRegExp } from '../common/linear-regexp.js';

// JSON Schema → validator. A registry owns one SchemaCompiler (so does nothing else: no Ajv state
// is shared between engines). It keeps two kinds of Ajv instance, because arguments and results
// need opposite treatment: arguments get defaults filled and types coerced (on a copy, see
// planCopy in copy-args.ts); results are only checked, never changed. Compiling is the expensive
// part, so each tool version compiles once (build-tool.ts).

export type SchemaUse = 'arguments' | 'results';

/**
 * The second argument every validator is called with on a run's path. Ajv's code declares it
 * `{instancePath = "", rootData = data, …} = {}`: called with one argument, each call allocates
 * that `{}` (56 bytes per validated call). An empty object here means the same defaults. Frozen,
 * so nothing can give every later call a different context; `dynamicAnchors` is left out (a
 * schema that uses `$dynamicRef` writes to it, and gets its own).
 */
export const TOP_LEVEL = Object.freeze({}) as NonNullable<Parameters<ValidateFunction>[1]>;

export interface CompiledSchema {
  readonly validate: ValidateFunction;
  /** Strict-mode warnings, e.g. `strict mode: unknown keyword: "requried"`. */
  readonly warnings: readonly string[];
}

export interface SchemaCompiler {
  /**
   * Check a schema against the JSON Schema meta-schema without compiling it (microseconds, where
   * a compile takes milliseconds): what a lazily compiled tool still checks when it is
   * registered. Throws like compile does for a schema that is not valid.
   */
  check(schema: object): void;
  /**
   * Compile a schema (or load its validator from the disk cache). Throws Ajv's error for a bad
   * schema. The schema is forgotten at once, see below; the returned function stays valid.
   */
  compile(schema: object, use: SchemaUse): CompiledSchema;
}

export interface SchemaCompilerOptions {
  /** Where validators' generated code is kept between processes (default: nowhere). */
  readonly cache?: DiskCache;
  /** Told about every validator made: compiled by Ajv, or loaded from the disk cache (tests count them). */
  readonly onCompile?: (event: { readonly schema: object; readonly use: SchemaUse; readonly from: 'ajv' | 'cache' }) => void;
}

// ajv-formats is CommonJS with `exports.default`; under NodeNext the namespace's default is the
// module object, so take the function from whichever shape arrives.
const addFormats = ((formatsModule as unknown as { default: { default?: unknown } }).default.default ??
  (formatsModule as unknown as { default: unknown }).default) as (ajv: Ajv) => Ajv;
const standaloneCode = ((standaloneModule as unknown as { default: { default?: unknown } }).default.default ??
  (standaloneModule as unknown as { default: unknown }).default) as (ajv: Ajv, validate: ValidateFunction) => string;
const requireForValidators = createRequire(import.meta.url);
const linearRegExpModule = Object.freeze({ linearRegExp });
/** What a cached validator's `require` finds: the pattern engine by name (the bundle has no path to it), formats from ajv-formats. */
const requireInValidators = (id: string): unknown => (id === LINEAR_REGEXP_MODULE ? linearRegExpModule : requireForValidators(id));

function createAjv(mutating: boolean, logger: { log(): void; warn(...p: unknown[]): void; error(...p: unknown[]): void }): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    useDefaults: mutating,
    coerceTypes: mutating,
    // 'log' rather than true: a manifest with an unknown keyword still loads, and the complaint
    // becomes a warning diagnostic instead of a refusal.
    strict: 'log',
    logger,
    validateFormats: true,
    // Errors carry their parent schema and data, so problems can name allowed properties and the
    // value received. Costs nothing on the passing path.
    verbose: true,
    // check() does this with a precompiled meta-schema validator; letting each instance compile
    // the meta-schema itself costs ~30 ms per instance at start-up.
    validateSchema: false,
    // Keep each validator's source, so it can be cached on disk (see compile).
    // `pattern` and `patternProperties` run in linear time (common/linear-regexp.ts): a schema's
    // pattern is someone else's, and so is the text it is matched against.
    code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats`, regExp: linearRegExp },
  });
  addFormats(ajv);
  return ajv;
}

// An Ajv instance keeps something of every schema it compiles (its code scope references each
// schema object), even after removeSchema, so one instance kept for the life of the engine grows
// with every plugin reload. Each kind of instance is therefore replaced after a number of
// compiles: an old one is garbage once the tools compiled with it are. Creating one costs ≈ 5 ms,
// so every COMPILES_PER_INSTANCE compiles (≈ 0.5 ms each) pay ≈ 0.05 ms more each.
const COMPILES_PER_INSTANCE = 100;

// Compiling a validator costs a few milliseconds, which a cold `toolchain run` pays for every
// tool it calls. So each validator's generated code is kept in the per-user disk cache, keyed by
// the schema and the options, and a later process loads it instead of compiling: well under a
// millisecond. The cache authenticates every entry (cache/disk-cache.ts), so the code evaluated is
// Ajv's own output for the schema, written by this user's engine, never text from a project folder.
const CACHE_FORMAT = 'ajv-8.20/allErrors/verbose/formats-full/re2js/2';

interface CachedValidator {
  readonly code: string;
  readonly warnings: readonly string[];
}

function loadValidator(code: string): ValidateFunction {
  const module = { exports: {} as unknown };
  new Function('module', 'exports', 'require', code)(module, module.exports, requireInValidators);
  return module.exports as ValidateFunction;
}

export function createSchemaCompiler(options: SchemaCompilerOptions = {}): SchemaCompiler {
  const { cache, onCompile } = options;
  /** Strict-mode complaints of the compile in progress. */
  let warningSink: string[] | undefined;
  const logger = {
    log: () => undefined,
    warn: (...parts: unknown[]) => warningSink?.push(parts.map(String).join(' ')),
    error: (...parts: unknown[]) => warningSink?.push(parts.map(String).join(' ')),
  };
  const pools: Record<SchemaUse, { ajv: Ajv; compiles: number } | undefined> = { arguments: undefined, results: undefined };
  // With the precompiled meta-schema validator: compiling the meta-schema in an Ajv instance costs
  // a noticeable part of a cold start.
  const checkSchema = createMetaCheck();

  function instanceFor(use: SchemaUse): Ajv {
    let pool = pools[use];
    if (!pool || pool.compiles >= COMPILES_PER_INSTANCE) {
      pool = { ajv: createAjv(use === 'arguments', logger), compiles: 0 };
      pools[use] = pool;
    }
    pool.compiles += 1;
    return pool.ajv;
  }

  function fromCache(key: string): CompiledSchema | undefined {
    const cached = cache?.read('ajv', key);
    if (cached === undefined) return undefined;
    try {
      const entry = JSON.parse(cached) as CachedValidator;
      return { validate: loadValidator(entry.code), warnings: entry.warnings };
    } catch {
      return undefined; // an entry from an older format, say: compiled again
    }
  }

  return {
    check: checkSchema,
    compile(schema, use) {
      checkSchema(schema);
      const key = cache ? cacheKey(CACHE_FORMAT, use, JSON.stringify(schema)) : '';
      const hit = cache ? fromCache(key) : undefined;
      if (hit) {
        onCompile?.({ schema, use, from: 'cache' });
        return hit;
      }
      const ajv = instanceFor(use);
      const warnings: string[] = [];
      warningSink = warnings;
      try {
        // Ajv caches every compiled schema by object identity and by `$id`, which would keep each
        // reloaded version alive and refuse a second version with the same `$id`: removed below.
        const validate = ajv.compile(schema);
        onCompile?.({ schema, use, from: 'ajv' });
        if (cache) {
          try {
            cache.write('ajv', key, JSON.stringify({ code: standaloneCode(ajv, validate), warnings } satisfies CachedValidator));
          } catch {
            // Not every schema can be written out (a custom keyword's code, say): it is just not cached.
          }
        }
        return { validate, warnings };
      } finally {
        warningSink = undefined;
        ajv.removeSchema(schema);
      }
    },
  };
}

export type { ErrorObject, ValidateFunction };
