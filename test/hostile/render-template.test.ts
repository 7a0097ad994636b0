import { describe, expect, it } from 'vitest';
import renderTemplate, { MAX_OUTPUT_CHARS, MAX_TEMPLATE_CHARS } from '../../plugins/text/tools/render_template.js';
import { scanPlaceholders } from '../../plugins/text/lib/scan-placeholders.js';
import { failure } from './helpers.js';

// Render_template's tag pattern backtracked cubically: "{{" + 4,000 spaces took
// 19 s of main-thread time, which no timeout can interrupt. These inputs are far larger, so the
// old pattern would need hours; with the linear scanner each finishes within the test timeout.

describe('render_template against hostile templates', () => {
  it('an unclosed "{{" followed by 500,000 spaces renders literally (the cubic case)', async () => {
    const template = `{{${' '.repeat(500_000)}`;
    expect((await renderTemplate({ template })).text).toBe(template);
  });

  it('"{{" + spaces + "|" without a closing tag renders literally', async () => {
    const template = `{{${' '.repeat(200_000)}|${' '.repeat(200_000)}`;
    expect((await renderTemplate({ template })).text).toBe(template);
  });

  it('200,000 unclosed "{{" in a row render literally', async () => {
    const template = '{{ a '.repeat(200_000);
    expect((await renderTemplate({ template })).text).toBe(template);
  });

  it('a template over the size limit fails with TEMPLATE_TOO_LARGE before any scanning', async () => {
    expect((await failure(renderTemplate({ template: 'x'.repeat(MAX_TEMPLATE_CHARS + 1) }))).code).toBe('TEMPLATE_TOO_LARGE');
  });

  it('a placeholder repeated over a large value fails with OUTPUT_TOO_LARGE instead of building gigabytes', async () => {
    const template = '{{ big }}'.repeat(100_000);
    const f = await failure(renderTemplate({ template, values: { big: 'x'.repeat(1000) } }));
    expect(f.code).toBe('OUTPUT_TOO_LARGE');
    expect(f.message).toContain(String(MAX_OUTPUT_CHARS));
  });

  it('a MISSING_VALUE message names at most ten placeholders', async () => {
    const template = Array.from({ length: 5000 }, (_, i) => `{{ v${i} }}`).join('');
    const f = await failure(renderTemplate({ template }));
    expect(f.code).toBe('MISSING_VALUE');
    expect(f.message).toContain('and 4990 more');
  });

  it('keeps the old reading of braces: "{{ a {{ b }}" fills b, "{{{ a }}" fills a after a literal "{"', async () => {
    expect((await renderTemplate({ template: '{{ a {{ b }}', values: { b: 'B' } })).text).toBe('{{ a B');
    expect((await renderTemplate({ template: '{{{ a }}}', values: { a: 'A' } })).text).toBe('{A}');
    expect((await renderTemplate({ template: '{{ a } }}', values: { a: 'A' } })).text).toBe('{{ a } }}');
    expect(scanPlaceholders('x{{ a | upper }}y')).toEqual([
      { kind: 'text', text: 'x' },
      { kind: 'placeholder', body: ' a | upper ', at: 1 },
      { kind: 'text', text: 'y' },
    ]);
  });

  it('a filter that is not a word is BAD_TEMPLATE, not a silent literal', async () => {
    expect((await failure(renderTemplate({ template: '{{ a | 1x }}', values: { a: 1 } }))).code).toBe('BAD_TEMPLATE');
    expect((await failure(renderTemplate({ template: '{{ a | constructor }}', values: { a: 1 } }))).code).toBe('BAD_TEMPLATE');
  });
});
