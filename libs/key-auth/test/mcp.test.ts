import { ArbiterError } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { mcpKeyOf, mcpMessageCount, mcpRequestHeaders, mcpResponseHeaders, rateLimitHeaders } from '../src/index.js';

describe('mcpKeyOf', () => {
  it('takes x-mcp-api-key first, then x-api-key, then the api_key query parameter', () => {
    expect(mcpKeyOf({ 'x-mcp-api-key': 'a', 'x-api-key': 'b' }, { api_key: 'c' })).toBe('a');
    expect(mcpKeyOf({ 'x-api-key': 'b' }, { api_key: 'c' })).toBe('b');
    expect(mcpKeyOf({}, { api_key: 'c' })).toBe('c');
    expect(mcpKeyOf({ 'x-mcp-api-key': '' }, { api_key: 'c' })).toBe('c');
  });

  it('refuses no key, and a key sent twice in one source, as unauthenticated', () => {
    const none = (() => {
      try {
        return mcpKeyOf({}, undefined);
      } catch (err) {
        return err;
      }
    })();
    expect(none).toBeInstanceOf(ArbiterError);
    expect((none as ArbiterError).code).toBe('unauthenticated');
    expect(() => mcpKeyOf({ 'x-mcp-api-key': ['a', 'b'] }, {})).toThrow(/exactly one API key/);
  });
});

describe('MCP exchange helpers', () => {
  it('counts each message of a batch', () => {
    expect(mcpMessageCount([{}, {}, {}])).toBe(3);
    expect(mcpMessageCount({ jsonrpc: '2.0' })).toBe(1);
  });

  it('carries the MCP headers and never the credentials', () => {
    const headers = mcpRequestHeaders({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-mcp-api-key': 'secret',
      'x-api-key': 'secret',
      authorization: 'Bearer x',
      'mcp-protocol-version': ['a', 'b'],
    });
    expect(headers).toEqual({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    expect(mcpResponseHeaders({ 'content-type': 'application/json', allow: 'POST', 'set-cookie': 'x' })).toEqual({
      'content-type': 'application/json',
      allow: 'POST',
    });
  });

  it('gives the rate-limit headers of a count, never a negative remainder', () => {
    expect(rateLimitHeaders({ current: 7, ttl: 1500, max: 5 })).toEqual({
      'x-ratelimit-limit': 5,
      'x-ratelimit-remaining': 0,
      'x-ratelimit-reset': 2,
    });
  });
});
