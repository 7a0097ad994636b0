// Safe YAML loading for chain files and plugin manifests: bounded size, depth and aliases, one
// document, no prototype keys, and a source map from JSON pointers back to line and column.
export { capDiagnostics } from './cap-diagnostics.js';
export { DEFAULT_LOAD_LIMITS } from './limits.js';
export { parseYaml } from './parse-yaml.js';
export { loadYamlFile, loadYamlFileSync, readTextFile } from './load-file.js';
export type { LoadedYaml, LoadLimits, LoadResult, SourceMap, SourcePosition } from './types.js';
