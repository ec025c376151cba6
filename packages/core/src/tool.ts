import { z } from "zod";

/**
 * A tool as an upstream lists it, kept whole (`_meta`, `icons` and any newer field too): what the
 * catalogue keeps; never call payloads.
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
