// The layering check of `npm run lint`: dependency-cruiser over src/ with the rules of
// .dependency-cruiser.js, plus the one rule it cannot state itself: no cycle between the
// folders of src/, a folder being the first path segment under src/ (src/agent, src/webhook).
// dependency-cruiser's own folder rules take every directory level as a folder, so there
// src/platform -> src/send/dto with src/send -> src/platform is no cycle; here it is one.
// Exits non-zero when anything is found.
import { fileURLToPath } from 'node:url';
import { styleText } from 'node:util';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const CONFIG = './.dependency-cruiser.js';
const ROOTS = ['src'];
const RULE = 'no-circular-between-folders';

/** @param {string} path @returns {string | undefined} src/<folder> for a file under one */
function folderOf(path) {
  const match = /^src\/[^/]+(?=\/)/.exec(path);
  return match?.[0];
}

const SEVERITY_COLOUR = { error: 'red', warn: 'yellow', info: 'cyan', ignore: 'gray' };

/** @param {import('dependency-cruiser').IViolation} violation */
function formatViolation(violation) {
  const { severity, name } = violation.rule;
  // A cycle lists the modules after `from`, ending with `from` again.
  const path = violation.cycle
    ? [violation.from, ...violation.cycle.map((step) => step.name)]
    : [violation.from, violation.to];
  return `  ${styleText(SEVERITY_COLOUR[severity] ?? 'red', severity)} ${name}: ${path.join(' → ')}`;
}

/**
 * Strongly connected components (Tarjan) of a graph given as adjacency sets.
 * @param {Map<string, Set<string>>} graph
 * @returns {string[][]}
 */
function stronglyConnected(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (node) => {
    index.set(node, index.size);
    low.set(node, index.get(node));
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), index.get(next)));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      components.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return components;
}

/**
 * @param {import('dependency-cruiser').IModule[]} modules
 * @returns {string[]} one report entry per set of folders that depend on each other
 */
function folderCycles(modules) {
  /** @type {Map<string, Set<string>>} */
  const graph = new Map();
  /** @type {Map<string, string[]>} "from folder -> to folder" to the imports behind it */
  const imports = new Map();
  for (const module of modules) {
    const from = folderOf(module.source);
    if (!from) continue;
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (!to || to === from) continue;
      if (!graph.has(from)) graph.set(from, new Set());
      graph.get(from).add(to);
      const key = `${from} -> ${to}`;
      if (!imports.has(key)) imports.set(key, []);
      const typeOnly = dependency.dependencyTypes.includes('type-only') ? ' (type only)' : '';
      imports.get(key).push(`${module.source} → ${dependency.resolved}${typeOnly}`);
    }
  }
  return stronglyConnected(graph)
    .filter((component) => component.length > 1)
    .map((component) => {
      const lines = [];
      for (const from of component) {
        for (const to of [...(graph.get(from) ?? [])].sort()) {
          if (!component.includes(to)) continue;
          lines.push(`      ${from} → ${to}`);
          for (const line of imports.get(`${from} -> ${to}`).sort())
            lines.push(`          ${line}`);
        }
      }
      return `  ${styleText('red', 'error')} ${RULE}: ${styleText('bold', component.join(', '))}\n${lines.join('\n')}`;
    });
}

process.chdir(fileURLToPath(new URL('..', import.meta.url)));
const options = await extractDepcruiseOptions(CONFIG);
const tsConfig = options.tsConfig?.fileName
  ? extractTSConfig(options.tsConfig.fileName)
  : undefined;
const { output: result } = await cruise(ROOTS, options, {}, { tsConfig });
if (typeof result === 'string') throw new Error('dependency-cruiser returned no cruise result');

const violations = result.summary.violations.map(formatViolation);
const cycles = folderCycles(result.modules);
const { error, totalCruised, totalDependenciesCruised } = result.summary;

if (violations.length > 0) process.stdout.write(`\n${violations.join('\n')}\n`);
if (cycles.length > 0) process.stdout.write(`\n${cycles.join('\n\n')}\n`);
const total = `${totalCruised} modules, ${totalDependenciesCruised} dependencies cruised`;
if (violations.length + cycles.length === 0) {
  process.stdout.write(`✔ no dependency violations found (${total})\n`);
} else {
  const summary = `x ${violations.length} dependency violation(s), ${cycles.length} cycle(s) between folders (${total})`;
  process.stdout.write(`\n${styleText('red', summary)}\n\n`);
}
process.exitCode = error + cycles.length > 0 ? 1 : 0;
