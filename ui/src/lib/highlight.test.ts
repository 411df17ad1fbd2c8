import { describe, expect, it } from 'vitest';
import { highlightLines, languageFor, splitHighlighted } from './highlight';

describe('highlighting', () => {
  it('keeps one output line per input line, even inside multi-line comments', () => {
    const src = ['fn a() {', '  /* two', '  lines */', '  let s = "<b>";', '}'];
    const out = highlightLines(src, 'rust');
    expect(out.length).toBe(src.length);
    expect(out[3]).toContain('&lt;b&gt;');
    for (const l of out) expect((l.match(/<span/g) ?? []).length).toBe((l.match(/<\/span>/g) ?? []).length);
  });
  it('escapes unknown languages instead of highlighting', () => {
    expect(highlightLines(['<script>'], null)).toEqual(['&lt;script&gt;']);
  });
  it('picks the language from the extension', () => {
    expect(languageFor('src/main.rs', null)).toBe('rust');
    expect(languageFor('a/b.unknown', null)).toBeNull();
  });
  it('reopens spans across lines', () => {
    expect(splitHighlighted('<span class="c">a\nb</span>')).toEqual(['<span class="c">a</span>', '<span class="c">b</span>']);
  });
});
