import { describe, expect, it } from 'vitest';
import { highlightLines, languageFor, PLAIN_LANGUAGES, splitHighlighted } from './highlight';
import backendLanguages from './languages.json';

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
  it('takes no language from names that are members of every object (a model can write any fence)', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty']) {
      expect(languageFor(`.${name}`, name)).toBeNull();
      expect(languageFor(`file.${name}`, null)).toBeNull();
    }
  });

  it('picks the language from the extension', () => {
    expect(languageFor('src/main.rs', null)).toBe('rust');
    expect(languageFor('a/b.unknown', null)).toBeNull();
  });
  it("without a hint, uses the backend's own table (whole file names first) through the aliases", () => {
    expect(languageFor('docker/Dockerfile', null)).toBe('dockerfile');
    expect(languageFor('GNUmakefile', null)).toBe('makefile');
    expect(languageFor('Cargo.lock', null)).toBe('ini');
    expect(languageFor('src/util.MTS', null)).toBe('typescript');
    expect(languageFor('scripts/run.zsh', null)).toBe('bash');
    expect(languageFor('build.zig', null)).toBeNull();
    expect(languageFor('README', null)).toBeNull();
  });
  it('reopens spans across lines', () => {
    expect(splitHighlighted('<span class="c">a\nb</span>')).toEqual(['<span class="c">a</span>', '<span class="c">b</span>']);
  });

  it('highlights every language the backend names, or shows it plain on purpose', () => {
    expect(backendLanguages.length).toBeGreaterThan(25);
    const missing = backendLanguages.filter((id) => languageFor('file', id) === null && !PLAIN_LANGUAGES.has(id));
    expect(missing).toEqual([]);
    for (const id of PLAIN_LANGUAGES) expect(backendLanguages).toContain(id);
  });
  it('colours keywords of the languages that used to come out plain', () => {
    const samples: Record<string, string> = {
      ruby: 'def greet(name)\n  puts "hi #{name}"\nend',
      sql: 'SELECT id, name FROM users WHERE id = 1;',
      php: '<?php function f($a) { return $a; }',
      csharp: 'public class A { private int x; }',
      kotlin: 'fun main() { val x = 1 }',
      swift: 'func f() -> Int { let x = 1; return x }',
      lua: 'local function f() return nil end',
      scss: '$c: red; .a { color: $c; }',
      dockerfile: 'FROM debian:12\nRUN apt-get update',
      makefile: 'all: build\n\tcargo build',
      vue: '<template><div class="a"></div></template>',
      shell: 'if [ -f x ]; then echo hi; fi',
    };
    for (const [id, src] of Object.entries(samples)) {
      const lang = languageFor('file', id);
      expect(lang, id).not.toBeNull();
      const out = highlightLines(src.split('\n'), lang);
      expect(out.join('\n'), id).toMatch(/class="hljs-(keyword|built_in|tag|name|attr|variable|section|meta|selector)/);
    }
  });
  it('maps a Ruby hint to the ruby grammar and an unknown hint by extension', () => {
    expect(languageFor('app/models/user.rb', 'ruby')).toBe('ruby');
    expect(languageFor('db/schema.sql', null)).toBe('sql');
    expect(languageFor('src/main.zig', 'zig')).toBeNull();
  });
});
