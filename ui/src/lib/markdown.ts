//! Assistant answers as Markdown, rendered to HTML that is safe to put in the page: raw HTML from the
//! model is shown as text (markdown-it with `html: false`), links and images become text with their
//! address (nothing in the app window navigates), fenced code is highlighted with highlight.ts, and
//! `path:line` mentions of project files become buttons that open the file viewer. A final answer's
//! mentions that the host checked (`answer_checked`) carry marks: a broken or unseen one is visibly
//! marked and explains itself on hover; a grounded one stays a plain link.
//!
//! A streaming answer is rendered block by block (split at blank lines outside code fences), and
//! finished blocks are kept, so each new frame parses only the block still growing.

import markdownIt, { type MarkdownIt } from 'markdown-it';
import { highlightLines, languageFor } from './highlight';

/** A `path:line` or `path:line-line` mention of a file inside the project. */
export interface PathRef {
  path: string;
  line: number;
  endLine: number | null;
}

// Not preceded by what would make it part of a longer word, an absolute path or a URL (`/`, `//host`,
// `user@host`, `a:b`); not followed by more of a word or path.
const PATH_LINE = /(?<![\w./@:~\\-])((?:[\w.-]+\/)*[\w.-]+):(\d+)(?:-(\d+))?(?![\w/])/g;
const WHOLE_PATH_LINE = /^((?:[\w.-]+\/)*[\w.-]+):(\d+)(?:-(\d+))?$/;
// `example.com:443` and `10.0.0.1:8080` look like `name.ext:line`; a host is not a file worth opening.
const HOST_LIKE = /^(?:\d+(?:\.\d+)+|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|ai|edu|gov|co|uk|de|local|internal))$/i;

/** The file reference `path`/`line`/`end` name, or null when it is not a relative path inside the project. */
function toRef(rawPath: string, line: string, end: string | undefined): PathRef | null {
  let path = rawPath;
  while (path.startsWith('./')) path = path.slice(2);
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '..' || s === '.')) return null;
  // A bare word before a colon (`Note:3`, `localhost:8080`) is not a file: a file has an extension or a folder.
  if (!path.includes('/') && !/[^.]\.[\w-]+$/.test(path)) return null;
  if (!path.includes('/') && HOST_LIKE.test(path)) return null;
  const l = Number(line);
  if (!Number.isSafeInteger(l) || l < 1) return null;
  let e: number | null = end === undefined ? null : Number(end);
  if (e !== null && (!Number.isSafeInteger(e) || e < l)) e = null;
  if (e === l) e = null;
  return { path, line: l, endLine: e };
}

/** The `path:line` mentions in plain text, with where each starts and ends. */
export function findPathRefs(text: string): { start: number; end: number; ref: PathRef }[] {
  const out: { start: number; end: number; ref: PathRef }[] = [];
  for (const m of text.matchAll(PATH_LINE)) {
    const ref = toRef(m[1], m[2], m[3]);
    if (ref !== null && m.index !== undefined) out.push({ start: m.index, end: m.index + m[0].length, ref });
  }
  return out;
}

/** The reference when `text` is exactly one `path:line` mention (an inline code span like `src/a.rs:3`). */
export function wholePathRef(text: string): PathRef | null {
  const m = WHOLE_PATH_LINE.exec(text.trim());
  return m === null ? null : toRef(m[1], m[2], m[3]);
}

/** How a checked reference is marked where the answer mentions it (see `lib/trust.ts`). */
export interface RefMark {
  /** `EvidenceTrust`; `grounded` draws no mark. */
  trust: string;
  icon: string;
  /** Said on hover. */
  explain: string;
}

/** Marks by `refKey`. */
export type RefMarks = ReadonlyMap<string, RefMark>;

/** The key a reference is marked under: `path:line` or `path:line-end`. */
export function refKey(path: string, line: number, endLine: number | null): string {
  return endLine === null || endLine === line ? `${path}:${line}` : `${path}:${line}-${endLine}`;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function pathButton(ref: PathRef, inner: string, marks: RefMarks | null): string {
  const end = ref.endLine === null ? '' : ` data-end="${ref.endLine}"`;
  const where = ref.endLine === null ? `line ${ref.line}` : `lines ${ref.line}-${ref.endLine}`;
  const open = `Open ${ref.path} at ${where}`;
  const mark = marks?.get(refKey(ref.path, ref.line, ref.endLine));
  if (mark === undefined || mark.trust === 'grounded') {
    const trust = mark === undefined ? '' : ` data-trust="${escapeHtml(mark.trust)}"`;
    return `<button type="button" class="md-path" data-testid="md-path" data-path="${escapeHtml(ref.path)}" data-line="${ref.line}"${end}${trust} title="${escapeHtml(open)}">${inner}</button>`;
  }
  const t = escapeHtml(mark.trust);
  return `<button type="button" class="md-path md-ref md-ref-${t}" data-testid="md-path" data-path="${escapeHtml(ref.path)}" data-line="${ref.line}"${end} data-trust="${t}" title="${escapeHtml(`${mark.explain}. ${open}`)}">${inner}<span class="md-ref-mark tr tr-${t}" aria-hidden="true">${escapeHtml(mark.icon)}</span><span class="md-ref-sr"> (${escapeHtml(mark.explain)})</span></button>`;
}

/** Escaped text with its `path:line` mentions as buttons. */
function linkifyText(text: string, linkPaths: boolean, marks: RefMarks | null): string {
  if (!linkPaths) return escapeHtml(text);
  let out = '';
  let at = 0;
  for (const { start, end, ref } of findPathRefs(text)) {
    out += escapeHtml(text.slice(at, start)) + pathButton(ref, escapeHtml(text.slice(start, end)), marks);
    at = end;
  }
  return out + escapeHtml(text.slice(at));
}

/** Splits Markdown into top-level blocks at blank lines that are not inside a code fence. */
export function splitBlocks(text: string): string[] {
  const lines = text.split('\n');
  const blocks: string[] = [];
  let cur: string[] = [];
  let fence: { ch: string; len: number } | null = null;
  let blank = false;
  for (const line of lines) {
    const f = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence !== null) {
      if (f !== null && f[1][0] === fence.ch && f[1].length >= fence.len && f[2].trim() === '') fence = null;
      cur.push(line);
      continue;
    }
    if (line.trim() === '') {
      blank = true;
      cur.push(line);
      continue;
    }
    // After a blank line an unindented line starts a new top-level block; an indented one may continue
    // a list item or be indented code, so it stays with what came before.
    if (blank && !/^\s/.test(line) && cur.some((l) => l.trim() !== '')) {
      blocks.push(cur.join('\n'));
      cur = [];
    }
    blank = false;
    if (f !== null && !(f[1][0] === '`' && f[2].includes('`'))) fence = { ch: f[1][0], len: f[1].length };
    cur.push(line);
  }
  if (cur.some((l) => l.trim() !== '')) blocks.push(cur.join('\n'));
  return blocks;
}

