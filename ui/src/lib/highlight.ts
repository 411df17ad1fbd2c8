//! Offline syntax highlighting (highlight.js core with one grammar per language the backend names, each
//! imported on its own to keep the bundle small), split into per-line HTML so the file viewer can number
//! and mark individual lines.

import hljs from 'highlight.js/lib/core';
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

const BY_EXT: Record<string, string> = {
  rs: 'rust', ts: 'typescript', tsx: 'typescript', js: 'javascript', mjs: 'javascript', jsx: 'javascript',
  py: 'python', json: 'json', go: 'go', sh: 'bash', bash: 'bash', md: 'markdown', toml: 'ini', ini: 'ini',
  css: 'css', scss: 'scss', html: 'xml', xml: 'xml', svelte: 'xml', vue: 'xml', yml: 'yaml', yaml: 'yaml',
  c: 'c', h: 'c', cpp: 'cpp', cc: 'cpp', hpp: 'cpp', java: 'java', kt: 'kotlin', cs: 'csharp', rb: 'ruby',
  php: 'php', swift: 'swift', sql: 'sql', lua: 'lua',
};

/** The highlight.js language for a file, from the backend's hint or the extension. */
export function languageFor(path: string, hint: string | null): string | null {
  if (hint !== null) {
    // Own keys only: a hint such as `constructor` (a model's code fence) must not find Object's members.
    const name = Object.hasOwn(ALIASES, hint) ? ALIASES[hint] : hint;
    if (hljs.getLanguage(name) !== undefined) return name;
  }
  const ext = path.split('.').pop()?.toLowerCase() ?? '';
  return Object.hasOwn(BY_EXT, ext) ? BY_EXT[ext] : null;
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
