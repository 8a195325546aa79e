/**
 * The query language of the query bar, as a tree: terms (`type:a`, `data.x>3`, a word, a quoted
 * phrase) joined by `AND` (or nothing: juxtaposed terms are ANDed), `OR`, `NOT` (or a leading `-`)
 * and parentheses. `NOT` binds tightest, then `AND`, then `OR`, as in Kibana's KQL and Lucene. The
 * operators are read in any case; to search for the word "or", quote it.
 *
 * A recursive-descent parser over one token stream: every token is read once, so the time is linear
 * in the line, and nesting deeper than `MAX_DEPTH` is refused (the recursion stays bounded whatever
 * the line). What a term means is not decided here (`query-terms.ts`).
 *
 * @example
 * parseQuery('(type:a OR type:b) NOT failed');
 * // { kind: 'and', items: [{ kind: 'or', … }, { kind: 'not', item: { kind: 'term', text: 'failed' } }] }
 */

/** A term as written, with the 1-based column of its first character. */
export interface QueryTerm {
  kind: 'term';
  text: string;
  column: number;
}

export type QueryNode =
  | QueryTerm
  | { kind: 'and' | 'or'; items: QueryNode[]; column: number }
  | { kind: 'not'; item: QueryNode; column: number };

export interface QueryError {
  error: string;
  /** 1-based column the message points at. */
  column: number;
}

/** Parentheses and `NOT`s nested deeper than this are refused. */
export const MAX_DEPTH = 16;
/** Terms in one line: each becomes a condition of the statement, so their number bounds its size. */
export const MAX_TERMS = 64;
/** Longest line read: room for every filter the page holds; each value is then bounded by `parseSearch`. */
export const MAX_QUERY_LENGTH = 2_000;

type Token =
  | { kind: 'term'; text: string; column: number }
  | { kind: '(' | ')' | 'and' | 'or' | 'not' | 'end'; column: number };

const KEYWORDS = new Map<string, 'and' | 'or' | 'not'>([
  ['and', 'and'],
  ['or', 'or'],
  ['not', 'not'],
]);

const isSpace = (c: string) =>
  c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';

/**
 * Splits on spaces and parentheses outside double quotes (a backslash escapes the next character
 * inside quotes); `-` right before `(` is `NOT`.
 */
function tokenize(line: string): Token[] | QueryError {
  const out: Token[] = [];
  let terms = 0;
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')') {
      out.push({ kind: c, column: i + 1 });
      i++;
      continue;
    }
    if (c === '-' && line[i + 1] === '(') {
      out.push({ kind: 'not', column: i + 1 });
      i++;
      continue;
    }
    const start = i;
    let quoteAt = -1;
    while (i < line.length && (quoteAt >= 0 || !(isSpace(line[i]!) || line[i] === '(' || line[i] === ')'))) {
      if (line[i] === '\\' && quoteAt >= 0) i++;
      else if (line[i] === '"') quoteAt = quoteAt >= 0 ? -1 : i;
      i++;
    }
    if (quoteAt >= 0) return { error: 'this quote is never closed', column: quoteAt + 1 };
    const text = line.slice(start, i);
    const keyword = KEYWORDS.get(text.toLowerCase());
    if (keyword === undefined && ++terms > MAX_TERMS)
      return { error: `at most ${MAX_TERMS} terms`, column: start + 1 };
    out.push(keyword ? { kind: keyword, column: start + 1 } : { kind: 'term', text, column: start + 1 });
  }
  out.push({ kind: 'end', column: line.length + 1 });
  return out;
}

class ParseError extends Error {
  constructor(
    message: string,
    readonly column: number,
  ) {
    super(message);
  }
}

