import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/run-cli.js';

// The documentation is a web of relative links, and the code's comments name the files they lean
// on. Both go stale when a file moves or a heading is reworded: this finds every relative link
// and #anchor in every Markdown file of the repository that does not resolve (anchors as GitHub
// makes them from headings), and every file path named in a comment in src/ that does not exist.

const SKIP_DIRS = new Set(['node_modules', 'dist', 'dist-bench', '.git', '.toolchain']);

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIRS.has(name) || name.startsWith('.tmp')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(relative(REPO, path).split(sep).join('/'));
  }
  return out;
}

const FILES = walk(REPO);
const FILE_SET = new Set(FILES);
const DIRS = new Set(FILES.flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
const MARKDOWN = FILES.filter((f) => f.endsWith('.md'));

/** GitHub's anchor for a heading's text: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A heading's text as GitHub renders it before making the anchor: code, links and emphasis reduced to their text. */
function renderedText(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(`+)([\s\S]*?)\1/g, '$2')
    .replace(/\*\*|__|\*/g, '')
    .trim();
}

interface Page {
  readonly anchors: Set<string>;
  /** Each link target with its line. */
  readonly links: { readonly target: string; readonly line: number }[];
}

/** The anchors a Markdown file defines and the links it makes, outside code blocks and code spans. */
function readPage(text: string): Page {
  const anchors = new Set<string>();
  const links: { target: string; line: number }[] = [];
  const counts = new Map<string, number>();
  let fence: string | undefined;
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (fence !== undefined) {
      if (opening && opening[1]!.startsWith(fence)) fence = undefined;
      return;
    }
    if (opening) {
      fence = opening[1]!;
      return;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(raw);
    if (heading) {
      const base = githubSlug(renderedText(heading[2]!));
      const n = counts.get(base) ?? 0;
      counts.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of raw.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const prose = raw.replace(/(`+)[\s\S]*?\1/g, '');
    for (const m of prose.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ target: m[1]!, line });
    for (const m of prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)) links.push({ target: m[1]!, line });
    for (const m of prose.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g)) links.push({ target: m[1]!, line });
  });
  return { anchors, links };
}

const pages = new Map(MARKDOWN.map((file) => [file, readPage(readFileSync(join(REPO, file), 'utf8'))]));

/** Why a link from `file` does not resolve, or undefined when it does. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:: not ours to check
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const path = decodeURIComponent(pathPart.split('?')[0]!);
  const resolved = path === '' ? file : join(dirname(file), path).split(sep).join('/').replace(/\/$/, '');
  if (path.startsWith('/')) return 'an absolute path (write it relative to the file)';
  if (resolved.startsWith('..')) return 'it points outside the repository';
  if (!FILE_SET.has(resolved) && !DIRS.has(resolved) && resolved !== '') return `no file ${resolved}`;
  if (anchor === undefined || anchor === '') return undefined;
  const page = pages.get(resolved);
  if (page === undefined) return resolved.endsWith('.md') ? `no page ${resolved}` : undefined;
  return page.anchors.has(anchor) ? undefined : `no heading in ${resolved} has the anchor #${anchor}`;
}

describe('links in the Markdown files', () => {
  it('finds the pages and their links', () => {
    expect(MARKDOWN).toContain('README.md');
    expect(MARKDOWN.filter((f) => f.startsWith('docs/')).length).toBeGreaterThan(15);
    expect([...pages.values()].reduce((n, p) => n + p.links.length, 0)).toBeGreaterThan(100);
  });

  it('makes anchors as GitHub does', () => {
    expect(githubSlug(renderedText('`when`'))).toBe('when');
    expect(githubSlug(renderedText('Order, `parallel` and the DAG'))).toBe('order-parallel-and-the-dag');
    expect(githubSlug(renderedText('HTTP: the allow-list'))).toBe('http-the-allow-list');
    expect(githubSlug(renderedText('`tool.circuit_breaker`'))).toBe('toolcircuit_breaker');
    expect(githubSlug(renderedText('Values: JSONPaths, templates, literals'))).toBe('values-jsonpaths-templates-literals');
  });

  it("every page under docs/ is on the README's map, or linked from a page that is", () => {
    const reached = new Set<string>();
    const visit = (file: string): void => {
      if (reached.has(file)) return;
      reached.add(file);
      for (const { target } of pages.get(file)?.links ?? []) {
        const path = target.split('#')[0]!;
        if (path === '' || /^[a-z][a-z0-9+.-]*:/i.test(path)) continue;
        const resolved = join(dirname(file), decodeURIComponent(path)).split(sep).join('/');
        if (pages.has(resolved)) visit(resolved);
      }
    };
    visit('README.md');
    expect(MARKDOWN.filter((f) => f.startsWith('docs/') && !reached.has(f))).toEqual([]);
  });

  it('cite no document outside the repository (a specification, its section signs, issue numbers)', () => {
    const CITATION = /\bSPEC\b|§|\bSTYLE \d|\b[Ii]ssues? \d/;
    const citing = MARKDOWN.flatMap((file) =>
      readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (CITATION.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  it('and neither does the code, its tests, benchmarks, plugins or chains', () => {
    const CITATION = /\bSPEC\b|§|\bSTYLE \d|\b[Ii]ssues? \d/;
    const files = execFileSync('git', ['ls-files', 'src', 'bin', 'scripts', 'web/src', 'test', 'bench', 'plugins', 'chains'], { cwd: REPO, encoding: 'utf8' })
      .split('\n')
      // The two tests that hold the pattern itself, and fixtures recorded from elsewhere.
      .filter((f) => /\.(ts|js|mjs|cjs|tsx|yaml|sh)$/.test(f) && !['test/docs/links.test.ts', 'test/cli/help.test.ts'].includes(f) && !f.startsWith('test/fixtures/'));
    const citing = files.flatMap((file) =>
      readFileSync(join(REPO, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (CITATION.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(citing).toEqual([]);
  });

  for (const [file, page] of pages) {
    if (page.links.length === 0) continue;
    it(`${file}: every relative link and anchor resolves`, () => {
      const broken = page.links.flatMap(({ target, line }) => {
        const why = brokenLink(file, target);
        return why === undefined ? [] : [`${file}:${line} (${target}): ${why}`];
      });
      expect(broken).toEqual([]);
    });
  }
});

// ------------------------------------------------------------------------------------------------

/**
 * Names in comments that look like file paths but name no file of this repository on purpose:
 * each with why.
 */
