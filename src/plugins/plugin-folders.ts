import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FILE } from './read-manifest.js';

// The plugin folders: entries of the plugins folder (real folders or symlinks to folders) that
// hold a plugin.yaml, in name order so that loading and name clashes are deterministic.

export async function hasManifest(folder: string): Promise<boolean> {
  try {
    return (await stat(join(folder, MANIFEST_FILE))).isFile();
  } catch {
    return false;
  }
}

/** Entry names (not paths) of the plugin folders in `dir`; [] when `dir` does not exist. */
export async function listPluginFolders(dir: string): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const entry of entries.sort()) {
    if (entry.startsWith('.') || entry === 'node_modules') continue;
    if (await hasManifest(join(dir, entry))) found.push(entry);
  }
  return found;
}
