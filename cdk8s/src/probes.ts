/**
 * The startup probe's timing, shared by the chart's Deployments and the cluster suites' own: a
 * probe every 2 s for up to two minutes before liveness and readiness begin. A start slowed by a
 * busy node (a pod's CPU request is its whole share there) is not restarted by liveness before it
 * could answer, and a fast start is seen within 2 s.
 */
export const STARTUP_PROBE_TIMING = { periodSeconds: 2, timeoutSeconds: 3, failureThreshold: 60 } as const;