/** Reads a line into its tree; an empty line is an empty `and`. */
export function parseQuery(line: string): QueryNode | QueryError {
  const tokens = tokenize(line);
  if (!Array.isArray(tokens)) return tokens;
  let at = 0;
  const peek = () => tokens[at]!;
  const next = () => tokens[at++]!;
  const named = (t: Token) => (t.kind === 'term' ? `"${t.text}"` : t.kind.toUpperCase());

  // or := and (OR and)*
  const or = (depth: number): QueryNode => {
    const first = and(depth);
    const items = [first];
    while (peek().kind === 'or') {
      const op = next();
      if (startsTerm(peek().kind)) items.push(and(depth));
      else throw new ParseError('OR needs a term after it', op.column);
    }
    return items.length === 1 ? first : { kind: 'or', items, column: first.column };
  };
  // and := unary ((AND)? unary)*
  const and = (depth: number): QueryNode => {
    const items = [unary(depth)];
    for (;;) {
      const t = peek();
      if (t.kind === 'and') {
        next();
        if (!startsTerm(peek().kind)) throw new ParseError('AND needs a term after it', t.column);
      } else if (!startsTerm(t.kind)) break;
      items.push(unary(depth));
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items, column: items[0]!.column };
  };
  // unary := NOT unary | primary
  const unary = (depth: number): QueryNode => {
    const t = peek();
    if (t.kind !== 'not') return primary(depth);
    next();
    if (depth >= MAX_DEPTH)
      throw new ParseError(`at most ${MAX_DEPTH} levels of NOT and parentheses`, t.column);
    if (!startsTerm(peek().kind)) throw new ParseError('NOT needs a term after it', t.column);
    return { kind: 'not', item: unary(depth + 1), column: t.column };
  };
  // primary := '(' or ')' | term
  const primary = (depth: number): QueryNode => {
    const t = next();
    if (t.kind === 'term') return { kind: 'term', text: t.text, column: t.column };
    if (t.kind === '(') {
      if (depth >= MAX_DEPTH)
        throw new ParseError(`at most ${MAX_DEPTH} levels of NOT and parentheses`, t.column);
      if (peek().kind === ')') throw new ParseError('nothing between these parentheses', t.column);
      const inner = or(depth + 1);
      const close = next();
      if (close.kind !== ')') {
        throw close.kind === 'end'
          ? new ParseError('this parenthesis is never closed', t.column)
          : new ParseError(`expected ) before ${named(close)}`, close.column);
      }
      return inner;
    }
    if (t.kind === ')') throw new ParseError('this parenthesis closes nothing', t.column);
    if (t.kind === 'end') throw new ParseError('a term must follow', t.column);
    throw new ParseError(`${named(t)} needs a term before it`, t.column);
  };

  try {
    if (peek().kind === 'end') return { kind: 'and', items: [], column: 1 };
    const tree = or(0);
    const rest = peek();
    if (rest.kind !== 'end')
      return rest.kind === ')'
        ? { error: 'this parenthesis closes nothing', column: rest.column }
        : { error: `unexpected ${named(rest)}`, column: rest.column };
    return tree;
  } catch (err) {
    if (err instanceof ParseError) return { error: err.message, column: err.column };
    throw err;
  }
}

function startsTerm(kind: Token['kind']): boolean {
  return kind === 'term' || kind === '(' || kind === 'not';
}

/** The terms joined by AND at the top of the tree (the whole tree when it is one term, an OR or a NOT). */
export function conjuncts(tree: QueryNode): QueryNode[] {
  return tree.kind === 'and' ? tree.items : [tree];
}

/** The line of a tree, parenthesised where precedence needs it: it reads back to a tree of the same meaning. */
export function writeQuery(node: QueryNode): string {
  switch (node.kind) {
    case 'term':
      return node.text;
    case 'not':
      return `NOT ${node.item.kind === 'term' || node.item.kind === 'not' ? writeQuery(node.item) : `(${writeQuery(node.item)})`}`;
    case 'and':
      return node.items.map((i) => (i.kind === 'or' ? `(${writeQuery(i)})` : writeQuery(i))).join(' ');
    case 'or':
      return node.items.map((i) => (i.kind === 'and' ? `(${writeQuery(i)})` : writeQuery(i))).join(' OR ');
  }
}
