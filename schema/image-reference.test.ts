// The test vectors of github.com/distribution/reference (commit 0965666, files regexp_test.go,
// reference_test.go and normalize_test.go), copied as data. That library is
// Copyright The Distribution Authors, licensed under the Apache License, Version 2.0
// (https://www.apache.org/licenses/LICENSE-2.0); the vectors are used here unchanged, except that
// each error is named by the words of our message for it.
import { describe, expect, it } from 'vitest';
import {
  ANCHORED_DOMAIN,
  ANCHORED_IDENTIFIER,
  ANCHORED_NAME,
  parseImage,
  parseNormalizedNamed,
  parseReference,
  REFERENCE,
  referenceString,
  type ReferenceResult,
} from './image-reference.ts';

const F64 = 'f'.repeat(64);
const okRef = (r: ReferenceResult) => {
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.ref;
};
const nameOf = (r: ReferenceResult) => {
  const ref = okRef(r);
  return ref.domain ? `${ref.domain}/${ref.path}` : ref.path;
};

/** regexp_test.go, TestDomainRegexp. */
const DOMAINS: Array<[string, boolean]> = [
  ['test.com', true],
  ['test.com:10304', true],
  ['test.com:http', false],
  ['localhost', true],
  ['localhost:8080', true],
  ['a', true],
  ['a.b', true],
  ['ab.cd.com', true],
  ['a-b.com', true],
  ['-ab.com', false],
  ['ab-.com', false],
  ['ab.c-om', true],
  ['ab.-com', false],
  ['ab.com-', false],
  ['0101.com', true],
  ['001a.com', true],
  ['b.gbc.io:443', true],
  ['b.gbc.io', true],
  ['xn--n3h.com', true],
  ['Asdf.com', true],
  ['192.168.1.1:75050', true],
  ['192.168.1.1:750050', true],
  ['[fd00:1:2::3]:75050', true],
  ['[fd00:1:2::3]75050', false],
  ['[fd00:1:2::3]::75050', false],
  ['[fd00:1:2::3%eth0]:75050', false],
  ['[fd00123123123]:75050', true],
  ['[2001:0db8:85a3:0000:0000:8a2e:0370:7334]:75050', true],
  ['[2001:0db8:85a3:0000:0000:8a2e:0370:7334]:750505', true],
  ['fd00:1:2::3:75050', false],
];

/** regexp_test.go, TestFullNameRegexp: input → [domain, path], or null for no match. */
const NAMES: Array<[string, [string, string] | null | 'match']> = [
  ['', null],
  ['short', ['', 'short']],
  ['simple/name', ['simple', 'name']],
  ['library/ubuntu', ['library', 'ubuntu']],
  ['docker/stevvooe/app', ['docker', 'stevvooe/app']],
  ['aa/aa/aa/aa/aa/aa/aa/aa/aa/bb/bb/bb/bb/bb/bb', ['aa', 'aa/aa/aa/aa/aa/aa/aa/aa/bb/bb/bb/bb/bb/bb']],
  ['aa/aa/bb/bb/bb', ['aa', 'aa/bb/bb/bb']],
  ['a/a/a/a', ['a', 'a/a/a']],
  ['a/a/a/a/', null],
  ['a//a/a', null],
  ['a', ['', 'a']],
  ['a/aa', ['a', 'aa']],
  ['a/aa/a', ['a', 'aa/a']],
  ['foo.com', ['', 'foo.com']],
  ['foo.com/', null],
  ['foo.com:8080/bar', ['foo.com:8080', 'bar']],
  ['foo.com:http/bar', null],
  ['foo.com/bar', ['foo.com', 'bar']],
  ['foo.com/bar/baz', ['foo.com', 'bar/baz']],
  ['localhost:8080/bar', ['localhost:8080', 'bar']],
  ['sub-dom1.foo.com/bar/baz/quux', ['sub-dom1.foo.com', 'bar/baz/quux']],
  ['blog.foo.com/bar/baz', ['blog.foo.com', 'bar/baz']],
  ['a^a', null],
  ['aa/asdf$$^/aa', null],
  ['asdf$$^/aa', null],
  ['aa-a/a', ['aa-a', 'a']],
  ['a/'.repeat(128) + 'a', ['a', 'a/'.repeat(127) + 'a']],
  ['a-/a/a/a', null],
  ['foo.com/a-/a/a', null],
  ['-foo/bar', null],
  ['foo/bar-', null],
  ['foo-/bar', null],
  ['foo/-bar', null],
  ['_foo/bar', null],
  ['foo_bar', ['', 'foo_bar']],
  ['foo_bar.com', ['', 'foo_bar.com']],
  ['foo_bar.com:8080', null],
  ['foo_bar.com:8080/app', null],
  ['foo.com/foo_bar', ['foo.com', 'foo_bar']],
  ['____/____', null],
  ['_docker/_docker', null],
  ['docker_/docker_', null],
  ['b.gcr.io/test.example.com/my-app', ['b.gcr.io', 'test.example.com/my-app']],
  ['xn--n3h.com/myimage', ['xn--n3h.com', 'myimage']],
  ['xn--7o8h.com/myimage', ['xn--7o8h.com', 'myimage']],
  ['example.com/xn--7o8h.com/myimage', ['example.com', 'xn--7o8h.com/myimage']],
  ['example.com/some_separator__underscore/myimage', ['example.com', 'some_separator__underscore/myimage']],
  ['example.com/__underscore/myimage', null],
  ['example.com/..dots/myimage', null],
  ['example.com/.dots/myimage', null],
  ['example.com/nodouble..dots/myimage', null],
  ['docker./docker', null],
  ['.docker/docker', null],
  ['docker-/docker', null],
  ['-docker/docker', null],
  ['do..cker/docker', null],
  ['do__cker:8080/docker', null],
  ['do__cker/docker', ['', 'do__cker/docker']],
  ['registry.io/foo/project--id.module--name.ver---sion--name', ['registry.io', 'foo/project--id.module--name.ver---sion--name']],
  ['Asdf.com/foo/bar', 'match'],
  ['Foo/FarB', null],
];

