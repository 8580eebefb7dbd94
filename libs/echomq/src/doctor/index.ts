export * from './findings';
export {
  diagnoseQueue,
  runDoctor,
  type DoctorOptions,
  type DoctorReport,
  type QueueDiagnosis,
} from './diagnose';
export { NOT_CHECKABLE } from './unchecked';
