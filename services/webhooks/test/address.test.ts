/**
 * Which addresses a delivery may reach (docs/webhooks.md): unspecified, loopback, private (RFC 1918
 * and ULA), link-local, CGNAT and the cloud metadata addresses are refused, in IPv4, IPv6 and
 * IPv4-mapped forms; public ones pass. A host name is resolved at delivery time and refused when
 * it resolves to a refused address. Also the backoff's bounds and what an answer means.
 */
import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isPublicAddress, resolveTarget } from '../src/address.js';
import { backoffMs, outcomeOf } from '../src/dispatcher.js';

describe('endpoint addresses', () => {
  it('refuses loopback, private, link-local, CGNAT, unspecified and metadata addresses; passes public ones', () => {
    const refused = [
      '127.0.0.1',
      '127.8.9.10',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '169.254.1.1',
      '100.64.0.1',
      '100.127.255.254',
      '0.0.0.0',
      '::',
      '::1',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
    ];
    for (const a of refused) expect([a, isPublicAddress(a)]).toEqual([a, false]);
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect([a, isPublicAddress(a)]).toEqual([a, true]);
    }
  });

  it('checks URLs: https unless http is allowed, no credentials, IP literals allowed only when public', () => {
    const strict = { allowHttp: false, allowPrivate: false };
    expect(checkEndpointUrl('https://hooks.example.com/x?y=1', strict).host).toBe('hooks.example.com');
    expect(() => checkEndpointUrl('http://hooks.example.com/', strict)).toThrow(/must use https/);
    expect(checkEndpointUrl('http://hooks.example.com/', { allowHttp: true, allowPrivate: false }).protocol).toBe('http:');
    expect(() => checkEndpointUrl('https://10.0.0.1/', strict)).toThrow(/private/);
    expect(checkEndpointUrl('https://10.0.0.1/', { allowHttp: false, allowPrivate: true }).hostname).toBe('10.0.0.1');
    expect(() => checkEndpointUrl('//x', strict)).toThrow(/absolute URL/);
    expect(() => checkEndpointUrl('https://a:b@x.example.com/', strict)).toThrow(/credentials/);
  });

  it('resolves a host name at delivery time and refuses it when it resolves to a refused address', async () => {
    await expect(resolveTarget('https://localhost/hook', { allowHttp: false, allowPrivate: false })).rejects.toThrow(
      /`localhost` resolves to (127\.0\.0\.1|::1)/,
    );
    const allowed = await resolveTarget('https://localhost/hook', { allowHttp: false, allowPrivate: true });
    expect(['127.0.0.1', '::1']).toContain(allowed.address);
  });
});

describe('retries', () => {
  it('doubles the wait from the base up to the cap, with jitter between half and all of it', () => {
    expect(backoffMs(1, 1000, 60_000, () => 1)).toBe(1000);
    expect(backoffMs(3, 1000, 60_000, () => 1)).toBe(4000);
    expect(backoffMs(3, 1000, 60_000, () => 0)).toBe(2000);
    expect(backoffMs(30, 1000, 60_000, () => 1)).toBe(60_000);
    expect(backoffMs(1000, 1000, 60_000, () => 0.5)).toBe(45_000);
  });

  it('delivers on 2xx, stops on 410 and retries everything else (3xx redirects included: never followed)', () => {
    const r = (statusCode: number | null) => ({ statusCode, response: null, durationMs: 1, error: null });
    expect([200, 204, 299].map((s) => outcomeOf(r(s)))).toEqual(['delivered', 'delivered', 'delivered']);
    expect(outcomeOf(r(410))).toBe('gone');
    expect([301, 302, 400, 404, 429, 500, 503, null].map((s) => outcomeOf(r(s)))).toEqual(Array(8).fill('retry'));
  });
});
