/** agree's and map's answer: its Markdown on stdout and into --out, its JSON document into --json. */
import { writeOutput } from '../output/output.ts';

export function sayAnswer(md: string, o: { out?: string; json?: string }, doc: () => object): void {
  process.stdout.write(md);
  if (o.out) writeOutput(o.out, md);
  if (o.json) writeOutput(o.json, `${JSON.stringify(doc(), null, 2)}\n`);
}
