import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { contrastRatio, parseHex, parseThemes, varContrast, type ThemeVars } from './contrast';

// The real stylesheet, so a later colour edit that makes small text hard to read fails here.
const css = readFileSync(new URL('../app.css', import.meta.url), 'utf8');
const themes = parseThemes(css);

// Text colours and where they are drawn: panels, the page, hovered and selected tree rows, the status
// pills' own tints, code blocks. 10–11 px text (budget labels, line numbers, timestamps, pills) is small
// text, so AA asks 4.5:1 for all of it.
const TEXT = ['text', 'muted', 'faint', 'accent', 'ok', 'warn', 'bad'];
const SURFACES = ['bg', 'panel', 'panel-2', 'accent-soft', 'ok-soft', 'warn-soft', 'bad-soft', 'neutral-soft', 'code-bg'];
// The highlighted line of the file viewer holds code and its line number only.
const EXTRA: [string, string][] = [
  ['text', 'hl-line'],
  ['faint', 'hl-line'],
  ['on-accent', 'accent'],
];
const AA = 4.5;

function failures(theme: ThemeVars): string[] {
  const pairs: [string, string][] = [...TEXT.flatMap((fg) => SURFACES.map((bg): [string, string] => [fg, bg])), ...EXTRA];
  return pairs
    .map(([fg, bg]) => ({ fg, bg, r: varContrast(theme, fg, bg) }))
    .filter((p) => p.r < AA)
    .map((p) => `--${p.fg} on --${p.bg}: ${p.r.toFixed(2)}:1`);
}

describe('contrast maths', () => {
  it('matches the WCAG reference values', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#fff', '#fff')).toBe(1);
    // #767676 on white is the well-known lightest grey that passes AA (4.54:1).
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    expect(contrastRatio('#ffffff', '#6ea0ff')).toBeCloseTo(2.58, 2);
  });

  it('rejects colours it cannot read', () => {
    expect(() => parseHex('rgb(0,0,0)')).toThrow(/not a #rgb or #rrggbb colour: "rgb\(0,0,0\)"/);
    expect(() => varContrast(themes.light, 'nope', 'bg')).toThrow('--nope is not defined in the theme');
    expect(() => parseThemes('body { color: red; }')).toThrow(/no top-level :root/);
  });
});

describe('app.css themes', () => {
  it('defines both themes, the dark one overriding the light', () => {
    expect(themes.light.get('panel')).toBe('#ffffff');
    expect(themes.dark.get('panel')).not.toBe(themes.light.get('panel'));
    for (const name of [...TEXT, ...SURFACES, 'hl-line', 'on-accent']) {
      expect(themes.light.has(name), `light --${name}`).toBe(true);
      expect(themes.dark.has(name), `dark --${name}`).toBe(true);
    }
  });

  it.each(['light', 'dark'] as const)('%s: every text colour reads at >= 4.5:1 on every surface', (name) => {
    expect(failures(themes[name])).toEqual([]);
  });

  it('primary buttons take their text colour from --on-accent (no fixed white on the dark theme blue)', () => {
    expect(css).toMatch(/button\.primary\s*\{[^}]*color:\s*var\(--on-accent\)/);
  });

  it('the check would catch the old colours', () => {
    // The palette before the fix: --faint #8c959f on white and white on the dark accent.
    const old = new Map(themes.light);
    old.set('faint', '#8c959f');
    expect(failures(old)).toContain('--faint on --panel: 3.04:1');
    const oldDark = new Map(themes.dark);
    oldDark.set('on-accent', '#ffffff');
    expect(failures(oldDark)).toContain('--on-accent on --accent: 2.58:1');
  });
});
