import { type DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ApiConfig } from './api-config';
import { validateEnvironment, type RawEnvironment } from './environment';

/**
 * Validates the environment at boot (a bad value rejects app creation with a message
 * naming the variable) and provides ApiConfig everywhere.
 *
 * The environment is handed in rather than read from process.env here, so tests can
 * boot several apps with different settings in one process. For the same reason
 * process.env is never consulted after validation (skipProcessEnv).
 */
@Global()
@Module({})
export class ApiConfigModule {
  static forRoot(env: RawEnvironment): DynamicModule {
    return {
      module: ApiConfigModule,
      imports: [
        ConfigModule.forRoot({
          ignoreEnvFile: true,
          validatePredefined: false,
          skipProcessEnv: true,
          validate: () => ({ ...validateEnvironment(env) }),
        }),
      ],
      providers: [ApiConfig],
      exports: [ApiConfig],
    };
  }
}
