import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApprovalsPage } from './approvals-page.js';
import { RunPage } from './run-page.js';
import { RunsPage } from './runs-page.js';
import { StartPage } from './start-page.js';
import { TriggersPage } from './triggers-page.js';
import './style.css';

// The run inspector: five pages behind hash routes, so the server needs no fallback route:
// #/ (runs), #/runs/ID (one run), #/start/CHAIN (the form to start a run), #/approvals (the
// approval requests waiting for a person), #/triggers and #/triggers/CHAIN (when chains run on
// their own, and pausing them).

type Route = { page: 'runs' } | { page: 'run'; id: string } | { page: 'start'; chain?: string } | { page: 'approvals' } | { page: 'triggers'; chain?: string };

function parse(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'runs' && parts[1]) return { page: 'run', id: parts[1] };
  if (parts[0] === 'approvals') return { page: 'approvals' };
  if (parts[0] === 'triggers') return parts[1] ? { page: 'triggers', chain: parts[1] } : { page: 'triggers' };
  if (parts[0] === 'start') return parts[1] ? { page: 'start', chain: parts[1] } : { page: 'start' };
  return { page: 'runs' };
}

function App() {
  const [route, setRoute] = useState<Route>(() => parse(location.hash));
  useEffect(() => {
    const onHash = (): void => setRoute(parse(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    // Move focus to the new page's heading, as a screen reader user expects after navigation.
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [route]);
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">toolchain</a>
        <nav aria-label="Main">
          <a href="#/" aria-current={route.page === 'runs' ? 'page' : undefined}>Runs</a>
          <a href="#/approvals" aria-current={route.page === 'approvals' ? 'page' : undefined}>Approvals</a>
          <a href="#/triggers" aria-current={route.page === 'triggers' ? 'page' : undefined}>Triggers</a>
          <a href="#/start" aria-current={route.page === 'start' ? 'page' : undefined}>Start a run</a>
          <a href="metrics">Metrics</a>
        </nav>
      </header>
      <main>
        {route.page === 'runs' && <RunsPage />}
        {route.page === 'run' && <RunPage key={route.id} id={route.id} />}
        {route.page === 'approvals' && <ApprovalsPage />}
        {route.page === 'triggers' && <TriggersPage key={route.chain ?? ''} chain={route.chain} />}
        {route.page === 'start' && <StartPage key={route.chain ?? ''} chain={route.chain} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
