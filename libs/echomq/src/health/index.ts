// `@echomq/nestjs/health`: the @nestjs/terminus health indicator, in an entry of its own so that
// applications without @nestjs/terminus never load it (docs/operations.md, "Health").
export {
  EchoMqHealthIndicator,
  PING_TIMEOUT_MS,
  STUCK_MARGIN_MS,
  type EchoMqHealthOptions,
  type EchoMqHealthDetails,
} from './echomq-health.indicator';
export type { LoopDetail } from './loop-verdict';
export type { LoopState, ClaimLoopReport, LoopEnded } from '../worker/loop-report';
export type { HandlerAges } from '../worker/job-slots';
export type { LoopStep, LoopStepView } from '../worker/loop-liveness';