const D1 = 'sha256:be178c0543eb17f5f3043021c9e5fcf30285e557a4fc309cce97ff9ca6182912';
/** regexp_test.go, TestReferenceRegexp: input → [name, tag, digest] ('' = absent), or null. */
const REFERENCES: Array<[string, [string, string, string] | null]> = [
  ['registry.com:8080/myapp:tag', ['registry.com:8080/myapp', 'tag', '']],
  [`registry.com:8080/myapp@${D1}`, ['registry.com:8080/myapp', '', D1]],
  [`registry.com:8080/myapp:tag2@${D1}`, ['registry.com:8080/myapp', 'tag2', D1]],
  ['registry.com:8080/myapp@sha256:badbadbadbad', null],
  ['registry.com:8080/myapp:invalid~tag', null],
  ['bad_hostname.com:8080/myapp:tag', null],
  [`localhost:8080@${D1}`, ['localhost', '8080', D1]],
  [`localhost:8080/name@${D1}`, ['localhost:8080/name', '', D1]],
  [`localhost:http/name@${D1}`, null],
  [`localhost@${D1}`, ['localhost', '', D1]],
  ['registry.com:8080/myapp@bad', null],
  ['registry.com:8080/myapp@2bad', null],
];

/** regexp_test.go, TestIdentifierRegexp. */
const IDENTIFIERS: Array<[string, boolean]> = [
  ['da304e823d8ca2b9d863a3c897baeb852ba21ea9a9f1414736394ae7fcaf9821', true],
  ['7EC43B381E5AEFE6E04EFB0B3F0693FF2A4A50652D64AEC573905F2DB5889A1C', false],
  ['da304e823d8ca2b9d863a3c897baeb852ba21ea9a9f1414736394ae7fcaf', false],
  ['sha256:da304e823d8ca2b9d863a3c897baeb852ba21ea9a9f1414736394ae7fcaf9821', false],
  ['da304e823d8ca2b9d863a3c897baeb852ba21ea9a9f1414736394ae7fcaf98218482', false],
];

/** The library's errors, by the words of our reasons. */
const ERR = {
  NameEmpty: /at least one component/,
  ReferenceInvalidFormat: /invalid reference format/,
  DigestInvalidLength: /invalid digest length/,
  DigestUnsupported: /unsupported digest algorithm/,
  NameContainsUppercase: /must be lowercase/,
  NameTooLong: /must not be more than 255 characters/,
} as const;

