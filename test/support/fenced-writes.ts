// Which exported functions of the reservation controller's modules write to the ledger, and which of
// those are fenced, read from the source itself (TypeScript's parser, no type check): a function
// writes when its body holds an UPDATE/INSERT/DELETE/REPLACE statement or calls a function that
// writes; it is fenced when its body uses FENCE (ledger/fence.ts) or calls a fenced function.
// The fencing suite uses this to fail on a write that has no stale-epoch case, and on a new
// write that is not fenced at all.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../../scripts/testenv/stack.ts';

export interface WriteFunction {
  /** `<module>.<function>`, e.g. `transitions.markReady` (module = file name without .ts). */
  name: string;
  fenced: boolean;
}

const SQL_WRITE = /^\s*(UPDATE|INSERT|DELETE|REPLACE)\b/i;

interface Scanned {
  name: string;
  direct: { writes: boolean; fenced: boolean };
  calls: Set<string>;
  exported: boolean;
}

function scanFile(file: string, module: string): Scanned[] {
  const src = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: Scanned[] = [];
  const add = (name: string, body: ts.Node, exported: boolean) => {
    const s: Scanned = { name: `${module}.${name}`, direct: { writes: false, fenced: false }, calls: new Set(), exported };
    const visit = (n: ts.Node): void => {
      if (ts.isIdentifier(n) && n.text === 'FENCE') s.direct.fenced = true;
      if ((ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isStringLiteral(n)) && SQL_WRITE.test(n.text)) s.direct.writes = true;
      if (ts.isCallExpression(n) && ts.isIdentifier(n.expression)) s.calls.add(n.expression.text);
      ts.forEachChild(n, visit);
    };
    visit(body);
    out.push(s);
  };
  for (const st of src.statements) {
    const exported = ts.getModifiers(st as ts.HasModifiers)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
    if (ts.isFunctionDeclaration(st) && st.name && st.body) add(st.name.text, st.body, exported);
    if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))) {
          add(d.name.text, d.initializer, exported);
        }
      }
    }
  }
  return out;
}

/** Every exported function of the statement modules of `dir` (default controller/reservation/, tests excluded) that writes to the ledger. */
export function ledgerWriteFunctions(dir = join(repoRoot, 'controller/reservation')): WriteFunction[] {
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .flatMap((f) => scanFile(join(dir, f), f.slice(0, -3)));
  // Calls are by bare name (function names are unique across these modules): propagate to a fixpoint.
  const byBare = new Map(all.map((s) => [s.name.split('.')[1]!, s]));
  const writes = new Set(all.filter((s) => s.direct.writes).map((s) => s.name));
  const fenced = new Set(all.filter((s) => s.direct.fenced).map((s) => s.name));
  for (let changed = true; changed; ) {
    changed = false;
    for (const s of all) {
      for (const c of s.calls) {
        const callee = byBare.get(c);
        if (!callee || callee === s) continue;
        if (writes.has(callee.name) && !writes.has(s.name)) changed = Boolean(writes.add(s.name));
        if (fenced.has(callee.name) && !fenced.has(s.name)) changed = Boolean(fenced.add(s.name));
      }
    }
  }
  // Only the modules that hold SQL of their own are statement modules (reconcile.ts and setup.ts call them).
  const statementModules = new Set(all.filter((s) => s.direct.writes).map((s) => s.name.split('.')[0]));
  return all
    .filter((s) => s.exported && writes.has(s.name) && statementModules.has(s.name.split('.')[0]))
    .map((s) => ({ name: s.name, fenced: fenced.has(s.name) }));
}
