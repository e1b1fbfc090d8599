// A yes/no question on the terminal before a run changes something (the loadtest creating tokens):
// anything but y or yes is no, and so is Ctrl-C at the prompt. The question goes to stderr, so
// stdout keeps only the report.
import { createInterface } from 'node:readline';

export function confirm(question: string): Promise<boolean> {
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  return new Promise((resolve) => {
    const answer = (yes: boolean) => {
      prompt.close();
      resolve(yes);
    };
    prompt.on('SIGINT', () => {
      process.stderr.write('\n');
      answer(false);
    });
    prompt.question(`${question} [y/N] `, (text) => answer(/^y(es)?$/i.test(text.trim())));
  });
}
