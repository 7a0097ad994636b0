import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ExprSyntaxError,
  compileCondition,
  compilePath,
  compileValue,
  parseDuration,
  type RunContext,
} from '../../src/expr/index.js';

const ctx = JSON.parse(readFileSync(new URL('../fixtures/expr/context.json', import.meta.url), 'utf8')) as RunContext;

function get(path: string, context: RunContext = ctx): unknown {
  return compilePath(path).get(context);
}

function syntaxError(path: string): ExprSyntaxError {
  try {
    compilePath(path);
  } catch (error) {
    if (error instanceof ExprSyntaxError) return error;
    throw error;
  }
  throw new Error(`expected ${path} to be rejected`);
}

function when(source: string, context: RunContext = ctx): boolean {
  const { condition, problems } = compileCondition(source);
  expect(problems).toEqual([]);
  if (!condition) throw new Error('no condition');
  return condition.test(context);
}

describe('compilePath: simple paths', () => {
  it('reads members, indexes and quoted names by direct access', () => {
    const p = compilePath('$.locate.address.city');
    expect(p).toMatchObject({ simple: true, multi: false, root: 'locate', source: '$.locate.address.city' });
    expect(p.get(ctx)).toBe('Lyon');
    expect(get('$.question')).toBe('What time is it in Lyon?');
    expect(get('$.locate.address.lines[0]')).toBe('1 Place Bellecour');
    expect(get('$.search.results[2].tags[1]')).toBe('usa');
    expect(get("$['odd keys']['a b']")).toBe(1);
    expect(get(`$["odd keys"]['it\\'s']`)).toBe(2);
    expect(get("$['odd keys']['*']")).toBe(3);
    expect(get('$.locate.aliases[-1]')).toBe('Lyons');
    expect(get('$.locate.aliases[-2]')).toBe('Lugdunum');
    expect(get('$.facts.mayor')).toBeNull();
    expect(compilePath("$['locate'].city").root).toBe('locate');
  });

  it('returns the whole context for $', () => {
    const p = compilePath('$');
    expect(p.root).toBeUndefined();
    expect(p.get(ctx)).toBe(ctx);
  });

  it('gives undefined for missing segments and non-objects', () => {
    expect(get('$.nope')).toBeUndefined();
    expect(get('$.nope.deeper.still')).toBeUndefined();
    expect(get('$.facts.mayor.name')).toBeUndefined();
    expect(get('$.locate.city.length')).toBeUndefined(); // strings are not stepped into
    expect(get('$.locate.aliases[5]')).toBeUndefined();
    expect(get('$.locate.aliases[-3]')).toBeUndefined();
    expect(get('$.locate.address[-1]')).toBeUndefined(); // negative index on a non-array
    expect(get('$.a.b.c.d.e')).toBeUndefined();
  });

  it('never returns inherited functions', () => {
    expect(get('$.toString')).toBeUndefined();
    expect(get('$.locate.hasOwnProperty')).toBeUndefined();
    expect(get('$.locate.aliases.map')).toBeUndefined();
    expect(get('$.locate.valueOf.name')).toBeUndefined();
    expect(get('$.a.b.c.toString')).toBeUndefined();
    // RFC 9535: a name selects an object's member, never an array's property.
    expect(get('$.locate.aliases.length')).toBeUndefined();
    expect(get('$.clock.time.length')).toBeUndefined();
  });

  it("selects by the RFC's rules: names from objects only, indexes from arrays only", () => {
    const data = { list: ['a', 'b'], obj: { '0': 'zero', length: 7 }, s: 'text' };
    expect(get('$.obj.length', data)).toBe(7); // a member that is really there
    expect(get('$.obj[0]', data)).toBeUndefined(); // an index never reads a member named "0"
    expect(get("$.obj['0']", data)).toBe('zero');
    expect(get("$.list['0']", data)).toBeUndefined(); // a name never reads an array element
    expect(get('$.s[0]', data)).toBeUndefined(); // strings are not arrays
    expect(get('$[0]', ['first'] as unknown as RunContext)).toBe('first');
    expect(get('$ .list [ -1 ]', data)).toBe('b'); // blanks between segments and in brackets
    expect(compilePath('$ .list [ -1 ]')).toMatchObject({ simple: true, multi: false, root: 'list' });
  });

  it('reads through a context whose prototype is the run context (for_each)', () => {
    const layered = Object.assign(Object.create(ctx) as Record<string, unknown>, {
      item: { title: 'x', n: 3 },
      index: 4,
    });
    expect(get('$.item.title', layered)).toBe('x');
    expect(get('$.index', layered)).toBe(4);
    expect(get('$.locate.city', layered)).toBe('Lyon');
    expect(get('$.locate.address.lines[1]', layered)).toBe('Lyon');
    expect(get('$.search.results[0].tags[0]', layered)).toBe('city');
    const whole = get('$', layered) as Record<string, unknown>;
    expect(whole.item).toEqual({ title: 'x', n: 3 });
    expect(whole.locate).toBe(ctx.locate);
  });
});

