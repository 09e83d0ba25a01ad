// Parses every ```mermaid block of the markdown files given on the command line with mermaid, the
// library GitHub and GitLab render them with, so a diagram that would show as an error box on a forge
// fails CI instead. mermaid needs a DOM even to parse; jsdom provides one.
import { JSDOM } from 'jsdom';
import fs from 'fs';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

let diagrams = 0;
let broken = 0;
for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, 'utf8');
  for (const match of text.matchAll(/```mermaid\n([\s\S]*?)```/g)) {
    diagrams++;
    const line = text.slice(0, match.index).split('\n').length;
    try {
      await mermaid.parse(match[1]);
    } catch (error) {
      broken++;
      console.log(`${file}:${line}: ${String(error.message ?? error).split('\n').slice(0, 3).join(' | ')}`);
    }
  }
}
console.log(`verify-mermaid: ${diagrams} diagram(s), ${broken} broken`);
process.exit(broken ? 1 : 0);
