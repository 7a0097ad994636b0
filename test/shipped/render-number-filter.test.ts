import { describe, expect, it } from 'vitest';
import renderTemplate from '../../plugins/text/tools/render_template.js';

// render_template's `number` filter groups safe integers by hand instead of creating an
// Intl.NumberFormat (a few ms in a fresh process): its output must be exactly Intl's.

const intl = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const filtered = async (value: unknown): Promise<string> => (await renderTemplate({ template: '{{ n | number }}', values: { n: value } })).text;

describe('render_template number filter', () => {
  it('writes every kind of number as Intl en-US does', async () => {
    const numbers = [0, -0, 1, -1, 7, 12, 123, 999, 1000, -1000, 6943207, 2592413, 100000, 999999, 1000000, -123456789, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1e21, 1.005, 0.5, -2.345, 1234.5678, NaN, Infinity, -Infinity];
    for (let k = 0; k < 2000; k++) numbers.push(Math.floor((Math.random() - 0.5) * 10 ** (1 + (k % 16))));
    for (const n of numbers) expect(await filtered(n), String(n)).toBe(intl.format(n));
  });

  it('reads numeric strings as before', async () => {
    for (const s of ['1234', ' 1234 ', '1e3', '-0', '0x10', '12.345']) expect(await filtered(s), s).toBe(intl.format(Number(s)));
    expect(await filtered('abc')).toBe('abc');
  });
});