interface RenderEnv {
  linkPaths: boolean;
  hrefs: string[];
  marks: RefMarks | null;
}

function createParser(): MarkdownIt {
  // `html: false` is what keeps model output from becoming DOM: tags are text. No linkify, no typographer:
  // the answer reads as the model wrote it.
  const md = markdownIt({ html: false, linkify: false, typographer: false, breaks: true });
  const rules = md.renderer.rules;
  const env = (e: unknown): RenderEnv => e as RenderEnv;

  rules.text = (tokens, idx, _o, e) => linkifyText(tokens[idx].content, env(e).linkPaths, env(e).marks);
  rules.code_inline = (tokens, idx, _o, e) => {
    const code = tokens[idx].content;
    const inner = `<code>${escapeHtml(code)}</code>`;
    const ref = env(e).linkPaths ? wholePathRef(code) : null;
    return ref === null ? inner : pathButton(ref, inner, env(e).marks);
  };
  const codeBlock = (content: string, info: string): string => {
    const name = info.trim().split(/\s+/)[0] ?? '';
    const lang = name === '' ? null : languageFor(`.${name}`, name.toLowerCase());
    const lines = content.endsWith('\n') ? content.slice(0, -1).split('\n') : content.split('\n');
    const body = highlightLines(lines, lang).join('\n');
    const label = name === '' ? '' : ` data-lang="${escapeHtml(name)}"`;
    return `<pre class="md-code"${label}><code class="hljs">${body}</code></pre>\n`;
  };
  rules.fence = (tokens, idx) => codeBlock(tokens[idx].content, tokens[idx].info);
  rules.code_block = (tokens, idx) => codeBlock(tokens[idx].content, '');
  // Links never navigate the app window: their text stays, with the address shown after it.
  rules.link_open = (tokens, idx, _o, e) => {
    const t = tokens[idx];
    env(e).hrefs.push(t.markup === 'autolink' || t.markup === 'linkify' ? '' : String(t.attrGet('href') ?? ''));
    return '<span class="md-link">';
  };
  rules.link_close = (_t, _i, _o, e) => {
    const href = env(e).hrefs.pop() ?? '';
    return href === '' ? '</span>' : `</span> <span class="md-url">(${escapeHtml(href)})</span>`;
  };
  rules.image = (tokens, idx) => {
    const t = tokens[idx];
    const src = String(t.attrGet('src') ?? '');
    return `<span class="md-link">[image${t.content !== '' ? `: ${escapeHtml(t.content)}` : ''}]</span> <span class="md-url">(${escapeHtml(src)})</span>`;
  };
  // Unreachable with `html: false`; kept as text in case an option or plugin ever turns HTML on.
  rules.html_block = (tokens, idx) => `<p>${escapeHtml(tokens[idx].content)}</p>`;
  rules.html_inline = (tokens, idx) => escapeHtml(tokens[idx].content);
  return md;
}

/**
 * Renders Markdown for one message. Keeps the HTML of the blocks it rendered last time, so a growing
 * answer costs one block per frame, not the whole text.
 */
export class MarkdownRenderer {
  private readonly md = createParser();
  private cache = new Map<string, string>();
  /** Characters handed to the parser so far (what the cache saves is visible here). */
  parsedChars = 0;

  /** The whole text as HTML. */
  render(text: string, linkPaths = true, marks: RefMarks | null = null): string {
    return this.blocks(text, linkPaths, marks).join('');
  }

  /** The HTML of each top-level block of `text`, its checked references marked by `marks`. */
  blocks(text: string, linkPaths = true, marks: RefMarks | null = null): string[] {
    const next = new Map<string, string>();
    // Marks change a block's HTML: a block is reused only under the same marks.
    const markKey = marks === null || marks.size === 0 ? '' : JSON.stringify([...marks.entries()]);
    const out = splitBlocks(text).map((src) => {
      const key = `${linkPaths ? 1 : 0}${markKey.length}:${markKey}${src}`;
      const known = next.get(key) ?? this.cache.get(key);
      if (known !== undefined) {
        next.set(key, known);
        return known;
      }
      this.parsedChars += src.length;
      const html = this.md.render(src, { linkPaths, hrefs: [], marks } satisfies RenderEnv);
      next.set(key, html);
      return html;
    });
    // Only the blocks of the current text are kept: memory follows the message, not its history.
    this.cache = next;
    return out;
  }
}
