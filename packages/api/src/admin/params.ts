import { z } from "@hono/zod-openapi";

/** The `{id}` of a server's admin routes: its id or name. */
export const IdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(128)
    .openapi({ description: "Server id or name", param: { name: "id", in: "path" } }),
});
