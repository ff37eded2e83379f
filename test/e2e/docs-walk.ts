/**
 * Runs the shell blocks of a Markdown document as a walk-through: each `sh` block's commands in
 * order, in one bash process (`set -euo pipefail`, so a variable nobody set or a failing command
 * stops the walk), and checks what each command printed against the `# …` lines right under it.
 *
 * A step is a run of command lines followed, with no blank line between, by comment lines: those
 * comment lines are the shape of the output (`…` stands for anything, whitespace is loose). Comment
 * lines after a blank line, or before any command, are prose and are not checked.
 */
import { spawn } from 'node:child_process';
import { Lexer } from 'marked';

export interface Step {
  /** 1-based number of the `sh` block in the document. */
  block: number;
  /** The command lines, as written. */
  command: string;
  /** The expected output, comment markers removed; absent when the document shows none. */
  shape?: string;
}

/** The steps of every fenced block whose language is `sh`, in document order. */
export function shellSteps(markdown: string): Step[] {
  const steps: Step[] = [];
  let block = 0;
  for (const token of Lexer.lex(markdown)) {
    if (token.type !== 'code' || token.lang !== 'sh') continue;
    block += 1;
    let command: string[] = [];
    let shape: string[] = [];
    const flush = () => {
      if (command.length > 0) steps.push({ block, command: command.join('\n'), ...(shape.length > 0 ? { shape: shape.join('\n') } : {}) });
      command = [];
      shape = [];
    };
    for (const line of (token.text as string).split('\n')) {
      if (line.trim() === '') {
        flush();
      } else if (line.trimStart().startsWith('#')) {
        if (command.length > 0) shape.push(line.trimStart().replace(/^#\s?/, ''));
      } else {
        if (shape.length > 0) flush();
        command.push(line);
      }
    }
    flush();
  }
  return steps;
}

/** Whether `output` has the shape `shape`: `…` matches anything, any run of whitespace matches any (or none). */
export function matchesShape(shape: string, output: string): boolean {
  const pattern = shape
    .trim()
    .split(/(…|\s+)/)
    .map((part) => {
      if (part === '…') return '[\\s\\S]*?';
      if (/^\s+$/.test(part)) return '\\s*';
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${pattern}$`).test(output.trim());
}

export interface WalkResult {
  /** Output of each step that ran to its end, by index into the steps. */
  outputs: string[];
  /** Index of the step that failed (non-zero exit), when one did, and what it printed before. */
  failedStep?: number;
  failedOutput?: string;
  exitCode: number;
  stderr: string;
}

const marker = (i: number) => `@@walk-step-${i}@@`;

/** Runs the steps in one `bash` (`set -euo pipefail`) in `cwd` with `env`; outputs are split per step. */
export async function runSteps(
  steps: readonly Step[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<WalkResult> {
  const script = ['set -euo pipefail', ...steps.flatMap((s, i) => [s.command, `printf '\\n${marker(i)}\\n'`])].join('\n');
  const child = spawn('bash', ['-c', script], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const exitCode = await new Promise<number>((resolve) => child.once('close', (code) => resolve(code ?? -1)));
  clearTimeout(timer);
  const outputs: string[] = [];
  let rest = stdout;
  for (let i = 0; i < steps.length; i++) {
    const at = rest.indexOf(`\n${marker(i)}\n`);
    if (at < 0) break;
    outputs.push(rest.slice(0, at));
    rest = rest.slice(at + marker(i).length + 2);
  }
  return { outputs, exitCode, stderr, ...(exitCode !== 0 ? { failedStep: outputs.length, failedOutput: rest } : {}) };
}
