import { describe, expect, it } from 'vitest';
import { DELEGATE_TOOL, toolKind } from './toolKind';

describe('toolKind', () => {
  it('gives each built-in tool the kind Rust declares for it', () => {
    expect(['Read', 'Grep', 'Glob', 'TodoWrite'].map(toolKind)).toEqual(['read', 'read', 'read', 'read']);
    expect(toolKind('Edit')).toBe('edit');
    expect(toolKind('Write')).toBe('edit');
    expect(toolKind('Bash')).toBe('execute');
    expect(toolKind('Task')).toBe('delegate');
  });

  it('treats a name Canopy does not know as an external tool, whatever it looks like', () => {
    expect(toolKind('mcp__shell__run')).toBe('external');
    expect(toolKind('bash')).toBe('external');
    expect(toolKind('constructor')).toBe('external');
  });

  it('names the delegate tool by its kind, so a subagent card is the tool Rust says delegates', () => {
    expect(toolKind(DELEGATE_TOOL)).toBe('delegate');
    expect(DELEGATE_TOOL).toBe('Task');
  });
});
