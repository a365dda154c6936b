import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ambiguity } from './unambiguous-json.ts';

describe('ambiguity', () => {
  it.each([
    ['{"a":1,"a":2}', /duplicate key "a" \(at \$\)/],
    ['{"a":{"b":1,"c":{"d":1,"d":1}}}', /duplicate key "d" \(at \$\.a\.c\)/],
    ['[{"x":1},{"y":1,"y":2}]', /duplicate key "y" \(at \$\[\]\)/],
    ['{"__proto__":{}}', /"__proto__" is not allowed/],
    ['{"a":[{"constructor":1}]}', /"constructor" is not allowed/],
    ['{"prototype":1}', /"prototype" is not allowed/],
    ['{"\\u005f_proto__":1}', /"__proto__" is not allowed/],
    ['{"a\\"b":1,"a\\"b":2}', /duplicate key "a\\"b"/],
  ])('%s', (text, problem) => {
    expect(ambiguity(text)).toMatch(problem);
  });

  it.each([
    ['{"a":1,"b":{"a":1}}'],
    ['{"a":"__proto__","b":["constructor","a","a"]}'],
    ['{"a":"x,\\"a\\":1","b":"{"}'],
    ['[1,2,{"a":[{"a":1}]}]'],
    ['"just a string"'],
  ])('accepts %s', (text) => {
    expect(ambiguity(text)).toBeUndefined();
  });

  it('never flags what JSON.stringify writes (no duplicates possible), whatever the values', () => {
    const safe = fc.jsonValue().filter((v) => !JSON.stringify(v).match(/"(__proto__|constructor|prototype)":/));
    fc.assert(fc.property(safe, (v) => ambiguity(JSON.stringify(v)) === undefined), { numRuns: 500 });
  });

  it('flags a key repeated at any depth of a generated document', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.jsonValue(), { minKeys: 1 }), fc.integer({ min: 0, max: 3 }), (obj, depth) => {
        const [k] = Object.keys(obj);
        fc.pre(k !== undefined && !['__proto__', 'constructor', 'prototype'].includes(k));
        let text = `{${JSON.stringify(k)}:1,${JSON.stringify(obj).slice(1)}`; // k twice at the top
        for (let i = 0; i < depth; i++) text = `{"n${i}":${text}}`;
        return ambiguity(text) !== undefined;
      }),
      { numRuns: 300 },
    );
  });
});
