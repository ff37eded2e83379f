import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/logger.js';
import { memoryLogger } from './helpers.js';

describe('redactUrl', () => {
  it.each([
    ['/mcp?api_key=abc&x=1', '/mcp?api_key=[REDACTED]&x=1'],
    ['/mcp?x=1&api_key=abc', '/mcp?x=1&api_key=[REDACTED]'],
    ['/mcp?API_KEY=abc', '/mcp?API_KEY=[REDACTED]'],
    ['/mcp?api%5Fkey=abc#frag', '/mcp?api%5Fkey=[REDACTED]#frag'],
    ['/mcp?api_key', '/mcp?api_key=[REDACTED]'],
    ['https://h.example/mcp?api_key=a&api_key=b', 'https://h.example/mcp?api_key=[REDACTED]&api_key=[REDACTED]'],
    ['/run?key=abc', '/run?key=abc'],
    ['/run', '/run'],
  ])('%s → %s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });
});

describe('createLogger', () => {
  it('writes JSON lines naming the service', () => {
    const { logger, lines } = memoryLogger('svc');
    logger.info({ n: 1 }, 'hello');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ service: 'svc', n: 1, msg: 'hello', level: 30 });
    expect(typeof lines[0]?.time).toBe('string');
  });

  it('never writes secret headers or the api_key query parameter', () => {
    const { logger, lines } = memoryLogger();
    const headers = { authorization: 'Bearer secret-jwt', 'x-api-key': 'secret-key', 'x-mcp-api-key': 'secret-mcp', accept: 'json' };
    logger.info({ headers });
    logger.info({ req: { method: 'POST', url: '/mcp?api_key=secret-q&x=1', headers } });
    logger.info({ outer: { req: { headers } } });
    logger.info({ url: '/mcp?api_key=secret-top' });
    logger.child({ reqId: 'r1' }).info({ req: { url: '/mcp?api_key=secret-child' } });
    const text = JSON.stringify(lines);
    for (const secret of ['secret-jwt', 'secret-key', 'secret-mcp', 'secret-q', 'secret-top', 'secret-child']) {
      expect(text).not.toContain(secret);
    }
    expect(lines[0]).toMatchObject({ headers: { authorization: '[REDACTED]', accept: 'json' } });
    expect(lines[1]).toMatchObject({ req: { method: 'POST', url: '/mcp?api_key=[REDACTED]&x=1' } });
    expect(lines[4]).toMatchObject({ reqId: 'r1', req: { url: '/mcp?api_key=[REDACTED]' } });
  });
});
