// What a tool call is, from the tool kinds generated from Rust: views draw a call by its kind, never by
// matching a tool's name, so a renamed or new tool (an MCP server's) is drawn by what it does.
import { TOOL_KINDS, type ToolKind } from '../generated/types';

/** The kind of the tool called `name`; a name Canopy does not know is an external tool. */
export function toolKind(name: string): ToolKind {
  // Own keys only: a model may call a tool `constructor` or `toString`.
  return (Object.prototype.hasOwnProperty.call(TOOL_KINDS, name) ? TOOL_KINDS[name] : undefined) ?? 'external';
}

/** The built-in tool that starts a subagent: a subagent's events name no tool, so its call card is
 *  given the name Rust declares for the delegate kind. */
export const DELEGATE_TOOL: string = Object.keys(TOOL_KINDS).find((name) => TOOL_KINDS[name] === 'delegate') ?? '';
