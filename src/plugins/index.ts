// Plugins: manifests, handler modules, requirements and hot reload, feeding the registry.
export { createPluginHost } from './plugin-host.js';
export { loadPlugin, type LoadedPlugin, type LoadPluginOptions, type PluginLoad } from './load-plugin.js';
export { buildPlugin, type PluginReady, type ReadyPlugin } from './build-plugin.js';
export { inspectPlugins, type PluginInspection, type PluginReport } from './inspect-plugins.js';
export { readManifest, MANIFEST_FILE, type PluginManifest, type ReadManifest } from './read-manifest.js';
export { resolveRequirements, type Candidate, type Resolution } from './requirements.js';
export { parseRequirement, type Requirement } from './parse-requirement.js';
export { resolveHandler, HANDLER_EXTENSIONS, type HandlerLocation } from './resolve-handler.js';
export { createModuleLoader, type ModuleLoader, type ModuleLoaderOptions } from './evaluate-module.js';
export { listPluginFolders } from './plugin-folders.js';
export { watchFiles, defaultWatchFilter, firstSegment, type FileChanges, type FileWatcher, type WatchFilesOptions } from './watch-files.js';
export type { PluginEvent, PluginEventType, PluginHost, PluginHostOptions, PluginState, PluginStatus } from './types.js';
export { isolationSettings, isIsolationLevel, ISOLATION_LEVELS, type IsolationLevel, type IsolationOptions, type IsolationSettings } from './isolation/level.js';
