// A status as a word with a colour and a shape, so it does not rely on colour alone.

const SYMBOL: Record<string, string> = {
  pending: '○',
  running: '◔',
  waiting: '◷',
  succeeded: '✓',
  failed: '✗',
  skipped: '–',
  cancelled: '⊘',
  compensation_failed: '⚠',
  interrupted: '↯',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span class={`badge status-${status}`}>
      <span aria-hidden="true">{SYMBOL[status] ?? '•'}</span> {status}
    </span>
  );
}
