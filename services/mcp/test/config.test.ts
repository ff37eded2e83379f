import { describe, expect, it } from 'vitest';
import { McpConfig } from '../src/config.js';

describe('McpConfig', () => {
  it('opens no port of its own unless MCP_HTTP_PORT is set (empty counts as unset)', () => {
    expect(McpConfig.parse({}).MCP_HTTP_PORT).toBeUndefined();
    expect(McpConfig.parse({ MCP_HTTP_PORT: '' }).MCP_HTTP_PORT).toBeUndefined();
    expect(McpConfig.parse({ MCP_HTTP_PORT: '8080' }).MCP_HTTP_PORT).toBe(8080);
    expect(McpConfig.parse({ MCP_HTTP_PORT: '0' }).MCP_HTTP_PORT).toBe(0);
    expect(() => McpConfig.parse({ MCP_HTTP_PORT: '70000' })).toThrow();
  });

  it("reads the gateway's key-authentication settings with the gateway's defaults", () => {
    const config = McpConfig.parse({ RATE_LIMIT_WINDOW: '30 seconds' });
    expect(config.RATE_LIMIT_WINDOW).toBe(30_000);
    expect(config.RATE_LIMIT_MAX).toBe(6000);
    expect(config.BODY_LIMIT_BYTES).toBe(1024 * 1024);
    expect(config.API_KEY_CACHE_TTL_SECONDS).toBe(60);
    expect(config.TRUST_PROXY).toBe(false);
    expect(McpConfig.parse({ TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
  });
});
