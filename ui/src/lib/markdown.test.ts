import { describe, expect, it } from 'vitest';
import { findPathRefs, MarkdownRenderer, splitBlocks, wholePathRef } from './markdown';

const render = (text: string, linkPaths = true) => new MarkdownRenderer().render(text, linkPaths);

/** Every tag name in the HTML, lower-cased. */
const tags = (html: string) => [...html.matchAll(/<([a-zA-Z][\w-]*)/g)].map((m) => m[1].toLowerCase());

describe('Markdown rendering', () => {
  it('renders what models write: headings, lists, bold, inline code, fenced code', () => {
    const html = render('## Fix\n\n- **one** item\n- `two`\n\n1. first\n2. second\n\n```rust\nfn main() {}\n```\n');
    expect(html).toContain('<h2>Fix</h2>');
    expect(html).toContain('<ul>');
    expect(html).toContain('<strong>one</strong>');
    expect(html).toContain('<code>two</code>');
    expect(html).toContain('<ol>');
    expect(html).toContain('<pre class="md-code" data-lang="rust">');
    // highlight.ts marked the keyword.
    expect(html).toMatch(/<span class="hljs-keyword">fn<\/span>/);
  });

  it('leaves code of an unknown language unhighlighted but escaped', () => {
    const html = render('```weird\nif a < b { x }\n```');
    expect(html).toContain('if a &lt; b { x }');
    expect(html).not.toContain('hljs-');
  });

  it('renders a code fence named like an object member as plain code instead of throwing', () => {
    for (const name of ['constructor', '__proto__', 'toString']) {
      const html = new MarkdownRenderer().render('```' + name + '\nlet x = 1;\n```\n');
      expect(html).toContain('<code class="hljs">let x = 1;</code>');
    }
  });

  it('never turns raw HTML from the model into elements', () => {
    const evil = [
      '<script>alert(1)</script>',
      '<img src=x onerror="alert(1)">',
      'inline <iframe src="https://evil.example"></iframe> tag',
      '<a href="javascript:alert(1)">click</a>',
      '[click](javascript:alert(1))',
      '[site](https://example.com "title")',
      '![pic](https://example.com/x.png)',
      '<https://example.com/auto>',
      '<div onclick="alert(1)">block</div>',
      '```html\n<script>alert(1)</script>\n```',
      '`<b>code</b>`',
    ].join('\n\n');
    const html = render(evil);
    const allowed = new Set(['p', 'span', 'code', 'pre', 'br', 'button', 'strong', 'em']);
    expect(tags(html).filter((t) => !allowed.has(t))).toEqual([]);
    // Every attribute of every element is one the renderer itself writes.
    const attrs = [...html.matchAll(/<[a-zA-Z][^>]*>/g)].flatMap((t) => [...t[0].matchAll(/\s([\w-]+)=/g)].map((a) => a[1]));
    expect(attrs.filter((a) => !['class', 'title', 'type', 'data-lang', 'data-path', 'data-line', 'data-end', 'data-testid'].includes(a))).toEqual([]);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('shows a link as its text followed by its address, and an autolink once', () => {
    const html = render('See [the docs](https://example.com/docs) or <https://example.com/auto>.');
    expect(html).toContain('<span class="md-link">the docs</span> <span class="md-url">(https://example.com/docs)</span>');
    expect(html.match(/example\.com\/auto/g)?.length).toBe(1);
  });
});

describe('path:line mentions', () => {
  it('become buttons naming the file, line and range', () => {
    const html = render('Login is in src/auth.rs:3 and the check at src/auth.rs:7-9.');
    expect(html).toContain('data-path="src/auth.rs" data-line="3" title=');
    expect(html).toContain('data-path="src/auth.rs" data-line="7" data-end="9"');
    expect(html).toContain('>src/auth.rs:7-9</button>');
  });

  it('an inline code span that is exactly a path:line is a button; other code is not', () => {
    const html = render('Look at `src/config.rs:2` and `let x = a.rs:3;`');
    expect(html).toContain('data-path="src/config.rs" data-line="2" title="Open src/config.rs at line 2"><code>src/config.rs:2</code></button>');
    expect(html).toContain('<code>let x = a.rs:3;</code>');
    expect(html.match(/<button/g)?.length).toBe(1);
  });

  it('are not made inside fenced code, or when linking is off', () => {
    expect(render('```\nsrc/auth.rs:3\n```')).not.toContain('md-path');
    expect(render('src/auth.rs:3', false)).not.toContain('md-path');
  });

  it('only relative paths inside the project count', () => {
    const refs = (s: string) => findPathRefs(s).map((r) => r.ref);
    expect(refs('src/auth.rs:3')).toEqual([{ path: 'src/auth.rs', line: 3, endLine: null }]);
    expect(refs('./src/auth.rs:3-3')).toEqual([{ path: 'src/auth.rs', line: 3, endLine: null }]);
    expect(refs('Cargo.toml:12')).toEqual([{ path: 'Cargo.toml', line: 12, endLine: null }]);
    expect(refs('/etc/passwd:1')).toEqual([]);
    expect(refs('../outside/x.rs:4')).toEqual([]);
    expect(refs('src/../x.rs:4')).toEqual([]);
    expect(refs('https://example.com:8080/x and http://host.rs:80')).toEqual([]);
    expect(refs('localhost:8080, 127.0.0.1:8080, example.com:443, Note:3, user@host.rs:22')).toEqual([]);
    expect(refs('a.rs:0')).toEqual([]);
    expect(refs('backwards a.rs:9-3')).toEqual([{ path: 'a.rs', line: 9, endLine: null }]);
    expect(wholePathRef(' src/a.ts:10-12 ')).toEqual({ path: 'src/a.ts', line: 10, endLine: 12 });
    expect(wholePathRef('src/a.ts:10 and more')).toBeNull();
  });
});

describe('streaming', () => {
  it('splits at blank lines, but not inside a fence or before an indented continuation', () => {
    expect(splitBlocks('a\nb\n\nc')).toEqual(['a\nb\n', 'c']);
    expect(splitBlocks('```\nx\n\ny\n```\n\nz')).toEqual(['```\nx\n\ny\n```\n', 'z']);
    expect(splitBlocks('- item\n\n  more of it\n\nnext')).toEqual(['- item\n\n  more of it\n', 'next']);
    expect(splitBlocks('~~~\nopen fence never closed\n\nstill code')).toEqual(['~~~\nopen fence never closed\n\nstill code']);
  });

  it('a growing 20 KB answer parses each finished block once, not the whole text every frame', () => {
    const para = (i: number) => `Paragraph ${i} mentions src/auth.rs:${i + 1} and **bold** text that goes on for a while to fill the line.`;
    const code = (i: number) => `\`\`\`rust\nfn f${i}() -> u32 {\n    ${i}\n}\n\`\`\``;
    const parts: string[] = [];
    for (let i = 0; parts.join('\n\n').length < 20_000; i += 1) parts.push(i % 4 === 3 ? code(i) : para(i));
    const full = parts.join('\n\n');
    const r = new MarkdownRenderer();
    const step = 40;
    let frames = 0;
    for (let n = step; n < full.length + step; n += step) {
      r.blocks(full.slice(0, n));
      frames += 1;
    }
    expect(frames).toBeGreaterThan(400);
    // Re-rendering everything per frame would parse ~frames * full/2 ≈ 5 MB; block reuse keeps it near
    // the text's own size (each frame re-parses only the block still growing).
    expect(r.parsedChars).toBeLessThan(full.length * 4);
    // And the result is the same as rendering the finished text at once.
    expect(r.render(full)).toBe(new MarkdownRenderer().render(full));
  });
});
