import { describe, expect, it } from 'vitest';
import { runIdSource } from '../../src/common/run-ids.js';

describe('run ids', () => {
  it('are UUID-shaped, share one random prefix per source and count the runs in their last 48 bits, across the table boundaries', () => {
    const next = runIdSource();
    const ids = Array.from({ length: 9000 }, () => next());
    const prefix = ids[0]!.slice(0, 24);
    for (let i = 0; i < ids.length; i++) {
      expect(ids[i]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(ids[i]!.slice(0, 24)).toBe(prefix);
      expect(parseInt(ids[i]!.slice(24), 16)).toBe(i + 1);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('differ between sources', () => {
    expect(runIdSource()()).not.toBe(runIdSource()());
  });
});
