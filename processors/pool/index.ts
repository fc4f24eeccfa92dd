/**
 * The processors' public API for the job engine (CONTRACTS.md §8): one pool of warm isolated
 * children; see pool.ts, and docs/processors.md "The pool".
 */
export { ProcessorPool, type JobLimits, type PoolEvent, type PoolOptions, type ChildSnapshot } from "./pool.ts";
export type { PoolSettings, RetireReason } from "./policy.ts";
export type { ChildFault, JobType, JobTypes, ProgressEvent, ProcessRequest, StartFault } from "./protocol.ts";
export { CHILD_ENV_KEYS, childEnv } from "./env.ts";
export { residentBytes, peakResidentBytes, treeResidentBytes } from "./rss.ts";
