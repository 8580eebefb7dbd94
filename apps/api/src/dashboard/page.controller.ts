import { Controller, Get, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/public.decorator';
import { DASHBOARD_INDEX, dashboardAsset } from './page/dashboard-assets';

/** A name that carries its content's hash just before its extension (app.3f2a9c1b.js): it can be cached for good. */
const HASHED_NAME = /^[A-Za-z0-9_-]+\.[0-9a-f]{8,64}\.[A-Za-z0-9]+$/;

/** The index and unhashed names are revalidated on every load, so a new build shows at once. */
export function cacheControlFor(name: string): string {
  return name !== DASHBOARD_INDEX && HASHED_NAME.test(name)
    ? 'public, max-age=31536000, immutable'
    : 'no-cache';
}

/**
 * The dashboard's page: the index and its script and style files. Public, since they carry
 * no data: the page asks for the token and reads everything else through guarded routes.
 */
@ApiExcludeController()
@Public()
@Controller('dashboard')
export class DashboardPageController {
  /**
   * The index, at `/dashboard/`. The page names its files and the api's routes relative to
   * that address (`assets/app.js`, `../queues/...`), so it also works behind a proxy that
   * serves the api under a path prefix; `/dashboard` is sent there by a relative redirect,
   * which keeps that prefix.
   */
  @Get()
  index(@Req() request: Request, @Res() response: Response): void {
    if (!request.path.endsWith('/')) {
      const search = request.originalUrl.indexOf('?');
      response.redirect(302, `dashboard/${search < 0 ? '' : request.originalUrl.slice(search)}`);
      return;
    }
    send(response, DASHBOARD_INDEX, cacheControlFor(DASHBOARD_INDEX));
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res() response: Response): void {
    send(response, name, cacheControlFor(name));
  }
}

function send(response: Response, name: string, cacheControl: string): void {
  const asset = dashboardAsset(name);
  if (!asset) throw new NotFoundException(`No dashboard file named ${JSON.stringify(name)}`);
  response.status(200).setHeader('Content-Type', asset.contentType);
  response.setHeader('Cache-Control', cacheControl);
  response.send(asset.body);
}