describe('compilePath: general paths', () => {
  it('evaluates wildcards, filters, slices, unions and recursive descent', () => {
    const titles = compilePath('$.search.results[*].title');
    expect(titles).toMatchObject({ simple: false, multi: true, root: 'search' });
    expect(titles.get(ctx)).toEqual(['Lyon', 'Lyon County', 'Lyons, Colorado']);
    expect(get('$.search.results[?(@.score > 0.5)].title')).toEqual(['Lyon', 'Lyons, Colorado']);
    expect(get("$.search.results[?(@.title == 'Lyon County')].score")).toEqual([0.4]);
    expect(get('$.search.results[0:2].title')).toEqual(['Lyon', 'Lyon County']);
    expect(get('$.search.results[::2].title')).toEqual(['Lyon', 'Lyons, Colorado']);
    expect(get('$.search.results[0,2].score')).toEqual([0.9, 0.7]);
    expect(get("$.locate['city','country']")).toEqual(['Lyon', 'FR']);
    expect(get('$.locate.*')).toHaveLength(6);
    expect(get('$..postcode')).toEqual(['69001']);
    expect(get('$.search..tags[0]')).toEqual(['city', 'county', 'town']);
    expect(get('$.search.results[*].tags[-1]')).toEqual(['france', 'county', 'usa']);
    expect(get('$.clock[*]')).toEqual(['14:05', 2]);
    expect(get('$.search.results[?(@.tags[?(@ == "usa")])].title')).toEqual(['Lyons, Colorado']);
    expect(get('$.search.results[?(@.score > 0.5 && !(@.title == "Lyon"))].title')).toEqual(['Lyons, Colorado']);
    expect(get('$.search.results[?@.score > 0.5 && @.title != "Lyon"].title')).toEqual(['Lyons, Colorado']);
    expect(get('$.search.results[0,-1].score')).toEqual([0.9, 0.7]);
    expect(get("$.search.results[?match(@.title, 'Lyons?')].title")).toEqual(['Lyon']);
    expect(get("$.search.results[?search(@.title, 'Colo')].title")).toEqual(['Lyons, Colorado']);
    expect(get('$.search.results[?length(@.tags) == 2].title')).toEqual(['Lyon', 'Lyons, Colorado']);
    expect(get('$.search.results[?count(@.tags[*]) > 5]')).toEqual([]);
    expect(get("$['odd keys'][?(@ == 1 || @ == 'zero')]")).toEqual(['zero', 1]);
  });

  it('gives an empty array when a multi path matches nothing', () => {
    expect(get('$.search.results[?(@.score > 5)]')).toEqual([]);
    expect(get('$.nothing[*]')).toEqual([]);
    expect(get('$..nope')).toEqual([]);
    // A filter that fails on a node (missing member) just doesn't match it.
    expect(get('$.search.results[?(@.meta.x > 1)]')).toEqual([]);
  });

  it('reports root only for paths with a single first member', () => {
    expect(compilePath('$.search.results[*]').root).toBe('search');
    expect(compilePath("$['search'][*]").root).toBe('search');
    expect(compilePath('$.*').root).toBeUndefined();
    expect(compilePath('$..x').root).toBeUndefined();
    expect(compilePath("$['a','b']").root).toBeUndefined();
    expect(compilePath('$[?(@.x)]').root).toBeUndefined();
  });

  it('flattens a layered for_each context for the general evaluator', () => {
    const layered = Object.assign(Object.create(ctx) as Record<string, unknown>, {
      item: { tags: ['a', 'b'] },
      index: 1,
    });
    expect(get('$.item.tags[*]', layered)).toEqual(['a', 'b']);
    expect(get('$.search.results[?(@.score < 0.5)].title', layered)).toEqual(['Lyon County']);
    expect(get('$..tags[0]', layered)).toEqual(['a', 'city', 'county', 'town']);
  });

  it('cannot run code through filters', () => {
    const hostile = [
      '$.search.results[?(@.constructor.constructor("return process")())]',
      '$.search.results[?(@.title.constructor)]',
      "$.search.results[?(@['constructor'])]",
      '$.search.results[?(@.tags.push(1))]',
      '$.search.results[?(@.title.repeat(100000000))]',
      '$.search.results[?(@.score = 5)]',
      '$.search.results[?(x => 1)]',
      '$.search.results[?(@.score++)]',
      '$.search.results[?(@.__proto__)]',
      '$.search.results[?(`${1}`)]',
      '$.search.results[?(@.title.match(/x/))]',
      '$.search.results[(@.length-1)]',
    ];
    for (const path of hostile) {
      expect(() => compilePath(path), path).toThrow(ExprSyntaxError);
    }
    // Nothing was mutated along the way.
    const results = (ctx.search as { results: { tags: string[] }[] }).results;
    expect(results[0]?.tags).toEqual(['city', 'france']);
  });

  it("doesn't let a run mutate data through a filter either", () => {
    const data = { list: [{ n: 1 }, { n: 2 }] };
    expect(compilePath('$.list[?(@.n >= 1 && @.n != 3)].n').get(data)).toEqual([1, 2]);
    expect(data).toEqual({ list: [{ n: 1 }, { n: 2 }] });
  });
});

