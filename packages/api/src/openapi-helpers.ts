import type { z } from "@hono/zod-openapi";
import { Problem } from "./views";

/** The bearer-token security requirement of authenticated routes. */
export const security = [{ bearer: [] }];

/** A JSON response entry for a route's `responses`. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { "application/json": { schema } },
  description,
});

/** problem+json response entries for these statuses. */
export const problems = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      { content: { "application/problem+json": { schema: Problem } }, description: "Problem" },
    ]),
  );

/** A required JSON request body. */
export const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { content: { "application/json": { schema } }, required: true },
});
