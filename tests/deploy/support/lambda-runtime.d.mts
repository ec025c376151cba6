/** Types of lambda-runtime.mjs (the stand-in of Lambda's Node.js runtime for streaming handlers). */

/** What the Function URL's client gets: the prelude's status, headers and cookies, then the body. */
export interface StreamedResponse {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
  body: string;
  /** The body as the handler wrote it, one entry per write. */
  bodyChunks: string[];
}

export declare const awslambda: typeof globalThis.awslambda;
export declare function installLambdaRuntime(): () => void;
export declare function isStreamingHandler(handler: unknown): boolean;
export declare function invokeStreaming(
  handler: unknown,
  event: unknown,
  context: object,
  options?: { onBody?: (text: string) => void },
): Promise<StreamedResponse>;