interface Parsed {
  repository: string;
  domain?: string;
  tag?: string;
  digest?: string;
}
/** reference_test.go, TestReferenceParse: input → what Parse yields, or its error. */
const PARSES: Array<[string, Parsed | RegExp]> = [
  ['test_com', { repository: 'test_com' }],
  ['test.com:tag', { repository: 'test.com', tag: 'tag' }],
  ['test.com:5000', { repository: 'test.com', tag: '5000' }],
  ['test.com/repo:tag', { domain: 'test.com', repository: 'test.com/repo', tag: 'tag' }],
  ['test:5000/repo', { domain: 'test:5000', repository: 'test:5000/repo' }],
  ['test:5000/repo:tag', { domain: 'test:5000', repository: 'test:5000/repo', tag: 'tag' }],
  [`test:5000/repo@sha256:${F64}`, { domain: 'test:5000', repository: 'test:5000/repo', digest: `sha256:${F64}` }],
  [`test:5000/repo:tag@sha256:${F64}`, { domain: 'test:5000', repository: 'test:5000/repo', tag: 'tag', digest: `sha256:${F64}` }],
  ['', ERR.NameEmpty],
  [':justtag', ERR.ReferenceInvalidFormat],
  [`@sha256:${F64}`, ERR.ReferenceInvalidFormat],
  ['repo@sha256:ffffffffffffffffffffffffffffffffff', ERR.DigestInvalidLength],
  [`validname@invaliddigest:${F64}`, ERR.DigestUnsupported],
  [`validname@sha512:${'f'.repeat(128)}`, ERR.DigestUnsupported],
  ['Uppercase:tag', ERR.NameContainsUppercase],
  ['test:5000/Uppercase/lowercase:tag', ERR.NameContainsUppercase],
  ['lowercase:Uppercase', { repository: 'lowercase', tag: 'Uppercase' }],
  [`domain/${'a'.repeat(256)}:tag`, ERR.NameTooLong],
  [`${'a/'.repeat(127)}a:tag-puts-this-over-max`, { domain: 'a', repository: `${'a/'.repeat(127)}a`, tag: 'tag-puts-this-over-max' }],
  ['aa/asdf$$^/aa', ERR.ReferenceInvalidFormat],
  ['sub-dom1.foo.com/bar/baz/quux', { domain: 'sub-dom1.foo.com', repository: 'sub-dom1.foo.com/bar/baz/quux' }],
  ['sub-dom1.foo.com/bar/baz/quux:some-long-tag', { domain: 'sub-dom1.foo.com', repository: 'sub-dom1.foo.com/bar/baz/quux', tag: 'some-long-tag' }],
  ['b.gcr.io/test.example.com/my-app:test.example.com', { domain: 'b.gcr.io', repository: 'b.gcr.io/test.example.com/my-app', tag: 'test.example.com' }],
  ['xn--n3h.com/myimage:xn--n3h.com', { domain: 'xn--n3h.com', repository: 'xn--n3h.com/myimage', tag: 'xn--n3h.com' }],
  [`xn--7o8h.com/myimage:xn--7o8h.com@sha256:${F64}`, { domain: 'xn--7o8h.com', repository: 'xn--7o8h.com/myimage', tag: 'xn--7o8h.com', digest: `sha256:${F64}` }],
  ['foo_bar.com:8080', { repository: 'foo_bar.com', tag: '8080' }],
  ['foo/foo_bar.com:8080', { domain: 'foo', repository: 'foo/foo_bar.com', tag: '8080' }],
  ['192.168.1.1', { repository: '192.168.1.1' }],
  ['192.168.1.1:tag', { repository: '192.168.1.1', tag: 'tag' }],
  ['192.168.1.1:5000', { repository: '192.168.1.1', tag: '5000' }],
  ['192.168.1.1/repo', { domain: '192.168.1.1', repository: '192.168.1.1/repo' }],
  ['192.168.1.1:5000/repo', { domain: '192.168.1.1:5000', repository: '192.168.1.1:5000/repo' }],
  ['192.168.1.1:5000/repo:5050', { domain: '192.168.1.1:5000', repository: '192.168.1.1:5000/repo', tag: '5050' }],
  ['[2001:db8::1]', ERR.ReferenceInvalidFormat],
  ['[2001:db8::1]:5000', ERR.ReferenceInvalidFormat],
  ['[2001:db8::1]:tag', ERR.ReferenceInvalidFormat],
  ['[2001:db8::1]/repo', { domain: '[2001:db8::1]', repository: '[2001:db8::1]/repo' }],
  ['[2001:db8:1:2:3:4:5:6]/repo:tag', { domain: '[2001:db8:1:2:3:4:5:6]', repository: '[2001:db8:1:2:3:4:5:6]/repo', tag: 'tag' }],
  ['[2001:db8::1]:5000/repo', { domain: '[2001:db8::1]:5000', repository: '[2001:db8::1]:5000/repo' }],
  ['[2001:db8::1]:5000/repo:tag', { domain: '[2001:db8::1]:5000', repository: '[2001:db8::1]:5000/repo', tag: 'tag' }],
  [`[2001:db8::1]:5000/repo@sha256:${F64}`, { domain: '[2001:db8::1]:5000', repository: '[2001:db8::1]:5000/repo', digest: `sha256:${F64}` }],
  [`[2001:db8::1]:5000/repo:tag@sha256:${F64}`, { domain: '[2001:db8::1]:5000', repository: '[2001:db8::1]:5000/repo', tag: 'tag', digest: `sha256:${F64}` }],
  ['[2001:db8::]:5000/repo', { domain: '[2001:db8::]:5000', repository: '[2001:db8::]:5000/repo' }],
  ['[::1]:5000/repo', { domain: '[::1]:5000', repository: '[::1]:5000/repo' }],
  ['[fe80::1%eth0]:5000/repo', ERR.ReferenceInvalidFormat],
  ['[fe80::1%@invalidzone]:5000/repo', ERR.ReferenceInvalidFormat],
  [`example.com/${'a'.repeat(255)}:tag`, { domain: 'example.com', repository: `example.com/${'a'.repeat(255)}`, tag: 'tag' }],
  // TestSerialization
  ['example.com:8000/named', { domain: 'example.com:8000', repository: 'example.com:8000/named' }],
  ['example.com:8000/named:tagged', { domain: 'example.com:8000', repository: 'example.com:8000/named', tag: 'tagged' }],
  [
    'other.com/named@sha256:1234567890098765432112345667890098765432112345667890098765432112',
    { domain: 'other.com', repository: 'other.com/named', digest: 'sha256:1234567890098765432112345667890098765432112345667890098765432112' },
  ],
];

