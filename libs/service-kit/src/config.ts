import { z } from 'zod';

/** Log levels pino accepts, plus `silent`. */
export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Settings every service reads (DESIGN.md §1 table). Extend it with a service's own variables. */
export const BaseConfig = z.object({
  NATS_URL: z.url().default('nats://127.0.0.1:4222'),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/policy_service'),
  NATS_SUBJECT_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'must be dot-separated subject tokens without wildcards')
    .default('arbiter'),
  LOG_LEVEL: LogLevel.default('info'),
});
export type BaseConfig = z.infer<typeof BaseConfig>;

/** Thrown by {@link loadConfig}; names every bad variable in one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  constructor(
    message: string,
    readonly variables: string[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Reads `schema` from the environment: typed, defaults applied. An empty variable counts as unset,
 * so `FOO=` falls back to the default.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = schema.safeParse(present);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => ({ variable: i.path.join('.'), message: i.message }));
  const detail = problems.map((p) => `${p.variable}: ${p.message}`).join('; ');
  throw new ConfigError(`invalid configuration: ${detail}`, [...new Set(problems.map((p) => p.variable))], {
    cause: parsed.error,
  });
}
