import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { EchoMqModuleOptions } from './echomq-options';

/**
 * forRoot / forRootAsync (useFactory, useClass, useExisting, with imports such as
 * ConfigModule) come from Nest's configurable module builder, as users know it.
 */
export const {
  ConfigurableModuleClass: EchoMqConfigurableModule,
  MODULE_OPTIONS_TOKEN: ECHOMQ_OPTIONS,
  OPTIONS_TYPE: ECHOMQ_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: ECHOMQ_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<EchoMqModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();
