/**
 * The generated files under `crds/`: the CRD and an example Pipeline (the default one), as YAML.
 * `scripts/write-crd.ts` writes them; `manifests.test.ts` checks the committed copies. js-yaml
 * directly: client-node's `dumpYaml` passes objects through its typed models, which drop keys.
 */
import { dump } from 'js-yaml';
import { pipelineCrd } from './crd.js';
import { defaultPipeline } from './default.js';
import { ADOPT_TOPICS_ANNOTATION } from './types.js';

const HEADER =
  '# Generated from services/controller/src/pipeline/ by `npm run crd -w @event-observatory/controller`: do not edit.\n';

function yaml(object: unknown): string {
  return HEADER + dump(object, { noRefs: true, lineWidth: -1, quotingType: '"' });
}

/** The name of `crds/examples/pipeline.yaml`'s Pipeline (`make dev` lets it adopt the stack's topics). */
export const EXAMPLE_PIPELINE_NAME = 'events';

/** Path under the repository root -> content. */
export function crdManifests(): Record<string, string> {
  const example = defaultPipeline({ name: EXAMPLE_PIPELINE_NAME, namespace: 'observatory' });
  const { namespace: _, ...meta } = example.metadata;
  // `make dev`'s devstack creates these topics before any Pipeline exists: the example adopts them.
  const adopt = example.spec.topics.map((t) => t.name).join(',');
  const metadata = { ...meta, annotations: { [ADOPT_TOPICS_ANNOTATION]: adopt } };
  return {
    'crds/pipeline.yaml': yaml(pipelineCrd),
    'crds/examples/pipeline.yaml': yaml({ ...example, metadata }),
  };
}
