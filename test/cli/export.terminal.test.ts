// `coldtrack-export` on a terminal: its progress bar is its own (the package has no dependencies),
// one status line redrawn in place on stderr. Run under a real pseudo-terminal (util-linux's
// `script`), the command must draw the bar (carriage return and erase-line, filled and empty
// cells, the counts), end with the completion line, give the cursor back, and still export the
// unit exactly; run again, it must say only that the export is complete, no bar left above it.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { nodeArgs } from '../helpers/entry.js';
import { createExportWorld, databaseHourly, fileRecords, YEAR } from '../client/world.js';

const shellWord = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

t.test('on a terminal: a bar redrawn in place, then the completion line', async (t) => {
  const world = await createExportWorld(t);
  const outDir = await mkdtemp(join(tmpdir(), 'coldtrack-export-tty-'));
  t.teardown(() => rm(outDir, { recursive: true, force: true }));
  const [unit] = world.unitIds as [number];
  const command = [
    process.execPath,
    ...nodeArgs('client/src/cli/export.ts'),
    '--base-url',
    world.baseUrl,
    '--from',
    YEAR.from,
    '--to',
    YEAR.to,
    '--units',
    String(unit),
    '--page-size',
    '500',
    '--out',
    outDir,
  ];
  // script gives the command a pseudo-terminal for stdin, stdout and stderr, and copies it to stdout
  const onTerminal = () =>
    new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        'script',
        ['-qefc', command.map(shellWord).join(' '), '/dev/null'],
        {
          env: { ...process.env, COLDTRACK_TOKEN: world.token },
          timeout: 120_000,
          maxBuffer: 16 << 20,
        },
        (error, stdout) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: stdout }),
      );
    });
  const { code, output } = await onTerminal();
  t.equal(code, 0, `exit 0${code ? `: ${output.slice(-500)}` : ''}`);
  // the escape character spelled out, so the patterns below read (and lint) as text
  const shown = output.replaceAll('\u001b', '<ESC>');
  t.match(shown, /\r<ESC>\[2K[\u2588\u2591]{30} \d+% \| [\d,]+\/(\?|~[\d,]+) records \| [\d,]+ pages/, 'the bar, redrawn in place');
  // the terminal script makes is 80 columns: a longer bar would wrap and could not be redrawn
  const draws = output
    .split('\r\u001b[2K')
    .slice(1)
    .map((draw) => draw.split(/\r?\n/)[0]!);
  t.ok(draws.length >= 10 && draws.every((draw) => draw.length <= 79), `${draws.length} draws, none wider than the terminal`);
  t.match(draws.at(-1), /^[\u2588\u2591]{30} \d+% \| 17,520\/~[\d,]+ records \| [\d,]+ pages/, 'drawn a last time with every record');
  t.match(output, /export complete: 17,520 records in 1 files/, 'the completion line');
  t.ok(shown.includes('<ESC>[?25l'), 'the cursor hidden while the bar is drawn');
  t.ok(shown.includes('<ESC>[?25h'), 'and shown again');
  const { count, checksum } = await databaseHourly(world.db, unit);
  t.same(fileRecords(join(outDir, `cooling-unit-${unit}.csv`), 'csv').checksum, checksum, `the unit's ${count} hourly rows exactly`);

  // the same command again: nothing to do, and no bar left on the screen above its one line
  const again = await onTerminal();
  t.equal(again.code, 0, `a re-run exits 0${again.code ? `: ${again.output.slice(-500)}` : ''}`);
  // what is left on screen: the output after the bar's last erase (or all of it, when none was drawn)
  const screen = again.output.split('\r\u001b[2K').at(-1)!.replaceAll('\u001b', '<ESC>');
  t.match(
    screen,
    /^(<ESC>\[\?25l)?<ESC>\[\?25hexport already complete in [^\n]*nothing to do\r?\n$/,
    'a re-run: only that it is complete, the cursor shown again',
  );
});
