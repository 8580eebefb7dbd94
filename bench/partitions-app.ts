import 'reflect-metadata';
import { Inject, Module, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  EchoMqModule,
  OnWorkerEvent,
  Processor,
  type EchoMqModuleOptions,
  type Job,
} from '@app/echomq/internal';
import type { AppSettings } from './partitions-ipc';
import type { JobData } from './support/payload';

const HOOKS = Symbol('bench:partitions-hooks');

/** What the benchmark's processor tells its host. */
export interface DrainHooks {
  /** First thing in the handler. */
  onStart(): void;
  /** The worker event 'completed': Redis recorded the job's completion. */
  onComplete(): void;
}

/**
 * The benchmark's @Processor for a queue named at run time (the name is picked so that its
 * partitions spread over the masters): a no-op async handler, and an @OnWorkerEvent method
 * that counts completions, however many claim loops the processor runs.
 */
function processorFor(queue: string): Type {
  @Processor(queue)
  class HotQueueProcessor {
    constructor(@Inject(HOOKS) private readonly hooks: DrainHooks) {}

    async process(_job: Job<JobData>): Promise<void> {
      this.hooks.onStart();
    }

    @OnWorkerEvent('completed')
    completed(): void {
      this.hooks.onComplete();
    }
  }
  return HotQueueProcessor;
}

function rootOptions(settings: AppSettings, worker: boolean): EchoMqModuleOptions {
  return {
    connection: { cluster: { nodes: settings.nodes.map((node) => ({ ...node })) } },
    queues: {
      [settings.queue]: {
        partitions: settings.partitions,
        retainCompletedMs: 0,
        ...(worker ? { concurrency: settings.concurrency } : {}),
      },
    },
    ...(worker && !settings.claimAtBoot ? { startProcessors: false } : {}),
  };
}

@Module({})
class PartitionBenchModule {
  static producer(settings: AppSettings): DynamicModule {
    return { module: PartitionBenchModule, imports: [EchoMqModule.forRoot(rootOptions(settings, false))] };
  }

  static worker(settings: AppSettings, hooks: DrainHooks): DynamicModule {
    return {
      module: PartitionBenchModule,
      imports: [EchoMqModule.forRoot(rootOptions(settings, true))],
      providers: [processorFor(settings.queue), { provide: HOOKS, useValue: hooks }],
    };
  }
}

function createContext(module: DynamicModule): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(module, { logger: ['error'], abortOnError: false });
}

/** A producer's application: QueueService with the queue's partitions declared, no processors. */
export function openProducerApp(settings: AppSettings): Promise<INestApplicationContext> {
  return createContext(PartitionBenchModule.producer(settings));
}

/** A worker's application: the processor, claiming at boot or once started (see AppSettings.claimAtBoot). */
export function openWorkerApp(settings: AppSettings, hooks: DrainHooks): Promise<INestApplicationContext> {
  return createContext(PartitionBenchModule.worker(settings, hooks));
}