describe('compilePath: RFC 9535 details', () => {
  it('compares strings by code point and counts length in characters', () => {
    const data = { words: ['\uffff', '😀', 'b'] };
    // JavaScript's < on UTF-16 units puts 😀 (D83D DE00) before U+FFFF; code points do not.
    expect(get("$.words[?@ > '\uffff']", data)).toEqual(['😀']);
    expect(get('$.words[?length(@) == 1]', data)).toEqual(['\uffff', '😀', 'b']);
  });

  it('walks a document of any depth with .. and without recursion', () => {
    let deep: Record<string, unknown> = { x: 'bottom' };
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    expect(get('$..x', { deep })).toEqual(['bottom']);
  });

  it('reads I-Regexp and nothing beyond it', () => {
    const data = { s: ['a.c', 'abc', 'A1', 'ж', '$5', '^x', 'a\nb'] };
    const matching = (re: string): unknown => get(`$.s[?match(@, ${JSON.stringify(re)})]`, data);
    expect(matching('a[.]c')).toEqual(['a.c']);
    expect(matching('a.c')).toEqual(['a.c', 'abc']);
    expect(matching('\\p{Lu}\\p{Nd}')).toEqual(['A1']);
    expect(matching('\\P{L}.*')).toEqual(['$5', '^x']);
    expect(matching('[$][0-9]')).toEqual(['$5']);
    expect(matching('\\^x')).toEqual(['^x']);
    expect(matching('a.b')).toEqual([]); // '.' is not a line feed
    expect(matching('(a|ab)(c|bcd)')).toEqual(['abc']);
    expect(matching('a{1,2}.c')).toEqual(['a.c', 'abc']);
    // Outside I-Regexp: no match at all, rather than JavaScript's meaning.
    for (const re of ['\\d', 'a(?=b)', '(a)\\1', 'a+?', '[z-a]', 'a{2,1}', '\\p{IsBasicLatin}', '(', 'a{1001}']) {
      expect(get(`$.s[?search(@, ${JSON.stringify(re)})]`, data), re).toEqual([]);
    }
  });
});