const NOT_OUR_FILES: Readonly<Record<string, string>> = {
  'tokenizer_config.json': "a model's file on its hub, where its chat template comes from",
  'dir/plugin.yaml': 'a placeholder for any plugin folder',
  './lib.js': 'an example of a relative import inside a plugin',
  './lib.ts': 'an example of a relative import inside a plugin',
  'chains/NAME.test.yaml': 'a placeholder for any chain test file',
  'ipaddr.js': 'the npm package of that name, not a file',
};

/** `executor/call-sites.ts`, `read-reply.ts`, `schemas/chain.schema.json`, `../x/y.js`: a path to a source, data or doc file. */
const PATH_IN_TEXT = /(?<![\w./@-])((?:\.{1,2}\/|[\w@-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|js|mjs|cjs|json|ya?ml|md))(?![\w/])/g;

const commentCache = new Map<string, { text: string; line: number }[]>();

function commentsOf(file: string): { text: string; line: number }[] {
  const cached = commentCache.get(file);
  if (cached !== undefined) return cached;
  const source = readFileSync(join(REPO, file), 'utf8');
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, source);
  const out: { text: string; line: number }[] = [];
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      out.push({ text: scanner.getTokenText(), line: source.slice(0, scanner.getTokenPos()).split('\n').length });
    }
  }
  commentCache.set(file, out);
  return out;
}

/** A mention resolves from the repository's root, from src/, from the file's folder, or as the tail of one file's path (a bare `run-context.ts`). */
function mentionExists(file: string, mention: string): boolean {
  const path = mention.replace(/^\.\//, '');
  const variants = path.endsWith('.js') ? [path, `${path.slice(0, -3)}.ts`] : [path];
  return variants.some(
    (p) =>
      FILE_SET.has(p) ||
      FILE_SET.has(`src/${p}`) ||
      FILE_SET.has(join(dirname(file), p).split(sep).join('/')) ||
      FILES.some((f) => f.endsWith(`/${p}`)),
  );
}

describe('file paths named in the comments of src/', () => {
  const sources = FILES.filter((f) => f.startsWith('src/') && f.endsWith('.ts'));

  it('finds the mentions', () => {
    const mentions = sources.flatMap((f) => commentsOf(f).flatMap((c) => [...c.text.matchAll(PATH_IN_TEXT)]));
    expect(mentions.length).toBeGreaterThan(50);
  });

  it('name files that exist', () => {
    const stale = sources.flatMap((file) =>
      commentsOf(file).flatMap(({ text, line }) =>
        [...text.matchAll(PATH_IN_TEXT)]
          .map((m) => m[1]!)
          .filter((mention) => !Object.hasOwn(NOT_OUR_FILES, mention) && !mentionExists(file, mention))
          .map((mention) => `${file}:${line}: ${mention}`),
      ),
    );
    expect(stale).toEqual([]);
  });

  it('the exceptions are still needed', () => {
    const named = new Set(sources.flatMap((f) => commentsOf(f).flatMap((c) => [...c.text.matchAll(PATH_IN_TEXT)].map((m) => m[1]!))));
    expect(Object.keys(NOT_OUR_FILES).filter((m) => !named.has(m))).toEqual([]);
  });
});
