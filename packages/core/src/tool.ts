import { z } from "zod";

/**
 * A tool as an upstream lists it, whole: besides the fields named here, whatever else the upstream says
 * about it (`_meta` such as MCP Apps' `ui.resourceUri`, `icons`, `execution`) is kept and passed on.
 */
export const ToolInfo = z.looseObject({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});
export type ToolInfo = z.infer<typeof ToolInfo>;

/** True when the upstream says the tool runs only as a task (`execution.taskSupport: "required"`). */
export function requiresTask(tool: ToolInfo | undefined): boolean {
  const execution = tool?.execution as { taskSupport?: unknown } | undefined;
  return execution?.taskSupport === "required";
}

/**
 * The tool as the gateway lists it to callers: whole, except that one the upstream runs only as a
 * task is listed as plainly callable (its `taskSupport` left out: the gateway runs the task on the
 * upstream and answers its result), since callers' task requests are not passed on.
 */
export function asListed(tool: ToolInfo): ToolInfo {
  if (!requiresTask(tool)) return tool;
  const { taskSupport: _required, ...execution } = tool.execution as Record<string, unknown>;
  const { execution: _execution, ...rest } = tool;
  return (Object.keys(execution).length > 0 ? { ...rest, execution } : rest) as ToolInfo;
}