/** reference_test.go, TestDomainAndPath (names only). */
const DOMAIN_AND_PATH: Array<[string, string, string]> = [
  ['test.com/foo', 'test.com', 'foo'],
  ['test_com/foo', '', 'test_com/foo'],
  ['test:8080/foo', 'test:8080', 'foo'],
  ['test.com:8080/foo', 'test.com:8080', 'foo'],
  ['test-com:8080/foo', 'test-com:8080', 'foo'],
  ['xn--n3h.com:18080/foo', 'xn--n3h.com:18080', 'foo'],
];

/** normalize_test.go, TestValidateReferenceName and TestValidateRemoteName. */
const NORMALIZED_VALID = [
  'docker/docker',
  'library/debian',
  'debian',
  'localhost/library/debian',
  'localhost/debian',
  'LOCALDOMAIN/library/debian',
  'LOCALDOMAIN/debian',
  'docker.io/docker/docker',
  'docker.io/library/debian',
  'docker.io/debian',
  'index.docker.io/docker/docker',
  'index.docker.io/library/debian',
  'index.docker.io/debian',
  '127.0.0.1:5000/docker/docker',
  '127.0.0.1:5000/library/debian',
  '127.0.0.1:5000/debian',
  '192.168.0.1',
  '192.168.0.1:80',
  '192.168.0.1:8/debian',
  '192.168.0.2:25000/debian',
  'thisisthesongthatneverendsitgoesonandonandonthisisthesongthatnev',
  '[fc00::1]:5000/docker',
  '[fc00::1]:5000/docker/docker',
  '[fc00:1:2:3:4:5:6:7]:5000/library/debian',
  'docker.io/1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a',
  'Docker/docker',
  'DOCKER/docker',
  'docker-rules/docker',
  'docker---rules/docker',
  'doc/docker',
  'd/docker',
  'jess/t',
  'dock__er/docker',
];
const NORMALIZED_INVALID = [
  'https://github.com/docker/docker',
  'docker/Docker',
  '-docker',
  '-docker/docker',
  '-docker.io/docker/docker',
  'docker///docker',
  'docker.io/docker/Docker',
  'docker.io/docker///docker',
  '[fc00::1]',
  '[fc00::1]:5000',
  'fc00::1:5000/debian',
  '[fe80::1%eth0]:5000/debian',
  '[2001:db8:3:4::192.0.2.33]:5000/debian',
  '1a3f5e7d9c1b3a5f7e9d1c3b5a7f9e1d3c5b7a9f1e3d5d7c9b1a3f5e7d9c1b3a',
  'docker-/docker',
  '-docker-/docker',
  '____/____',
  '_docker/_docker',
  'dock..er/docker',
  'dock_.er/docker',
  'dock-.er/docker',
  'docker/',
  'this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255_this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255_this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255_this_is_not_a_valid_namespace_because_its_lenth_is_greater_than_255/docker',
];

