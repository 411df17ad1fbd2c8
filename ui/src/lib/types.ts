//! The command-contract types of docs/commands.md. Every type comes from the generated file (ts-rs, from
//! the Rust side); this module adds only the channel callback, and passes on the generated preset list.

export type * from '../generated/types';
import type { TraceRecord } from '../generated/types';

/** The presets come from Rust with the other generated constants. */
export { PRESETS } from '../generated/constants';

export type OnEvents = (batch: TraceRecord[]) => void;
