/** PLACEHOLDER (replaced before landing). */
import type { Tool } from "./types";

export function ToolView({ tool }: { tool: Tool; callName: string }) {
  return <h3>{tool.name}</h3>;
}