/** normalize_test.go, TestParseRepositoryInfo: [path, familiar, full, ambiguous, domain]. */
const REPOSITORY_INFO: Array<[string, string, string, string, string]> = [
  ['fooo', 'localhost/fooo', 'localhost/fooo', 'localhost/fooo', 'localhost'],
  ['fooo/bar', 'localhost/fooo/bar', 'localhost/fooo/bar', 'localhost/fooo/bar', 'localhost'],
  ['fooo', 'LOCALDOMAIN/fooo', 'LOCALDOMAIN/fooo', 'LOCALDOMAIN/fooo', 'LOCALDOMAIN'],
  ['fooo/bar', 'LOCALDOMAIN/fooo/bar', 'LOCALDOMAIN/fooo/bar', 'LOCALDOMAIN/fooo/bar', 'LOCALDOMAIN'],
  ['fooo/bar', 'fooo/bar', 'docker.io/fooo/bar', 'index.docker.io/fooo/bar', 'docker.io'],
  ['library/ubuntu', 'ubuntu', 'docker.io/library/ubuntu', 'library/ubuntu', 'docker.io'],
  ['nonlibrary/ubuntu', 'nonlibrary/ubuntu', 'docker.io/nonlibrary/ubuntu', '', 'docker.io'],
  ['other/library', 'other/library', 'docker.io/other/library', '', 'docker.io'],
  ['private/moonbase', '127.0.0.1:8000/private/moonbase', '127.0.0.1:8000/private/moonbase', '', '127.0.0.1:8000'],
  ['privatebase', '127.0.0.1:8000/privatebase', '127.0.0.1:8000/privatebase', '', '127.0.0.1:8000'],
  ['private/moonbase', 'example.com/private/moonbase', 'example.com/private/moonbase', '', 'example.com'],
  ['privatebase', 'example.com/privatebase', 'example.com/privatebase', '', 'example.com'],
  ['private/moonbase', 'example.com:8000/private/moonbase', 'example.com:8000/private/moonbase', '', 'example.com:8000'],
  ['privatebasee', 'example.com:8000/privatebasee', 'example.com:8000/privatebasee', '', 'example.com:8000'],
  ['library/ubuntu-12.04-base', 'ubuntu-12.04-base', 'docker.io/library/ubuntu-12.04-base', 'index.docker.io/library/ubuntu-12.04-base', 'docker.io'],
  ['library/foo', 'foo', 'docker.io/library/foo', 'docker.io/foo', 'docker.io'],
  ['library/foo/bar', 'library/foo/bar', 'docker.io/library/foo/bar', '', 'docker.io'],
  ['store/foo/bar', 'store/foo/bar', 'docker.io/store/foo/bar', '', 'docker.io'],
  ['bar', 'Foo/bar', 'Foo/bar', '', 'Foo'],
  ['bar', 'FOO/bar', 'FOO/bar', '', 'FOO'],
];

/** normalize_test.go, TestNormalizedSplitHostname. */
const NORMALIZED_SPLIT: Array<[string, string, string]> = [
  ['test.com/foo', 'test.com', 'foo'],
  ['test_com/foo', 'docker.io', 'test_com/foo'],
  ['docker/migrator', 'docker.io', 'docker/migrator'],
  ['test.com:8080/foo', 'test.com:8080', 'foo'],
  ['test-com:8080/foo', 'test-com:8080', 'foo'],
  ['foo', 'docker.io', 'library/foo'],
  ['xn--n3h.com/foo', 'xn--n3h.com', 'foo'],
  ['xn--n3h.com:18080/foo', 'xn--n3h.com:18080', 'foo'],
  ['docker.io/foo', 'docker.io', 'library/foo'],
  ['docker.io/library/foo', 'docker.io', 'library/foo'],
  ['docker.io/library/foo/bar', 'docker.io', 'library/foo/bar'],
];

