/**
 * @event-observatory/controller: the Pipeline resource (types, CRD, default Pipeline) and the
 * controller service that reconciles it.
 * @module
 */
export { CLEANUP_POLICIES, pipelineCrd } from './pipeline/crd.js';
export { defaultPipeline, pipelineTopic } from './pipeline/default.js';
export { crdManifests } from './pipeline/manifests.js';
export * from './pipeline/types.js';
