//! Offline syntax highlighting (highlight.js core with a handful of languages), split into per-line HTML
//! so the file viewer can number and mark individual lines.

import hljs from 'highlight.js/lib/core';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import javascript from 'highlight.js/lib/languages/javascript';
import python from 'highlight.js/lib/languages/python';
import json from 'highlight.js/lib/languages/json';
import go from 'highlight.js/lib/languages/go';
import bash from 'highlight.js/lib/languages/bash';
import markdown from 'highlight.js/lib/languages/markdown';
import ini from 'highlight.js/lib/languages/ini';
import css from 'highlight.js/lib/languages/css';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import java from 'highlight.js/lib/languages/java';

const LANGS = { rust, typescript, javascript, python, json, go, bash, markdown, ini, css, xml, yaml, c, cpp, java };
for (const [name, def] of Object.entries(LANGS)) hljs.registerLanguage(name, def);

const BY_EXT: Record<string, string> = {
  rs: 'rust', ts: 'typescript', tsx: 'typescript', js: 'javascript', mjs: 'javascript', jsx: 'javascript',
  py: 'python', json: 'json', go: 'go', sh: 'bash', bash: 'bash', md: 'markdown', toml: 'ini', ini: 'ini',
  css: 'css', html: 'xml', xml: 'xml', svelte: 'xml', yml: 'yaml', yaml: 'yaml', c: 'c', h: 'c',
  cpp: 'cpp', cc: 'cpp', hpp: 'cpp', java: 'java',
};

/** The highlight.js language for a file, from the backend's hint or the extension. */
export function languageFor(path: string, hint: string | null): string | null {
  if (hint !== null && hljs.getLanguage(hint) !== undefined) return hint;
  const ext = path.split('.').pop()?.toLowerCase() ?? '';
  return BY_EXT[ext] ?? null;
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
