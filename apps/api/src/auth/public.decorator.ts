import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'emq:public';

/**
 * Opens a controller or route to callers without the api token (health probes).
 * Everything else is protected by default, so a new controller cannot be left open by accident.
 */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);
