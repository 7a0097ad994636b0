// Forms that other JSONPath dialects (jsonpath-plus, Goessner's original, JavaScript filters)
// taught people, recognised where the parser is about to refuse them, so that the refusal names
// the RFC 9535 form to write instead. Each function looks at the text where the parser stopped
// and returns a message, or undefined when nothing familiar is there.

const PARENT = "'^' (jsonpath-plus's parent) is not JSONPath, which never selects upwards: filter the parent by its child instead, e.g. $.items[?@.id == 1]";
const PROPERTY_NAME = "'~' (jsonpath-plus's member names) is not JSONPath, which selects values, never member names";
const BACKTICK = "'`' (jsonpath-plus's escape) is not JSONPath: quote the name in brackets, e.g. ['@x']";
const TYPE_SELECTOR = "type selectors such as @string() are jsonpath-plus's: JSONPath has none (compare the value with a literal, or test length(@))";
const SCRIPT = 'script expressions [(…)] are not JSONPath: for the last element write [-1]; to choose elements by a condition write a filter [?…]';
const METHOD_CALL = "method calls such as .match(…) or .length() are JavaScript: JSONPath's functions take the value as an argument, e.g. match(@.name, 'a.*') or length(@.tags) > 2";
const ARITHMETIC = "arithmetic ('+', '-', '*', '/', '%') is not part of JSONPath filters: compare values as they are";
const IN = "'in' is not a JSONPath operator: compare with each value, e.g. @ == 'a' || @ == 'b'";

const TYPE_NAMES = new Set(['string', 'number', 'boolean', 'null', 'array', 'object', 'integer', 'scalar', 'other', 'undefined', 'function', 'nonFinite']);
const NAME_TAIL = /[\p{L}\p{N}\p{M}_$-]*/uy;

function wordAt(text: string, at: number): string {
  return /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(at))?.[0] ?? '';
}

function common(c: string): string | undefined {
  if (c === '^') return PARENT;
  if (c === '~') return PROPERTY_NAME;
  if (c === '`') return BACKTICK;
  return undefined;
}

/** Where the next segment or the end of the path was expected. */
export function trailingHabit(text: string, at: number): string | undefined {
  const c = text[at] ?? '';
  if (c === '@') return TYPE_SELECTOR;
  if (c === '(') return "'(' after a path: JSONPath has no method calls such as .length() or .keys(); functions appear inside filters, e.g. $.lists[?length(@) > 2]";
  if ((c === '-' || c === '$') && /[\p{L}\p{N}_]/u.test(text[at - 1] ?? '')) {
    const start = text.lastIndexOf('.', at) + 1;
    NAME_TAIL.lastIndex = at;
    const name = text.slice(start, at) + (NAME_TAIL.exec(text)?.[0] ?? '');
    return `'${c}' cannot be part of a name after '.': quote the name in brackets, e.g. ['${name}']`;
  }
  return common(c);
}

/** Where a member name (or '*') was expected after '.' or '..'. */
export function shorthandHabit(text: string, at: number): string | undefined {
  const c = text[at] ?? '';
  const digits = /^[0-9]+/.exec(text.slice(at))?.[0];
  if (digits !== undefined) return `a name after '.' cannot start with a digit: write ['${digits}'] for a member named ${digits}, or [${digits}] for an index`;
  if (c === '-' && /[0-9]/.test(text[at + 1] ?? '')) return 'a negative index goes in brackets: write [-1]';
  if (c === "'" || c === '"') return "a quoted name goes in brackets, without the '.': write ['a b']";
  if (c === ' ' || c === '\t' || c === '\n' || c === '\r') return "no blank is allowed between '.' and the name";
  if (c === '$' || c === '-') return `'${c}' cannot start a name after '.': quote the name in brackets, e.g. ['${c}x']`;
  if (c === '@') return TYPE_SELECTOR;
  return common(c);
}

/** Where a selector was expected after '[' or ','. */
export function bracketHabit(text: string, at: number): string | undefined {
  const c = text[at] ?? '';
  if (c === '(') return SCRIPT;
  if (c === '@' || c === '$') return 'a query cannot choose a member or an index in brackets (JSONPath has no computed names): filter instead, e.g. [?@.id == $.wanted]';
  if (c === ']') return "empty brackets: expected a quoted name, an index, a slice, '*' or a filter '?…'";
  if (c === '+') return "an index has no '+' sign: write [1]";
  const word = wordAt(text, at);
  if (word) return `a member name in brackets must be quoted: write ['${word}']`;
  return common(c);
}