describe('compilePath: syntax errors', () => {
  const cases: [string, number][] = [
    ['a.b', 0],
    ['', 0],
    ['$.', 2],
    ['$.a.', 4],
    ['$a', 1],
    ['$.a[', 4],
    ['$.a[0', 5],
    ["$['a", 2],
    ["$['a'", 5],
    ['$.a[x]', 4],
    ['$.a b', 3],
    ['$...a', 3],
    ['$.a[?(@.x > 1]', 13],
    ['$.a[?(@.x > 1', 5],
    ['$.a[?(@.x >)]', 11],
    ['$.a[?()]', 6],
    ['$.a[(@.length-1)]', 4],
    ['$.a^', 3],
    ['$.a~', 3],
  ];
  it.each(cases)('rejects %s at offset %i', (path, index) => {
    const error = syntaxError(path);
    expect(error.index).toBe(index);
    expect(error.message).not.toBe('');
  });

  it('rejects forbidden member names anywhere in a path', () => {
    for (const [path, index] of [
      ['$.__proto__', 2],
      ['$.a.constructor', 4],
      ["$['prototype']", 2],
      ['$.a.constructor.name', 4],
      ["$.a['x','__proto__']", 8],
      ['$..constructor', 3],
    ] as const) {
      const error = syntaxError(path);
      expect(error.index, path).toBe(index);
      expect(error.message).toMatch(/not allowed/);
    }
  });

  it('reads any quoted name as a name, in simple and general paths alike', () => {
    expect(get("$['odd keys']['*']")).toBe(3);
    expect(get("$['odd keys'][?@ == 3]")).toEqual([3]);
    expect(get("$['odd keys']['*','a b']")).toEqual([3, 1]);
  });
});

