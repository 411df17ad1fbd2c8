//! WCAG 2 contrast of the theme colours: reads the custom properties of both themes out of `app.css`
//! so a test can check the text/background pairs people actually read.

/** One theme's custom properties, name (without `--`) to value. */
export type ThemeVars = Map<string, string>;

export interface Themes {
  light: ThemeVars;
  dark: ThemeVars;
}

/** `#rgb` or `#rrggbb` as 0–255 channels; anything else is an error naming the value. */
export function parseHex(color: string): [number, number, number] {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(color.trim());
  if (m === null) throw new Error(`not a #rgb or #rrggbb colour: "${color}"`);
  const h = m[1].length === 3 ? [...m[1]].map((c) => c + c).join('') : m[1];
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

/** Relative luminance as WCAG 2.x defines it. */
export function luminance(color: string): number {
  const [r, g, b] = parseHex(color).map((v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Contrast ratio (1–21) of two opaque colours, in either order. */
export function contrastRatio(a: string, b: string): number {
  const la = luminance(a);
  const lb = luminance(b);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

function declarations(block: string): ThemeVars {
  const out: ThemeVars = new Map();
  for (const m of block.matchAll(/--([\w-]+)\s*:\s*([^;]+);/g)) out.set(m[1], m[2].trim());
  return out;
}

/** The body of the first `{...}` after `from`, braces balanced. */
function blockAfter(css: string, from: number): string {
  const open = css.indexOf('{', from);
  if (open < 0) throw new Error('no block after the selector');
  let depth = 0;
  for (let i = open; i < css.length; i += 1) {
    if (css[i] === '{') depth += 1;
    else if (css[i] === '}') {
      depth -= 1;
      if (depth === 0) return css.slice(open + 1, i);
    }
  }
  throw new Error('unbalanced braces in the stylesheet');
}

/**
 * The light theme is the top-level `:root` block; the dark theme is that block overridden by the `:root`
 * inside the first `@media (prefers-color-scheme: dark)`. Missing blocks are errors, not empty themes.
 */
export function parseThemes(css: string): Themes {
  const noComments = css.replace(/\/\*[\s\S]*?\*\//g, '');
  const lightAt = noComments.search(/(^|\n)\s*:root\s*\{/);
  if (lightAt < 0) throw new Error('no top-level :root block in the stylesheet');
  const light = declarations(blockAfter(noComments, lightAt));
  const darkAt = noComments.search(/@media\s*\(\s*prefers-color-scheme\s*:\s*dark\s*\)/);
  if (darkAt < 0) throw new Error('no @media (prefers-color-scheme: dark) block in the stylesheet');
  const media = blockAfter(noComments, darkAt);
  const rootAt = media.search(/:root\s*\{/);
  if (rootAt < 0) throw new Error('the dark media block has no :root');
  const dark = new Map([...light, ...declarations(blockAfter(media, rootAt))]);
  return { light, dark };
}

/** Contrast of two variables (names without `--`) of one theme; an unknown name is an error. */
export function varContrast(theme: ThemeVars, fg: string, bg: string): number {
  const get = (n: string): string => {
    const v = theme.get(n);
    if (v === undefined) throw new Error(`--${n} is not defined in the theme`);
    return v;
  };
  return contrastRatio(get(fg), get(bg));
}
