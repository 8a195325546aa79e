/**
 * Small builders of the chart's values: each leaf carries its JSON schema, its default and one line
 * of description, so values.yaml, values.schema.json and the README's table come from one tree.
 * Objects refuse unknown keys (a typo fails `helm install`); `map` is the one open object.
 */
export interface Leaf {
  schema: Record<string, unknown>;
  default: unknown;
  description: string;
}
export interface Tree {
  [key: string]: Leaf | Tree;
}

/** Trees whose object accepts keys besides its own (`global`, shared with a parent chart). */
const openTrees = new WeakSet<Tree>();
export function open(tree: Tree): Tree {
  openTrees.add(tree);
  return tree;
}

const isLeaf = (node: Leaf | Tree): node is Leaf => 'schema' in node && 'description' in node;

export const str = (def: string, description: string, extra: Record<string, unknown> = {}): Leaf => ({
  schema: { type: 'string', ...extra },
  default: def,
  description,
});
export const int = (def: number, description: string, min = 0): Leaf => ({
  schema: { type: 'integer', minimum: min },
  default: def,
  description,
});
export const bool = (def: boolean, description: string): Leaf => ({
  schema: { type: 'boolean' },
  default: def,
  description,
});
export const oneOf = (values: string[], def: string, description: string): Leaf => ({
  schema: { type: 'string', enum: values },
  default: def,
  description,
});
/** A free-form map (labels, nodeSelector, resources) given to Kubernetes as it is. */
export const map = (
  def: Record<string, unknown>,
  description: string,
  values: 'string' | 'any' = 'any',
): Leaf => ({
  schema: { type: 'object', ...(values === 'string' ? { additionalProperties: { type: 'string' } } : {}) },
  default: def,
  description,
});
export const list = (
  def: unknown[],
  description: string,
  items: Record<string, unknown> = {},
  minItems = 0,
): Leaf => ({
  schema: { type: 'array', items, ...(minItems ? { minItems } : {}) },
  default: def,
  description,
});

export function defaults(tree: Tree): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(tree).map(([key, node]) => [key, isLeaf(node) ? node.default : defaults(node)]),
  );
}

export function jsonSchema(tree: Tree): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: openTrees.has(tree),
    properties: Object.fromEntries(
      Object.entries(tree).map(([key, node]) => [
        key,
        isLeaf(node) ? { ...node.schema, description: node.description } : jsonSchema(node),
      ]),
    ),
  };
}

/** Every leaf as `[dotted.path, leaf]`, in the tree's order. */
export function leaves(tree: Tree, prefix = ''): [string, Leaf][] {
  return Object.entries(tree).flatMap(([key, node]) =>
    isLeaf(node) ? [[`${prefix}${key}`, node] as [string, Leaf]] : leaves(node, `${prefix}${key}.`),
  );
}
