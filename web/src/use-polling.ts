import { useEffect } from 'preact/hooks';

// A list kept fresh by asking the server again: every `everyMs` while the tab is visible (a
// hidden tab asks nothing), at once when it becomes visible again, and anew whenever `deps`
// change. Pages whose data any process on the run store may change (the runs list, the
// approval requests) use it: no event stream of this server sees all of that.

export function usePolling<T>(fetch: () => Promise<T>, onData: (data: T) => void, onError: (message: string) => void, everyMs: number, deps: readonly unknown[]): void {
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    const load = async (): Promise<void> => {
      try {
        const data = await fetch();
        if (!stopped) onData(data);
      } catch (e) {
        if (!stopped) onError((e as Error).message);
      }
      if (!stopped) timer = window.setTimeout(tick, everyMs);
    };
    const tick = (): void => {
      if (document.visibilityState === 'visible') void load();
      else timer = window.setTimeout(tick, everyMs);
    };
    const onVisible = (): void => {
      if (document.visibilityState !== 'visible') return;
      clearTimeout(timer);
      void load();
    };
    void load();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
    // The caller names what the fetch depends on, as for useEffect.
  }, deps);
}
