//! The stores (stores.ts), handed to the views through Svelte context (set once by App, read by each
//! view) rather than passed down as props. A view takes the domain store it needs:
//! `const { session, notices } = useStores();`.

import { getContext, setContext } from 'svelte';
import type { Stores } from './stores';

export type { Stores } from './stores';

const KEY = Symbol('canopy.stores');

/** Makes `stores` available to every view below the calling component. */
export function provideStores(stores: Stores): Stores {
  return setContext(KEY, stores);
}

/** A `context` map for mounting or rendering a single view in a test. */
export function storesContext(stores: Stores): Map<symbol, Stores> {
  return new Map([[KEY, stores]]);
}

/** The stores, from the nearest App above. */
export function useStores(): Stores {
  const s = getContext<Stores | undefined>(KEY);
  if (s === undefined) throw new Error('no Canopy stores in context: mount views under App (or pass storesContext in a test)');
  return s;
}
