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
