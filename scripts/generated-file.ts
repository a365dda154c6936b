// A checked-in generated file: read it, and the command line every generator shares
//   node scripts/gen-X.ts           write the file
//   node scripts/gen-X.ts --check   exit 1 when the checked-in file differs from the output
import { readFileSync, writeFileSync } from 'node:fs';

/** The checked-in file, or '' when there is none. */
export function checkedIn(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export function generatorMain(file: string, want: string, source: string, script: string): void {
  if (process.argv.includes('--check')) {
    if (checkedIn(file) !== want) {
      console.error(`${file} is out of date with ${source}: run \`npm run ${script}\` and commit it.`);
      process.exit(1);
    }
    console.log(`${file} is current.`);
  } else {
    writeFileSync(file, want);
    console.log(`wrote ${file}`);
  }
}
