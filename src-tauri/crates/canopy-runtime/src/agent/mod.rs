//! The agent: the one loop every agent runs, in the pieces a change usually touches.
//!
//! - [`session`]: a session's context and how a run ended;
//! - [`build`]: assembling a session's context and tools;
//! - [`budget`]: budgets and their accounting;
//! - [`model_call`]: one model call;
//! - [`dispatch`]: running a turn's tool calls;
//! - [`grounding`]: judging a result's citations by what the agent was shown;
//! - [`run_loop`]: the loop and its phases;
//! - [`main_run`]: one prompt of the main agent, with the optional verification gate.

pub(crate) mod budget;
mod build;
pub(crate) mod dispatch;
mod grounding;
pub(crate) mod main_run;
pub(crate) mod model_call;
pub(crate) mod run_loop;
pub(crate) mod session;

pub(crate) use main_run::run_main;
pub use session::AgentOutcome;
pub(crate) use session::{AgentCtx, AgentCtxParts};
