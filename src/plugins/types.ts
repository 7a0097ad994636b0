import type { Diagnostic } from '../common/errors.js';
import type { DiskCache } from '../cache/disk-cache.js';
import type { Registry } from '../registry/types.js';
import type { LogEntry } from '../run-model/events.js';
import type { IsolationSettings } from './isolation/level.js';

// The plugin host's public contract: options in, statuses and events out.

export interface PluginHostOptions {
  /** The plugins folder: every subfolder with a plugin.yaml is a plugin. */
  readonly dir: string;
  /** Where tools go; its load mode (`registry.load`) also says when handlers are imported. */
  readonly registry: Registry;
  /** Reload on changes (chokidar). Default false. */
  readonly watch?: boolean;
  /** Quiet time after the last change in a plugin folder before it reloads (default 50 ms). */
  readonly debounceMs?: number;
  readonly onEvent?: (event: PluginEvent) => void;
  /** Where manifests' parses and modules' transforms are cached (default: nowhere). */
  readonly cache?: DiskCache;
  /** The isolation floor of every plugin and the workers' limits (default: each manifest decides). */
  readonly isolation?: IsolationSettings;
  /** Output of isolated plugins that belongs to no call (run_id and step empty; fields name the plugin and stream). */
  readonly log?: (entry: LogEntry) => void;
  /** Where plugins whose tools come from a source read environment variables (default process.env): the registry's `env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export type PluginState =
  /** Its tools are in the registry (possibly an older version, when the files on disk fail to load: see `stale`). */
  | 'active'
  /** It loads, but its requirements are not met (or its name is taken): its tools are not in the registry. */
  | 'inactive'
  /** It has never loaded successfully: nothing to serve. */
  | 'error';

export interface PluginStatus {
  /** The manifest's name; the folder name when the manifest could not be read. */
  readonly name: string;
  /** The version serving (or that would serve); absent when it never loaded. */
  readonly version?: string;
  /** The plugin folder. */
  readonly dir: string;
  readonly status: PluginState;
  /** True when the files on disk failed to load and the last good version is still in use. */
  readonly stale: boolean;
  /** Qualified names (`plugin/tool`) of its tools. */
  readonly tools: readonly string[];
  /** Why it is inactive or stale, or warnings about it. */
  readonly diagnostics: readonly Diagnostic[];
}

export type PluginEventType =
  /** A version became active (first load, reload, or requirements met again). */
  | 'plugin:loaded'
  /** Loading failed; `version` says which older version (if any) keeps serving. */
  | 'plugin:error'
  /** It loads but cannot be active (requirements, cycle, duplicate name). */
  | 'plugin:inactive'
  /** Its folder or manifest is gone; its tools are removed. */
  | 'plugin:removed';

export interface PluginEvent {
  readonly type: PluginEventType;
  readonly plugin: string;
  readonly dir: string;
  readonly version?: string;
  readonly diagnostics?: readonly Diagnostic[];
}

export interface PluginHost {
  /** Resolves when every plugin has been loaded once (and the watcher, if any, is watching). */
  readonly ready: Promise<void>;
  plugins(): PluginStatus[];
  /** Rescan the folder and reload every plugin. */
  reload(): Promise<void>;
  /** Stop watching; the registry keeps the tools it has. */
  close(): Promise<void>;
}
