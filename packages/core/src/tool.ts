import { z } from "zod";

/** A tool as an upstream lists it (what the catalogue keeps; never call payloads). */
export const ToolInfo = z.object({
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  outputSchema: z.record(z.string(), z.unknown()).optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});
export type ToolInfo = z.infer<typeof ToolInfo>;
