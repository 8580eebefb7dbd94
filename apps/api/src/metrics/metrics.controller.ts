import { EchoMqMetrics } from '@app/echomq/metrics';
import { Controller, Get, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';

/**
 * `GET /metrics`: EchoMQ's metrics in the Prometheus text format. The api runs no processors, so
 * it reports what Redis holds (depths per set and lane, pause flags, transition counters), read
 * at most once a second whatever the number of scrapers. Behind the api token like /queues
 * (Prometheus sends it with `authorization: { credentials: ... }`), never throttled, since a
 * scraper polls on its own schedule; left out of the OpenAPI document, which describes the JSON api.
 */
@ApiExcludeController()
@SkipThrottle()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: EchoMqMetrics) {}

  @Get()
  async scrape(@Res() res: Response): Promise<void> {
    const text = await this.metrics.text();
    // end(), not send(): send() would rewrite the Content-Type's parameters.
    res.status(200).setHeader('Content-Type', this.metrics.contentType).end(text);
  }
}
