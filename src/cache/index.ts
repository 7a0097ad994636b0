// Disk caches: one authenticated, per-user directory, opened once by whoever owns an engine.
export { cacheKey, openDiskCache, type DiskCache, type OpenDiskCacheOptions } from './disk-cache.js';
export { openUserCache, userCacheDir, type CacheEnv, type OpenUserCacheOptions } from './user-cache.js';
