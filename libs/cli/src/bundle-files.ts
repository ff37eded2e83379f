/**
 * The files `rules pull` writes and `rules push` reads: an export bundle of Arbiter (`GET /export`)
 * laid out so that Git diffs are reviewable. No I/O here: a file tree is a map of relative POSIX
 * paths to text.
 *
 *   arbiter-bundle.json                {format, formatVersion, orgId}
 *   policies/<name>-<id>/policy.json   the base and its records, each rule text in a file beside it
 *   policies/<name>-<id>/v1.rule …     one file per version (never changes once written), draft.rule
 *   flows/<name>-<id>/flow.json        the base and its records (definitions inline)
 *   groups.json                        the groups, by name, with their members
 *
 * JSON is written with sorted keys and 2-space indents; every file ends with a newline. `exportedAt`
 * is not kept (it would change on every pull); `push` sends the time of the push.
 */

/** A file tree: relative POSIX path → text. */
export type FileTree = Map<string, string>;

export const HEADER_FILE = 'arbiter-bundle.json';
export const GROUPS_FILE = 'groups.json';
/** The top-level entries `pull` owns in its directory (replaced on every pull). */
export const MANAGED_ENTRIES = [HEADER_FILE, GROUPS_FILE, 'policies', 'flows'] as const;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** A bundle file's content does not have the expected shape. */
export class BundleFileError extends Error {
  override readonly name = 'BundleFileError';
}

const RULE_FILE = /^(?:v[1-9][0-9]*|draft)\.rule$/;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON text with keys sorted at every level, 2-space indents and a final newline. */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (!isObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sort(v[k]);
    return out;
  };
  return `${JSON.stringify(sort(value), null, 2)}\n`;
}

/** A directory name for a base: its current name made file-safe, and the end of its id (unique within the org). */
export function baseDirName(name: string, baseId: string): string {
  const slug =
    name
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50)
      .replace(/-+$/, '') || 'unnamed';
  return `${slug}-${baseId.replace(/[^0-9a-f]/gi, '').slice(-8)}`;
}

function records(base: JsonObject, where: string): JsonObject[] {
  const list = base.records;
  if (!Array.isArray(list) || !list.every(isObject)) throw new BundleFileError(`${where}: \`records\` must be an array of objects`);
  return list;
}

/** The current record of a base: its highest version, else its draft. */
function currentName(base: JsonObject, where: string): string {
  const list = records(base, where);
  let current: JsonObject | undefined;
  for (const r of list) {
    if (typeof r.version === 'number' && (current === undefined || typeof current.version !== 'number' || r.version > current.version))
      current = r;
  }
  current ??= list[0];
  return typeof current?.name === 'string' ? current.name : 'unnamed';
}

function section(bundle: JsonObject, key: string): JsonObject[] {
  const list = bundle[key];
  if (!Array.isArray(list) || !list.every(isObject)) throw new BundleFileError(`the bundle's \`${key}\` must be an array of objects`);
  return list;
}

function dirOf(base: JsonObject, where: string): string {
  if (typeof base.baseId !== 'string') throw new BundleFileError(`${where}: \`baseId\` must be a string`);
  return baseDirName(currentName(base, where), base.baseId);
}

/** The files of a bundle (as `GET /export` answers it). */
export function bundleToFiles(bundle: unknown): FileTree {
  if (!isObject(bundle) || bundle.format !== 'arbiter-bundle') throw new BundleFileError('the answer is not an Arbiter bundle');
  const files: FileTree = new Map();
  files.set(HEADER_FILE, stableJson({ format: bundle.format, formatVersion: bundle.formatVersion, orgId: bundle.orgId }));
  for (const base of section(bundle, 'policies')) {
    const dir = `policies/${dirOf(base, 'a policy')}`;
    const meta = {
      ...base,
      records: records(base, dir).map((r) => {
        const file = `${typeof r.version === 'number' ? `v${r.version}` : 'draft'}.rule`;
        files.set(`${dir}/${file}`, `${typeof r.rule === 'string' ? r.rule : ''}\n`);
        const { rule: _rule, ...rest } = r;
        return { ...rest, ruleFile: file };
      }),
    };
    files.set(`${dir}/policy.json`, stableJson(meta));
  }
  for (const base of section(bundle, 'flows')) files.set(`flows/${dirOf(base, 'a flow')}/flow.json`, stableJson(base));
  const nameOf = (g: JsonObject): string => (typeof g.name === 'string' ? g.name : '');
  const groups = [...section(bundle, 'groups')].sort((x, y) => nameOf(x).localeCompare(nameOf(y)));
  files.set(GROUPS_FILE, stableJson(groups));
  return files;
}

function parseFile(files: FileTree, file: string): Json {
  const text = files.get(file);
  if (text === undefined) throw new BundleFileError(`${file} is missing`);
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new BundleFileError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/**
 * The bundle `files` describe (the inverse of {@link bundleToFiles}), with `exportedAt` set to `now`.
 * Bases are in path order. Only the shape needed to reassemble is checked here; the server
 * validates the bundle strictly.
 */
export function filesToBundle(files: FileTree, now: Date): JsonObject {
  const header = parseFile(files, HEADER_FILE);
  if (!isObject(header)) throw new BundleFileError(`${HEADER_FILE}: must be a JSON object`);
  const paths = [...files.keys()].sort();
  const policies = paths
    .filter((p) => /^policies\/[^/]+\/policy\.json$/.test(p))
    .map((file) => {
      const dir = file.slice(0, -'/policy.json'.length);
      const base = parseFile(files, file);
      if (!isObject(base)) throw new BundleFileError(`${file}: must be a JSON object`);
      return {
        ...base,
        records: records(base, file).map((r) => {
          const { ruleFile, ...rest } = r;
          if (typeof ruleFile !== 'string' || !RULE_FILE.test(ruleFile))
            throw new BundleFileError(`${file}: each record needs \`ruleFile\` (v<N>.rule or draft.rule)`);
          const text = files.get(`${dir}/${ruleFile}`);
          if (text === undefined) throw new BundleFileError(`${dir}/${ruleFile} is missing`);
          return { ...rest, rule: text.endsWith('\n') ? text.slice(0, -1) : text };
        }),
      };
    });
  const flows = paths.filter((p) => /^flows\/[^/]+\/flow\.json$/.test(p)).map((file) => parseFile(files, file));
  const groups = files.has(GROUPS_FILE) ? parseFile(files, GROUPS_FILE) : [];
  if (!Array.isArray(groups)) throw new BundleFileError(`${GROUPS_FILE}: must be a JSON array`);
  return { ...header, exportedAt: now.toISOString(), policies, flows, groups };
}
