//! Offline syntax highlighting (highlight.js core with one grammar per language the backend names, each
//! imported on its own to keep the bundle small), split into per-line HTML so the file viewer can number
//! and mark individual lines.

import hljs from 'highlight.js/lib/core';
import { LANGUAGE_BY_EXTENSION, LANGUAGE_BY_NAME } from '../generated/constants';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import kotlin from 'highlight.js/lib/languages/kotlin';
import lua from 'highlight.js/lib/languages/lua';
import makefile from 'highlight.js/lib/languages/makefile';
import markdown from 'highlight.js/lib/languages/markdown';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import scss from 'highlight.js/lib/languages/scss';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

const LANGS = {
  bash, c, cpp, csharp, css, dockerfile, go, ini, java, javascript, json, kotlin, lua, makefile, markdown,
  php, python, ruby, rust, scss, sql, swift, typescript, xml, yaml,
};
for (const [name, def] of Object.entries(LANGS)) hljs.registerLanguage(name, def);

/** Backend language ids (files.rs `language_for`) whose grammar has another name or is a close relative. */
const ALIASES: Record<string, string> = {
  shell: 'bash', toml: 'ini', html: 'xml', vue: 'xml', svelte: 'xml', tsx: 'typescript', jsx: 'javascript',
};

/** Backend language ids shown plain on purpose: highlight.js has no grammar for them. */
export const PLAIN_LANGUAGES: ReadonlySet<string> = new Set(['zig']);

/** The highlight.js language for a file, from the backend's hint or the extension. */
export function languageFor(path: string, hint: string | null): string | null {
  if (hint !== null) {
    // Own keys only: a hint such as `constructor` (a model's code fence) must not find Object's members.
    const name = grammarOf(hint);
    if (name !== null) return name;
  }
  // Otherwise the backend's own table (generated from Rust): the whole file name, then the extension.
  const base = (path.split('/').pop() ?? '').toLowerCase();
  const ext = base.includes('.') ? (base.split('.').pop() ?? '') : '';
  const id = Object.hasOwn(LANGUAGE_BY_NAME, base) ? LANGUAGE_BY_NAME[base] : Object.hasOwn(LANGUAGE_BY_EXTENSION, ext) ? LANGUAGE_BY_EXTENSION[ext] : null;
  return id === null ? null : grammarOf(id);
}

/** The registered grammar for a language id (through ALIASES), or null. */
function grammarOf(id: string): string | null {
  // Own keys only: a name such as `constructor` (a model's code fence) must not find Object's members.
  const name = Object.hasOwn(ALIASES, id) ? ALIASES[id] : id;
  return hljs.getLanguage(name) !== undefined ? name : null;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Splits highlighted HTML into lines, closing and reopening spans that cross line ends. */
export function splitHighlighted(html: string): string[] {
  const out: string[] = [];
  const open: string[] = [];
  let cur = '';
  const re = /(<span[^>]*>)|(<\/span>)|(\n)|([^<\n]+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(html)) !== null) {
    if (m[1] !== undefined) {
      open.push(m[1]);
      cur += m[1];
    } else if (m[2] !== undefined) {
      open.pop();
      cur += m[2];
    } else if (m[3] !== undefined) {
      out.push(cur + '</span>'.repeat(open.length));
      cur = open.join('');
    } else {
      cur += m[4];
    }
  }
  out.push(cur + '</span>'.repeat(open.length));
  return out;
}

/** One HTML string per input line (escaped; highlighted when the language is known and the file is small). */
export function highlightLines(lines: string[], lang: string | null): string[] {
  const text = lines.join('\n');
  if (lang === null || text.length > 400_000) return lines.map(escapeHtml);
  try {
    return splitHighlighted(hljs.highlight(text, { language: lang, ignoreIllegals: true }).value);
  } catch {
    return lines.map(escapeHtml);
  }
}
