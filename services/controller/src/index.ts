/**
 * @event-observatory/controller: the Pipeline resource (types, CRD, default Pipeline) and the
 * controller service that reconciles it.
 * @module
 */

export { type ControllerConfig, readControllerConfig } from './config.js';
export { Controller } from './controller.js';
export { FlowObserver } from './flow-observer.js';
export { KafkaHandler } from './kafka-handler.js';
export { applyPipelineCrd, clusterVersion, loadKubeConfig } from './kube/install.js';
export { createControllerMetrics } from './metrics.js';
export { CLEANUP_POLICIES, pipelineCrd } from './pipeline/crd.js';
export { defaultPipeline, pipelineTopic } from './pipeline/default.js';
export { crdManifests, EXAMPLE_PIPELINE_NAME } from './pipeline/manifests.js';
export * from './pipeline/types.js';
export { Reconciler } from './reconciler.js';
export { type ControllerService, type ControllerServiceOptions, createControllerService } from './service.js';
