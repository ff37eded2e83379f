/**
 * Route option for replies that came over the bus: `Bus.request` has already parsed them with the
 * same zod schema the route declares (unknown keys stripped), so the route keeps the schema for
 * validation of its input and for OpenAPI but serializes the body without parsing it a second time
 * on the hot path. Problem bodies built by `problem.ts` are plain JSON too.
 */
export const busValidatedReply = {
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
} as const;
