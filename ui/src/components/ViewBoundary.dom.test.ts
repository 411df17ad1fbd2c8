import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRawSnippet, flushSync, mount, unmount } from 'svelte';
import ViewBoundary from './ViewBoundary.svelte';

// A view's effect that throws (as the file viewer's did on a null element) must not stop every other
// view from updating: the boundary shows what happened, and "Show it again" renders the view anew.
describe('ViewBoundary', () => {
  let app: Record<string, unknown> | null = null;
  afterEach(() => {
    if (app !== null) unmount(app);
    app = null;
    document.body.innerHTML = '';
    vi.restoreAllMocks();
  });

  it('replaces a view whose effect throws by an account of the error, and shows it again on request', () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    let broken = true;
    const children = createRawSnippet(() => ({
      render: () => '<p data-testid="view-body">History</p>',
      setup: () => {
        if (broken) throw new TypeError("null is not an object (evaluating 'body.querySelector')");
      },
    }));
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(ViewBoundary, { target, props: { name: 'History', children } });
    flushSync();
    const error = target.querySelector('[data-testid="view-error"]');
    expect(error?.textContent).toContain('The History view stopped on an error.');
    expect(error?.textContent).toContain("null is not an object (evaluating 'body.querySelector')");
    expect(target.querySelector('[data-testid="view-body"]')).toBeNull();
    expect(console.error).toHaveBeenCalled();

    broken = false;
    (target.querySelector('[data-testid="view-error-retry"]') as HTMLButtonElement).click();
    flushSync();
    expect(target.querySelector('[data-testid="view-error"]')).toBeNull();
    expect(target.querySelector('[data-testid="view-body"]')?.textContent).toBe('History');
  });

  it('renders a healthy view as it is', () => {
    const children = createRawSnippet(() => ({ render: () => '<p data-testid="view-body">Timeline</p>' }));
    const target = document.createElement('div');
    document.body.appendChild(target);
    app = mount(ViewBoundary, { target, props: { name: 'Timeline', children } });
    flushSync();
    expect(target.querySelector('[data-testid="view-body"]')?.textContent).toBe('Timeline');
    expect(target.querySelector('[data-testid="view-error"]')).toBeNull();
  });
});
