import { describe, expect, it } from 'vitest';
import { FORMAT_NAMES, formatChecker } from '../../src/values/index.js';
import { formatNames } from '@arbiter/test-kit/language-doc';

function check(name: string): (s: string) => boolean {
  const f = formatChecker(name);
  if (!f) throw new Error(`no checker for ${name}`);
  return f;
}

/** The formats given a table of cases below. */
const tabled: string[] = [];

function table(name: string, accept: string[], reject: string[]): void {
  tabled.push(name);
  describe(`format "${name}"`, () => {
    const f = check(name);
    it.each(accept)('accepts %j', (s) => {
      expect(f(s)).toBe(true);
    });
    it.each(reject)('rejects %j', (s) => {
      expect(f(s)).toBe(false);
    });
  });
}

describe('FORMAT_NAMES / formatChecker (§7.3.11 [D-format-set])', () => {
  it('lists exactly the JSON Schema names of §7.3.11 (read from docs/LANGUAGE.md)', () => {
    expect([...FORMAT_NAMES]).toEqual(formatNames());
    for (const n of FORMAT_NAMES) expect(typeof formatChecker(n)).toBe('function');
  });
  it('returns null for unknown names (a parse error upstream); names ignore ASCII letter case', () => {
    expect(formatChecker('EMAIL')).toBe(formatChecker('email'));
    expect(formatChecker('Date-Time')).toBe(formatChecker('date-time'));
    for (const n of [
      'postcode',
      'ＥMAIL',
      'iso-time',
      'iso-date-time',
      'uri-reference',
      'idn-email',
      'duration',
      'regex',
      ' date',
      '',
      '__proto__',
      'constructor',
      'toString',
    ]) {
      expect(formatChecker(n), n).toBeNull();
    }
  });
});

table(
  'date',
  ['2024-02-29', '2023-02-28', '2000-02-29', '1970-01-01', '9999-12-31', '0000-01-01'],
  [
    '2023-02-29',
    '1900-02-29',
    '2024-04-31',
    '2024-13-01',
    '2024-00-01',
    '2024-01-00',
    '2024-1-01',
    '24-01-01',
    '2024-01-01T00:00:00Z',
    '2024-01-01 ',
    ' 2024-01-01',
    '2024/01/01',
    '',
    '2024-01-01\n',
    '２０２４-01-01',
  ],
);

table(
  'time',
  [
    '12:34:56',
    '00:00:00',
    '23:59:59',
    '23:59:60',
    '12:00:60',
    '12:34:56.789',
    '12:34:56.1',
    '12:34:56Z',
    '12:34:56z',
    '12:34:56+02:00',
    '12:34:56-05:30',
    '12:34:56.5+23:59',
    '12:34:56-00:00',
  ],
  [
    '24:00:00',
    '12:60:00',
    '12:00:61',
    '12:34',
    '1:02:03',
    '12:34:5',
    '12:34:56.',
    '12:34:56+2:00',
    '12:34:56+0200',
    '12:34:56+02',
    '12:34:56+24:00',
    '12:34:56+02:60',
    '12:34:56 Z',
    '12:34:56ZZ',
    'T12:34:56',
    '12:34:56 ',
    '',
    '12.34.56',
    '12:34:56,5',
  ],
);

table(
  'date-time',
  [
    '2024-03-01T12:34:56Z',
    '2024-03-01t12:34:56z',
    '2024-03-01T12:34:56.789+02:00',
    '2024-02-29T00:00:00-05:30',
    '2016-12-31T23:59:60Z',
    '2024-03-01T12:00:60+01:00',
  ],
  [
    '2024-03-01 12:34:56Z',
    '2024-03-01T12:34:56',
    '2024-03-01T12:34Z',
    '2023-02-29T12:00:00Z',
    '2024-03-01T24:00:00Z',
    '2024-03-01T12:34:56+0200',
    '2024-03-01T12:34:56+02',
    '2024-03-01',
    '2024-03-01TZ',
    '2024-03-01T12:34:56Z ',
    '',
    'T12:34:56Z',
    '2024-03-01_12:34:56Z',
    '2024-3-01T12:34:56Z',
  ],
);

table(
  'email',
  [
    'ops@harbour.example',
    'first.last@example.com',
    'a@b.co',
    "a!#$%&'*+/=?^_`{|}~-@example.org",
    'USER@EXAMPLE.COM',
    'x@sub-domain.example.com',
    '1@2.3',
    `a@${'b'.repeat(63)}.com`,
  ],
  [
    'plainaddress',
    'a@b',
    '@example.com',
    'a@',
    'a@.com',
    'a@example.',
    'a@example..com',
    '.a@example.com',
    'a.@example.com',
    'a..b@example.com',
    '"quoted"@example.com',
    'a@[192.168.0.1]',
    'a b@example.com',
    'a@exa mple.com',
    'a@-example.com',
    'a@example-.com',
    'a@@example.com',
    'a@b@example.com',
    'é@example.com',
    'a@exämple.com',
    `a@${'b'.repeat(64)}.com`,
    'a@example.com\n',
    ' a@example.com',
    '',
  ],
);