describe('compileValue', () => {
  it('compiles a path, a $$ escape and literals', () => {
    expect(compileValue('$.locate.city').value.get(ctx)).toBe('Lyon');
    const escaped = compileValue('$$5.00');
    expect(escaped.problems).toEqual([]);
    expect(escaped.value.constant).toBe(true);
    expect(escaped.value.get(ctx)).toBe('$5.00');
    expect(compileValue('$$.not.a.path').value.get(ctx)).toBe('$.not.a.path');
    expect(compileValue(42).value.get(ctx)).toBe(42);
    expect(compileValue(null).value.get(ctx)).toBeNull();
    expect(compileValue('plain text').value.get(ctx)).toBe('plain text');
  });

  it('interpolates templates and yields the value itself for a lone placeholder', () => {
    const t = compileValue('{{ $.locate.city }}: {{ $.clock.time }}, population {{ $.facts.population }}');
    expect(t.problems).toEqual([]);
    expect(t.value.get(ctx)).toBe('Lyon: 14:05, population 522250');
    expect(compileValue('{{$.locate.aliases}}').value.get(ctx)).toEqual(['Lugdunum', 'Lyons']);
    expect(compileValue('{{   $.facts.population   }}').value.get(ctx)).toBe(522250);
    expect(compileValue('{{ $.search.results[*].score }}').value.get(ctx)).toEqual([0.9, 0.4, 0.7]);
    // Objects and arrays as JSON; null and missing as nothing.
    expect(compileValue('aliases={{ $.locate.aliases }}').value.get(ctx)).toBe('aliases=["Lugdunum","Lyons"]');
    expect(compileValue('clock={{ $.clock }}').value.get(ctx)).toBe('clock={"time":"14:05","offset":2}');
    expect(compileValue('[{{ $.facts.mayor }}|{{ $.missing }}]').value.get(ctx)).toBe('[|]');
    expect(compileValue('{{ $.hour12 }} {{ $.clock.offset }}').value.get(ctx)).toBe('false 2');
    expect(compileValue(" {{ $['odd keys']['a b'] }}").value.get(ctx)).toBe(' 1');
    expect(compileValue("{{ $['odd keys']['}}'] }}x").value.get(ctx)).toBe('x');
    expect(compileValue('{{ $.missing }}').value.get(ctx)).toBeUndefined();
  });

  it('maps nested objects and arrays, leaving out keys that resolve to undefined', () => {
    const { value, problems } = compileValue({
      city: '$.locate.city',
      missing: '$.nope',
      nested: { tz: '$.locate.timezone', list: [1, '$.clock.offset', '$.nope', { deep: '$.locate.country' }] },
      fixed: 'literal',
    });
    expect(problems).toEqual([]);
    expect(value.constant).toBe(false);
    const out = value.get(ctx) as Record<string, unknown>;
    expect(out).toEqual({
      city: 'Lyon',
      nested: { tz: 'Europe/Paris', list: [1, 2, undefined, { deep: 'FR' }] },
      fixed: 'literal',
    });
    expect(Object.hasOwn(out, 'missing')).toBe(false);
    expect(value.get(ctx)).not.toBe(out); // a fresh result each run
  });

  it('lists refs with relative pointers and sources per top-level key', () => {
    const { value } = compileValue({
      'a/b': '$.locate.city',
      'c~d': ['x', '{{ $.clock.time }} and {{ $..postcode }}'],
      e: { f: '$$literal', g: "$['facts'].population" },
      h: 'Hello {{ $.question }}',
    });
    expect(value.refs).toEqual([
      { root: 'locate', source: '$.locate.city', pointer: '/a~1b' },
      { root: 'clock', source: '$.clock.time', pointer: '/c~0d/1' },
      { root: undefined, source: '$..postcode', pointer: '/c~0d/1' },
      { root: 'facts', source: "$['facts'].population", pointer: '/e/g' },
      { root: 'question', source: '$.question', pointer: '/h' },
    ]);
    expect(value.sources).toEqual({ 'a/b': '$.locate.city', h: 'Hello {{ $.question }}' });
    expect(compileValue('$.a.b').value.refs).toEqual([{ root: 'a', source: '$.a.b', pointer: '' }]);
  });

  it('folds constant subtrees into one frozen value without freezing the input', () => {
    const input = { retries: 3, tags: ['a', 'b'], nested: { deep: [{ x: 1 }] }, money: '$$10' };
    const { value } = compileValue(input);
    expect(value.constant).toBe(true);
    expect(value.refs).toEqual([]);
    const first = value.get(ctx) as { tags: string[]; nested: { deep: { x: number }[] }; money: string };
    expect(first).toEqual({ retries: 3, tags: ['a', 'b'], nested: { deep: [{ x: 1 }] }, money: '$10' });
    expect(value.get(ctx)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.nested.deep[0])).toBe(true);
    expect(() => first.tags.push('c')).toThrow(TypeError);
    expect(Object.isFrozen(input)).toBe(false);
    expect(Object.isFrozen(input.nested.deep)).toBe(false);

    // A constant part of a dynamic object is shared and frozen too.
    const mixed = compileValue({ city: '$.locate.city', opts: { units: 'metric' } }).value;
    const a = mixed.get(ctx) as { opts: object };
    const b = mixed.get(ctx) as { opts: object };
    expect(a.opts).toBe(b.opts);
    expect(Object.isFrozen(a.opts)).toBe(true);
  });

  it('keeps a __proto__ key as a plain member', () => {
    const parsed = JSON.parse('{"__proto__": "$.locate.city", "x": 1}') as unknown;
    const out = compileValue(parsed).value.get(ctx) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('Lyon');
  });

  it('collects every bad path and template with its pointer', () => {
    const { problems } = compileValue({
      a: '$.ok',
      b: '$.bad[',
      c: ['fine', '{{ $.x '],
      d: { e: 'x {{ nope }} y {{ $.y[?(@.z >)] }}' },
      f: '$.constructor',
    });
    expect(problems.map((p) => [p.code, p.pointer])).toEqual([
      ['BAD_JSONPATH', '/b'],
      ['BAD_TEMPLATE', '/c/1'],
      ['BAD_TEMPLATE', '/d/e'],
      ['BAD_TEMPLATE', '/d/e'],
      ['BAD_JSONPATH', '/f'],
    ]);
    expect(problems[0]?.message).toMatch(/at character 7:/);
    expect(problems[1]?.message).toMatch(/unclosed '\{\{' at character 1/);
    expect(problems[2]?.message).toMatch(/at character 6:/);
  });

  it('resolves an object of simple paths through a for_each context', () => {
    const layered = Object.assign(Object.create(ctx) as Record<string, unknown>, { item: 'Rhône', index: 0 });
    const { value } = compileValue({ river: '$.item', at: '$.index', city: '$.locate.city', all: '{{ $.item }}!' });
    expect(value.get(layered)).toEqual({ river: 'Rhône', at: 0, city: 'Lyon', all: 'Rhône!' });
  });
});