const D2 = 'sha256:dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9c';
const BUSYBOX = '86e0e091d0da6bde2456dbb48306f3956bbeb2eae1b5b9a43045843f69fe4aaa';
/** normalize_test.go, TestParseAnyReference (the named rows) and TestParseReferenceWithTagAndDigest. */
const EQUIVALENT: Array<[string, string]> = [
  ['redis', 'docker.io/library/redis'],
  ['redis:latest', 'docker.io/library/redis:latest'],
  ['docker.io/library/redis:latest', 'docker.io/library/redis:latest'],
  [`redis@${D2}`, `docker.io/library/redis@${D2}`],
  [`docker.io/library/redis@${D2}`, `docker.io/library/redis@${D2}`],
  ['dmcgowan/myapp', 'docker.io/dmcgowan/myapp'],
  ['dmcgowan/myapp:latest', 'docker.io/dmcgowan/myapp:latest'],
  ['docker.io/mcgowan/myapp:latest', 'docker.io/mcgowan/myapp:latest'],
  [`dmcgowan/myapp@${D2}`, `docker.io/dmcgowan/myapp@${D2}`],
  [`docker.io/dmcgowan/myapp@${D2}`, `docker.io/dmcgowan/myapp@${D2}`],
  ['dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9', 'docker.io/library/dbcc1c35ac38df41fd2f5e4130b32ffdb93ebae8b3dbe638c23575912276fc9'],
  ['dbcc1', 'docker.io/library/dbcc1'],
  [`busybox:latest@sha256:${BUSYBOX}`, `docker.io/library/busybox:latest@sha256:${BUSYBOX}`],
];

describe('the grammar (regexp_test.go)', () => {
  it.each(DOMAINS)('domain %s matches: %s', (input, match) => {
    expect(ANCHORED_DOMAIN.test(input)).toBe(match);
  });

  it.each(NAMES)('name %s → %j', (input, want) => {
    const m = ANCHORED_NAME.exec(input);
    if (want === null) expect(m).toBeNull();
    else if (want === 'match') expect(m?.[0]).toBe(input);
    else expect([m?.[1] ?? '', m?.[2]]).toEqual(want);
  });

  it.each(REFERENCES)('reference %s → %j', (input, want) => {
    const m = REFERENCE.exec(input);
    if (want === null) expect(m).toBeNull();
    else expect([m?.[1], m?.[2] ?? '', m?.[3] ?? '']).toEqual(want);
  });

  it.each(IDENTIFIERS)('identifier %s matches: %s', (input, match) => {
    expect(ANCHORED_IDENTIFIER.test(input)).toBe(match);
  });
});

describe('Parse (reference_test.go)', () => {
  it.each(PARSES)('%s', (input, want) => {
    const r = parseReference(input);
    if (want instanceof RegExp) {
      expect(r.ok ? 'accepted' : r.reason).toMatch(want);
      return;
    }
    const ref = okRef(r);
    expect(referenceString(ref)).toBe(input);
    expect(nameOf(r)).toBe(want.repository);
    expect(ref.domain).toBe(want.domain ?? '');
    expect(ref.tag).toBe(want.tag);
    expect(ref.digest).toBe(want.digest);
  });

  it.each(DOMAIN_AND_PATH)('%s: domain %j, path %j', (input, domain, path) => {
    expect(okRef(parseReference(input))).toMatchObject({ domain, path });
  });
});

describe('ParseNormalizedNamed (normalize_test.go)', () => {
  it.each(NORMALIZED_VALID)('accepts %s', (input) => {
    expect(parseNormalizedNamed(input).ok).toBe(true);
  });

  it.each(NORMALIZED_INVALID)('refuses %s', (input) => {
    expect(parseNormalizedNamed(input).ok).toBe(false);
  });

  it.each(REPOSITORY_INFO.flatMap(([path, familiar, full, ambiguous, domain]) => [familiar, full, ...(ambiguous ? [ambiguous] : [])].map((input) => [input, domain, path, full] as const)))(
    '%s is %s / %s (%s)',
    (input, domain, path, full) => {
      const r = parseNormalizedNamed(input);
      expect(okRef(r)).toMatchObject({ domain, path });
      expect(nameOf(r)).toBe(full);
    },
  );

  it.each(NORMALIZED_SPLIT)('%s is %s / %s', (input, domain, path) => {
    expect(okRef(parseNormalizedNamed(input))).toMatchObject({ domain, path });
  });

  it.each(EQUIVALENT)('%s is %s', (input, full) => {
    expect(referenceString(okRef(parseNormalizedNamed(input)))).toBe(full);
  });
});