table(
  'hostname',
  [
    'localhost',
    'example.com',
    'a.b.c.d',
    'xn--bcher-kva.example',
    '123.example',
    'a-b.c',
    'A.EXAMPLE',
    `${'a'.repeat(63)}.com`,
    `${'a.'.repeat(126)}a` /* 253 characters */,
  ],
  [
    'example.com.',
    '.example.com',
    'a..b',
    '-a.com',
    'a-.com',
    'a_b.com',
    'a b.com',
    '',
    `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(126)}ab` /* 254 characters */,
    'exämple.com',
    'example.com\n',
    '.',
  ],
);

table(
  'ipv4',
  ['0.0.0.0', '127.0.0.1', '192.168.1.1', '255.255.255.255', '10.0.0.10'],
  [
    '010.1.1.1',
    '1.1.1.01',
    '256.1.1.1',
    '1.1.1',
    '1.1.1.1.1',
    '1.1.1.',
    '1..1.1',
    '1.1.1.1 ',
    ' 1.1.1.1',
    '1.1.1.a',
    '0x1.1.1.1',
    '1.1.1.-1',
    '',
    '١.١.١.١',
  ],
);

table(
  'ipv6',
  [
    '::',
    '::1',
    '1::',
    '2001:db8::1',
    '2001:0db8:0000:0000:0000:ff00:0042:8329',
    '2001:DB8::FF00:42:8329',
    'fe80::1',
    '1:2:3:4:5:6:7:8',
    '1::2:3:4:5:6:7',
    '::2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7::',
    '::ffff:192.0.2.128',
    '::192.0.2.128',
    '1:2:3:4:5:6:1.2.3.4',
    '64:ff9b::192.0.2.33',
  ],
  [
    '1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:8:9',
    '1::2::3',
    ':1:2:3:4:5:6:7',
    '1:2:3:4:5:6:7:',
    '12345::',
    'g::1',
    'fe80::1%eth0',
    '[::1]',
    '::ffff:01.2.3.4',
    '::ffff:256.1.1.1',
    '1:2:3:4:5:6:7:1.2.3.4',
    '1.2.3.4',
    ':::',
    '',
    ' ::1',
    '::1 ',
  ],
);

table(
  'uri',
  [
    'https://example.com/path?q=1#frag',
    'mailto:ops@harbour.example',
    'urn:isbn:0451450523',
    'a:b',
    'A+b.c-d:x',
    'http://example.com/%20ok',
    'http://example.com/%aF',
    'file:///etc/hosts',
    'http://例え.jp/パス',
    'x:',
    'ldap://[2001:db8::7]/c=GB',
    'tel:+1-816-555-1212',
    'news:comp.infosystems.www.servers.unix',
  ],
  [
    'example.com',
    '//example.com',
    '/path',
    'http//x',
    '1http://x',
    '+a:b',
    ':b',
    'ht tp://x',
    'http://exa mple.com',
    'http://example.com/\tx',
    'http://example.com/\nx',
    'http://x/%',
    'http://x/%2',
    'http://x/%zz',
    'http://x/%G0',
    'a:\u0000',
    'a:\u007f',
    'a:\u0085',
    'a:\u00a0',
    'a:\u3000',
    'a:\u2028',
    'a:b ',
    ' a:b',
    '',
    'é:b',
    'a_b:c',
  ],
);

table(
  'uuid',
  [
    '123e4567-e89b-12d3-a456-426614174000',
    '123E4567-E89B-12D3-A456-426614174000',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '01890a5d-ac96-774b-bcce-b302099a8057',
  ],
  [
    'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
    'URN:UUID:123e4567-e89b-12d3-a456-426614174000',
    '{123e4567-e89b-12d3-a456-426614174000}',
    '123e4567e89b12d3a456426614174000',
    '123e4567-e89b-12d3-a456-42661417400',
    '123e4567-e89b-12d3-a456-4266141740000',
    '123e4567-e89b-12d3-a456_426614174000',
    'g23e4567-e89b-12d3-a456-426614174000',
    ' 123e4567-e89b-12d3-a456-426614174000',
    '123e4567-e89b-12d3-a456-426614174000\n',
    '',
  ],
);

describe('the cases', () => {
  it('cover every format of §7.3.11', () => {
    expect([...tabled].sort()).toEqual([...formatNames()].sort());
  });
});