describe('compileCondition', () => {
  it('compares paths with literals', () => {
    expect(when('$.locate.confidence >= 0.5')).toBe(true);
    expect(when('$.locate.confidence < 0.5')).toBe(false);
    expect(when("$.locate.city == 'Lyon'")).toBe(true);
    expect(when('$.locate.city != "Lyon"')).toBe(false);
    expect(when('$.clock.offset == 2')).toBe(true);
    expect(when('$.hour12 == false')).toBe(true);
    expect(when('$.facts.mayor == null')).toBe(true);
    expect(when('$.nope == null')).toBe(true); // missing equals null
    expect(when('$.locate.city > "Lille"')).toBe(true);
    expect(when('-1 < 0 && 1.5e3 > 1000')).toBe(true);
  });

  it('uses deep equality', () => {
    expect(when("$.locate.aliases == $.locate.aliases")).toBe(true);
    expect(when('$.locate.address == $.locate.address')).toBe(true);
    const data = { a: { x: [1, { y: 2 }] }, b: { x: [1, { y: 2 }] }, c: { x: [1, { y: 3 }] } };
    expect(when('$.a == $.b', data)).toBe(true);
    expect(when('$.a == $.c', data)).toBe(false);
    expect(when('$.a != $.c', data)).toBe(true);
  });

  it('compares mixed types as false', () => {
    expect(when('$.clock.time < 5')).toBe(false);
    expect(when('$.clock.time >= 5')).toBe(false);
    expect(when('$.nope < 5')).toBe(false);
    expect(when('!($.nope < 5)')).toBe(true);
    expect(when('null < 1')).toBe(false);
    expect(when('"2" == 2')).toBe(false);
    expect(when('true > false')).toBe(false);
  });

  it('tests bare operands for truthiness', () => {
    expect(when('$.locate.city')).toBe(true);
    expect(when('$.nope')).toBe(false);
    for (const key of ['s', 'n', 'f']) expect(when(`$.empty.${key}`)).toBe(false);
    expect(when('$.empty.list')).toBe(true);
    expect(when('$.empty.obj')).toBe(true);
    expect(when('$.facts.mayor')).toBe(false);
    expect(when('!$.nope')).toBe(true);
    expect(when('!!$.locate')).toBe(true);
  });

  it('gives ! over && over || their precedence, and honours parentheses', () => {
    expect(when('true || false && false')).toBe(true);
    expect(when('(true || false) && false')).toBe(false);
    expect(when('!false && false')).toBe(false);
    expect(when('!(false && false)')).toBe(true);
    expect(when('false || !false')).toBe(true);
    expect(when('!$.nope == true')).toBe(true); // (!$.nope) == true
    expect(when('$.clock.offset == 2 && ($.locate.country == "DE" || $.locate.country == "FR")')).toBe(true);
  });

  it('tests membership in arrays and substrings', () => {
    expect(when("'Lyons' in $.locate.aliases")).toBe(true);
    expect(when("'Paris' in $.locate.aliases")).toBe(false);
    expect(when("'time' in $.question")).toBe(true);
    expect(when("'Time' in $.question")).toBe(false);
    expect(when('2 in $.locate.city')).toBe(false);
    expect(when("'x' in $.nope")).toBe(false);
    expect(when("'x' in $.clock")).toBe(false);
    expect(when('$.locate.city in $.search.results[*].title')).toBe(true);
    expect(when('!("usa" in $.search.results[0].tags)')).toBe(true);
    const data = { pairs: [[1, 2], { a: 1 }], p: [1, 2], o: { a: 1 } };
    expect(when('$.p in $.pairs', data)).toBe(true);
    expect(when('$.o in $.pairs', data)).toBe(true);
  });

  it('reads string escapes', () => {
    const data = { s: 'it\'s "quoted"\n\\ é' };
    expect(when(`$.s == 'it\\'s "quoted"\\n\\\\ \\u00e9'`, data)).toBe(true);
    expect(when(`$.s == "it's \\"quoted\\"\\n\\\\ é"`, data)).toBe(true);
    expect(when(`'"' in $.s && '\\n' in $.s`, data)).toBe(true);
  });

  it('accepts complex paths as operands and lists refs', () => {
    const { condition } = compileCondition('$.search.results[?(@.score > 0.8)] || ($.locate.confidence>=0.5&&!$.nope)');
    expect(condition?.test(ctx)).toBe(true);
    expect(condition?.refs).toEqual([
      { root: 'search', source: '$.search.results[?(@.score > 0.8)]', pointer: '' },
      { root: 'locate', source: '$.locate.confidence', pointer: '' },
      { root: 'nope', source: '$.nope', pointer: '' },
    ]);
    expect(when("$['odd keys']['a b'] == 1")).toBe(true);
  });

  it('works with a for_each context', () => {
    const layered = Object.assign(Object.create(ctx) as Record<string, unknown>, { item: { score: 0.9 }, index: 2 });
    expect(when('$.item.score > 0.5 && $.index == 2 && $.locate.city == "Lyon"', layered)).toBe(true);
  });

  const bad: [string, number, RegExp][] = [
    ['', 0, /expected a JSONPath.*found the end/],
    ['$.a ==', 6, /expected a JSONPath/],
    ['$.a = 1', 4, /'=='/],
    ['$.a & $.b', 4, /'&&'/],
    ['$.a | $.b', 4, /'\|\|'/],
    ['($.a', 4, /expected '\)'/],
    ['$.a)', 3, /expected '&&', '\|\|' or the end/],
    ['$.a $.b', 4, /expected '&&'/],
    ['1 < 2 < 3', 6, /don't chain/],
    ['"abc', 0, /unterminated string/],
    ["'a\\q'", 2, /unknown escape/],
    ['$.a == yes', 7, /unknown word 'yes'/],
    ['$.a == #', 7, /unexpected character '#'/],
    ['$.a[ == 1', 5, /bad JSONPath/],
    ['$.constructor', 2, /not allowed/],
    ['$.a[?(@.x.y())] == 1', 11, /method calls/],
    ['!', 1, /expected a JSONPath/],
    ['() || true', 1, /expected a JSONPath/],
  ];
  // 1-based, as file columns are.
  it.each(bad)('rejects %j at 0-based offset %i (reported 1-based)', (source, column, message) => {
    const { condition, problems } = compileCondition(source);
    expect(condition).toBeUndefined();
    expect(problems).toHaveLength(1);
    expect(problems[0]?.code).toBe('BAD_EXPRESSION');
    expect(problems[0]?.pointer).toBe('');
    expect(problems[0]?.message).toMatch(message);
    expect(problems[0]?.message).toContain(`at character ${column + 1} of the condition`);
  });

  it('reports a condition that is not a string', () => {
    const { condition, problems } = compileCondition(true as unknown as string);
    expect(condition).toBeUndefined();
    expect(problems[0]).toMatchObject({ code: 'BAD_EXPRESSION', pointer: '' });
    expect(problems[0]?.message).toMatch(/must be a string/);
  });

  it('limits nesting depth but not flat chains', () => {
    const deep = `${'('.repeat(100)}true${')'.repeat(100)}`;
    expect(compileCondition(deep).problems[0]?.message).toMatch(/nested too deeply/);
    expect(compileCondition(`${'!'.repeat(100)}true`).problems[0]?.message).toMatch(/nested too deeply/);
    expect(when(`${'('.repeat(60)}true${')'.repeat(60)}`)).toBe(true);
    expect(when(Array.from({ length: 5000 }, () => '$.locate.city').join(' && '))).toBe(true);
  });
});

describe('parseDuration', () => {
  it('reads seconds and unit strings as milliseconds', () => {
    expect(parseDuration(2)).toBe(2000);
    expect(parseDuration(0.25)).toBe(250);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('2s')).toBe(2000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('1h')).toBe(3_600_000);
  });

  it('rejects anything else', () => {
    for (const bad of ['', '5', '2 s', '-1s', '1d', '500us', 's', '1.s', 'abc', '1e3s', -1, Number.NaN, Infinity, null, undefined, {}, [], true, '1000h', 0, '0s', ' 10s ', '597h']) {
      expect(parseDuration(bad), String(bad)).toBeUndefined();
    }
  });
});