describe('parseImage: what ModelDock accepts', () => {
  it.each([
    ['Evil/model:1', 'Evil', 'model'],
    ['Registry/team/model:1', 'Registry', 'team/model'],
    ['LOCALHOST/model:1', 'LOCALHOST', 'model'],
    ['GHCR.io/acme/llm', 'GHCR.io', 'acme/llm'],
    ['modeldock/mock-model:0.1.0', 'docker.io', 'modeldock/mock-model'],
    ['index.docker.io/nginx', 'docker.io', 'library/nginx'],
  ])('%s is pulled from %s as %s', (input, domain, path) => {
    expect(okRef(parseImage(input))).toMatchObject({ domain, path });
  });

  it.each([
    // The library finds no domain in these, while the runtime's resolver contacts their first component.
    ['a_b.c/d', /registry part "a_b.c" is not a valid host/],
    ['foo_bar.com/x:1', /registry part "foo_bar.com"/],
    ['reg:123456/model', /registry port 123456 is not 1\.\.65535/],
    ['reg:0/model', /registry port 0/],
    ['Uppercase:tag', /must be lowercase/],
    [F64, /64-character hexadecimal/],
  ])('refuses %s', (input, reason) => {
    const r = parseImage(input);
    expect(r.ok ? 'accepted' : r.reason).toMatch(reason);
  });

  it('every reference it accepts matches the anchored grammar as written (the CRD\'s pattern)', () => {
    const accepted = [...NORMALIZED_VALID, ...PARSES.map(([input]) => input), ...EQUIVALENT.map(([input]) => input), 'Evil/model:1', 'index.docker.io/nginx'].filter((s) => parseImage(s).ok);
    expect(accepted.length).toBeGreaterThan(50);
    for (const input of accepted) expect(REFERENCE.test(input), input).toBe(true);
  });

  it('accepts a port within 1..65535', () => {
    expect(okRef(parseImage('reg:65535/model')).domain).toBe('reg:65535');
    expect(okRef(parseImage('reg:1/model')).domain).toBe('reg:1');
  });

  it.each([
    ['reg:65536/model', 'registry port 65536 is not 1..65535'],
    ['reg:000080/model', 'registry port 000080 is not 1..65535'], // six digits, whatever their value
    ['reg:123456789012345/model', 'registry port 1234567890 is not 1..65535'], // the message quotes 10 digits at most
    ['[::1]:0/model', 'registry port 0 is not 1..65535'], // the port is the one at the end of the host
  ])('refuses %s: %s', (input, reason) => {
    const r = parseImage(input);
    expect(r.ok ? 'accepted' : r.reason).toBe(reason);
  });

  it('a registry part that is not a host is quoted with 100 characters at most', () => {
    const host = `a_b${'x'.repeat(150)}.c`;
    const r = parseImage(`${host}/d`);
    expect(r.ok ? 'accepted' : r.reason).toBe(`the registry part "${host.slice(0, 100)}" is not a valid host[:port]`);
  });

  it.each([
    ['Uppercase:tag', 'repository name (library/Uppercase) must be lowercase'],
    ['fooB', 'repository name (library/fooB) must be lowercase'], // no tag: the whole name is checked
  ])('an upper-case repository is named in the refusal, the tag not part of it: %s', (input, reason) => {
    const r = parseImage(input);
    expect(r.ok ? 'accepted' : r.reason).toBe(reason);
  });

  it('a tag may be upper-case, right after a one-character repository', () => {
    expect(okRef(parseImage('reg.io/a:Tag'))).toEqual({ domain: 'reg.io', path: 'a', tag: 'Tag' });
  });
});

describe('parseReference: the edges of its refusals and of what it returns', () => {
  it.each([
    ['a b', 'invalid reference format'],
    ['A B', 'invalid reference format'],
    ['ab/Cd', 'repository name must be lowercase'],
  ])('%s: %s', (input, reason) => {
    const r = parseReference(input);
    expect(r.ok ? 'accepted' : r.reason).toBe(reason);
  });

  it('a reference without a tag or digest has neither key', () => {
    expect(Object.keys(okRef(parseReference('ghcr.io/acme/llm')))).toEqual(['domain', 'path']);
  });
});
