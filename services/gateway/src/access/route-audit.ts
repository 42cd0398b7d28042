import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ACCESS_POLICY } from './access.decorators';

/**
 * Names, at start-up, every route that has no access marker. The guard refuses such routes
 * anyway; this only makes the omission visible before someone calls them.
 */
@Injectable()
export class RouteAccessAudit implements OnApplicationBootstrap {
  private readonly logger = new Logger('access');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    for (const name of this.unmarkedRoutes()) {
      this.logger.warn(`${name} has no @Public(), @Authenticated() or @RequirePermission(); every request to it will be refused`);
    }
  }

  unmarkedRoutes(): string[] {
    const unmarked: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
      if (!controller?.prototype) continue;
      const classPolicy = this.reflector.get<unknown>(ACCESS_POLICY, controller);
      for (const methodName of this.scanner.getAllMethodNames(controller.prototype as object)) {
        const handler = (controller.prototype as Record<string, unknown>)[methodName] as object;
        const isRoute = Reflect.getMetadata(PATH_METADATA, handler) !== undefined && Reflect.getMetadata(METHOD_METADATA, handler) !== undefined;
        if (isRoute && classPolicy === undefined && this.reflector.get<unknown>(ACCESS_POLICY, handler as () => void) === undefined) {
          unmarked.push(`${controller.name}.${methodName}`);
        }
      }
    }
    return unmarked;
  }
}
