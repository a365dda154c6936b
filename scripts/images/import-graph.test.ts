import { describe, expect, it } from 'vitest';
import { importGraph, packageName, specifiers, topFolders } from './import-graph.ts';

describe('import graph', () => {
  it('finds static, re-export, side-effect and dynamic imports; not type-only ones (erased)', () => {
    const src = `import { a } from './a.ts';\nimport type { T } from "../t.ts";\nexport type { U } from './u.ts';\nimport { type V, w } from '../t.ts';\nexport { b } from './b.ts';\nimport 'side';\nconst m = await import('node:fs');\nimport {\n  x,\n} from '@scope/pkg/sub';\n`;
    expect(specifiers(src)).toEqual(['./a.ts', '../t.ts', './b.ts', 'side', 'node:fs', '@scope/pkg/sub']);
  });

  it('names packages, not paths or builtins', () => {
    expect(['zod', '@scope/pkg/sub', 'undici/x', './a.ts', 'node:fs'].map(packageName)).toEqual(['zod', '@scope/pkg', 'undici', undefined, undefined]);
  });

  it('walks relative imports from the entry', () => {
    const files: Record<string, string> = {
      '/r/app/main.ts': "import { x } from './x.ts';\nimport { y } from '../lib/y.ts';\nimport z from 'zod';",
      '/r/app/x.ts': "import { y } from '../lib/y.ts';",
      '/r/lib/y.ts': "import { Client } from 'undici';",
    };
    const g = importGraph('/r', ['app/main.ts'], (p) => files[p]!);
    expect(g).toEqual({ files: ['app/main.ts', 'app/x.ts', 'lib/y.ts'], packages: ['undici', 'zod'] });
    expect(topFolders(g.files)).toEqual(['app', 'lib']);
  });
});
