//! The notices domain: things to tell the person once (startup warnings, a project switched from the
//! command line, a run's notes), each dismissible. `CANOPY_*` environment overrides, one line per
//! overridden setting (each prefixed with the generated `ENV_OVERRIDE_WARNING`), are gathered into a single notice that unfolds to the list: seven separate
//! banners took a third of a 1280×800 window. Also the one error toast: the last thing that failed
//! (any store or view reports it here), until dismissed or replaced.

export interface Notice {
  id: number;
  kind: 'warning' | 'info';
  text: string;
  /** A grouped notice (the environment overrides): the lines it unfolds to; `text` is its one-line summary. */
  lines?: string[];
}

import { ENV_OVERRIDE_WARNING } from '../generated/constants';
import { toApiError } from './errors';

/** The override a startup warning reports (`main.model = … (from CANOPY_MAIN_MODEL)`), or null. */
export function envOverride(warning: string): string | null {
  return warning.startsWith(ENV_OVERRIDE_WARNING) ? warning.slice(ENV_OVERRIDE_WARNING.length) : null;
}

/** One-line summary of the grouped override notice. */
export function envOverrideSummary(n: number): string {
  return `${n} environment override${n === 1 ? '' : 's'} in effect for runs (CANOPY_* variables, never saved)`;
}

export class NoticeStore {
  items = $state<Notice[]>([]);
  /** The error toast's text (null: none shown). */
  error = $state<string | null>(null);
  private nextId = 0;

  /** Shows what went wrong in the error toast. */
  fail(e: unknown): void {
    this.error = toApiError(e).message;
  }

  notify(kind: Notice['kind'], text: string): void {
    // The same project opened again would repeat its warning word for word.
    if (this.items.some((n) => n.text === text)) return;
    this.nextId += 1;
    this.items = [...this.items, { id: this.nextId, kind, text }];
  }

  /** Startup warnings: each its own notice, except the environment overrides, which become one. */
  startupWarnings(warnings: readonly string[]): void {
    const overrides: string[] = [];
    for (const w of warnings) {
      const o = envOverride(w);
      if (o !== null) overrides.push(o);
      else this.notify('warning', w);
    }
    if (overrides.length === 0) return;
    const group = this.items.find((n) => n.lines !== undefined);
    const lines = [...(group?.lines ?? []), ...overrides.filter((o) => !(group?.lines ?? []).includes(o))];
    if (group !== undefined) {
      this.items = this.items.map((n) => (n === group ? { ...n, text: envOverrideSummary(lines.length), lines } : n));
      return;
    }
    this.nextId += 1;
    this.items = [...this.items, { id: this.nextId, kind: 'warning', text: envOverrideSummary(lines.length), lines }];
  }

  dismiss(id: number): void {
    this.items = this.items.filter((n) => n.id !== id);
  }
}
