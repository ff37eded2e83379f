/** The file system side of `rules pull` / `rules push` (see bundle-files.ts for the layout). */

import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GROUPS_FILE, HEADER_FILE, MANAGED_ENTRIES, type FileTree } from './bundle-files.js';

/** Largest tree `push` reads (the server takes 1 MB at most: this only stops runaway directories). */
const MAX_TREE_BYTES = 16 * 1024 * 1024;

/** Replaces the managed entries of `dir` with `files`; a non-empty `dir` must hold a previous pull's header. */
export async function writeTree(dir: string, files: FileTree): Promise<void> {
  const entries: string[] = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  if (entries.length > 0 && !entries.includes(HEADER_FILE)) {
    throw new Error(`the directory is not empty and holds no ${HEADER_FILE}: pull into an empty directory or a previous pull`);
  }
  for (const entry of MANAGED_ENTRIES) await rm(path.join(dir, entry), { recursive: true, force: true });
  for (const [file, text] of files) {
    const target = path.join(dir, ...file.split('/'));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, text, 'utf8');
  }
}

/** The managed files under `dir`: the header, groups, and the files of each `policies/*` and `flows/*` directory. */
export async function readTree(dir: string): Promise<FileTree> {
  const files: FileTree = new Map();
  let total = 0;
  const add = async (rel: string): Promise<void> => {
    const full = path.join(dir, ...rel.split('/'));
    const size = (await stat(full)).size;
    total += size;
    if (total > MAX_TREE_BYTES) throw new Error(`more than ${MAX_TREE_BYTES} bytes of files: is this a pulled directory?`);
    files.set(rel, await readFile(full, 'utf8'));
  };
  await add(HEADER_FILE);
  if ((await stat(path.join(dir, GROUPS_FILE)).catch(() => null))?.isFile()) await add(GROUPS_FILE);
  for (const kind of ['policies', 'flows']) {
    const bases = await readdir(path.join(dir, kind), { withFileTypes: true }).catch(() => []);
    for (const base of bases) {
      if (!base.isDirectory()) continue;
      for (const f of await readdir(path.join(dir, kind, base.name), { withFileTypes: true })) {
        if (f.isFile() && /\.(?:json|rule)$/.test(f.name)) await add(`${kind}/${base.name}/${f.name}`);
      }
    }
  }
  return files;
}
