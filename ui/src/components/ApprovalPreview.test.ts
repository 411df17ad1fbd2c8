import { describe, expect, it } from 'vitest';
import { render } from 'svelte/server';
import type { JsonValue } from '../generated/types';
import ApprovalPreview from './ApprovalPreview.svelte';

// The markup a person sees under a pending approval (server-rendered: no browser needed).
function html(tool: string, args: JsonValue): string {
  return render(ApprovalPreview, { props: { tool, args } }).body;
}

describe('ApprovalPreview markup', () => {
  it('marks removed and added lines of an Edit and notes replace_all', () => {
    const body = html('Edit', { path: 'src/auth.rs', old_string: '!p.is_empty()', new_string: 'p.len() >= 12', replace_all: true });
    expect(body).toContain('data-testid="approval-preview"');
    expect(body).toMatch(/class="dl d-del[^"]*"><span[^>]*>-<\/span>!p\.is_empty\(\)<\/span>/);
    expect(body).toMatch(/class="dl d-add[^"]*"><span[^>]*>\+<\/span>p\.len\(\) (>|&gt;)= 12<\/span>/);
    expect(body).toContain('replaces every occurrence');
  });

  it('shows a Write as creates-or-overwrites with the count of hidden lines', () => {
    const content = Array.from({ length: 25 }, (_, i) => `row ${i + 1}`).join('\n');
    const body = html('Write', { path: 'out/report.txt', content });
    expect(body).toContain('out/report.txt');
    expect(body).toContain('creates or overwrites');
    expect(body).toContain('row 20');
    expect(body).not.toContain('row 21');
    expect(body).toContain('5 more lines');
  });

  it('shows a Bash command and its timeout', () => {
    const body = html('Bash', { command: 'rm -rf target', timeout_ms: 5000 });
    expect(body).toContain('rm -rf target');
    expect(body).toContain('timeout 5000 ms');
  });
});