/** Where an operator was about to be read after a filter operand. */
export function comparisonHabit(text: string, at: number): string | undefined {
  if (text.startsWith('===', at)) return "'===' is JavaScript: JSONPath's '==' already compares strictly (1 == '1' is false), so write '=='";
  if (text.startsWith('!==', at)) return "'!==' is JavaScript: JSONPath's '!=' already compares strictly, so write '!='";
  if (text.startsWith('=~', at)) return "'=~' is not JSONPath: test a regular expression with match(@.a, 'regex') (the whole string) or search(@.a, 'regex') (a part of it)";
  if (text[at] === '=' && text[at + 1] !== '=') return "'=' is not a comparison: write '=='";
  if (text.startsWith('<>', at)) return "'<>' is not JSONPath: write '!='";
  return undefined;
}

/** After a filter operand, where '&&', '||', a comparison or a closing bracket was expected. */
export function afterOperandHabit(text: string, at: number): string | undefined {
  const c = text[at] ?? '';
  if (c === '(') return METHOD_CALL;
  if ('+-*/%'.includes(c) && c !== '') return ARITHMETIC;
  if (c === '&') return "write '&&' (a single '&' is not an operator)";
  if (c === '|') return "write '||' (a single '|' is not an operator)";
  if (c === '?') return "the conditional operator '? :' is JavaScript: combine tests with '&&' and '||'";
  if (c === '@') return TYPE_SELECTOR;
  const word = wordAt(text, at);
  if (word === 'in' || word === 'nin' || word === 'anyof' || word === 'subsetof' || word === 'noneof') return IN;
  if (word === 'and') return "write '&&' for and";
  if (word === 'or') return "write '||' for or";
  return comparisonHabit(text, at) ?? common(c);
}

/** At an '@' in a filter: jsonpath-plus's @parent, @root… and type selectors. */
export function currentNodeHabit(text: string, at: number): string | undefined {
  const word = wordAt(text, at + 1);
  if (!word) return undefined;
  switch (word) {
    case 'parent':
      return "'@parent' is jsonpath-plus's: a JSONPath filter sees only the current node '@' and the root '$'; to select a parent by its child, filter the parent, e.g. $.items[?@.child.id == 1]";
    case 'parentProperty':
    case 'property':
      return `'@${word}' is jsonpath-plus's: a JSONPath filter tests values, never member names; select a member by its name instead, e.g. $.a['name']`;
    case 'root':
      return "'@root' is jsonpath-plus's: the root is '$' in JSONPath, e.g. [?@.id == $.wanted]";
    case 'path':
      return "'@path' is jsonpath-plus's: a JSONPath filter cannot see where a node is";
  }
  if (TYPE_NAMES.has(word) && text[at + 1 + word.length] === '(') return TYPE_SELECTOR;
  return `expected '.', '..' or '[' after '@', found '${word[0]}' ('@' is the current node; its members are @.${word})`;
}

/** Where a filter operand (a query, a literal or a function) was expected. */
export function operandHabit(text: string, at: number): string | undefined {
  const c = text[at] ?? '';
  if (c === '/') return "regular expression literals /…/ are JavaScript: write match(@.a, 'regex') or search(@.a, 'regex'), with the regex in a string";
  if (c === '[') return "JSONPath has no list literals: compare with each value, e.g. @ == 'a' || @ == 'b'";
  if (c === '{') return 'JSONPath has no object literals: compare members one by one, e.g. @.a == 1 && @.b == 2';
  if (c === '`') return "template literals are JavaScript: write a quoted string, 'like this'";
  const word = wordAt(text, at);
  if (/^(?:True|False|TRUE|FALSE|Null|NULL|None|nil)$/.test(word)) return 'JSONPath literals are lowercase: true, false, null';
  if (word === 'undefined') return 'JSONPath has no undefined: test that a member exists with [?@.a], that it is missing with [?!@.a]';
  if (word === 'and' || word === 'or' || word === 'not') return "write '&&', '||' and '!' for and, or, not";
  if (word) return `a bare name is not an operand: the current node's member is @.${word}, the root's is $.${word}`;
  return common(c);
}
