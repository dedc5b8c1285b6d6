// Route groups: each context contributes its routes, and an `http.disable_*` switch of
// langgraph.json can remove a whole group. Areas added later (crons, A2A, ...) plug in here.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { HttpSettings } from '../config/index.js';

type DisableSwitch = {
  [K in keyof HttpSettings]-?: K extends `disable_${string}` ? K : never;
}[keyof HttpSettings];

export interface RouteGroup {
  name: string;
  routes: FastifyPluginAsyncZod;
  /** The switch that removes this group (404 for all its routes) when true. */
  disabledBy?: DisableSwitch;
}

export function enabledGroups(groups: RouteGroup[], http: HttpSettings): RouteGroup[] {
  return groups.filter((g) => !(g.disabledBy && http[g.disabledBy] === true));
}
