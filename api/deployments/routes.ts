// HTTP routes of /v2/deployments and its revisions.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf } from '../auth/index.js';
import { Detail, page, ValidationErrorBody } from '../shared/index.js';
import {
  Deployment,
  DeploymentCreateRequest,
  DeploymentIdParams,
  DeploymentListQuery,
  DeploymentPatchRequest,
  Revision,
  RevisionIdParams,
  RevisionListQuery,
} from './schemas.js';
import type { DeploymentService } from './service.js';

const tags = ['Deployments (v2)'];
const errors = { 404: Detail, 422: ValidationErrorBody };

export function deploymentRoutes(service: DeploymentService): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/v2/deployments',
      {
        schema: {
          tags,
          querystring: DeploymentListQuery,
          response: { 200: page(Deployment), 422: ValidationErrorBody },
        },
      },
      (req) => service.list(principalOf(req), req.query),
    );
    app.post(
      '/v2/deployments',
      {
        schema: {
          tags,
          body: DeploymentCreateRequest,
          // 403: Kubernetes refused the api's service account (no RBAC in that namespace).
          response: { 201: Deployment, 400: Detail, 403: Detail, ...errors },
        },
      },
      async (req, reply) => reply.code(201).send(await service.create(principalOf(req), req.body)),
    );
    app.get(
      '/v2/deployments/:deployment_id',
      { schema: { tags, params: DeploymentIdParams, response: { 200: Deployment, ...errors } } },
      (req) => service.get(principalOf(req), req.params.deployment_id),
    );
    app.patch(
      '/v2/deployments/:deployment_id',
      {
        schema: {
          tags,
          params: DeploymentIdParams,
          body: DeploymentPatchRequest,
          response: { 200: Deployment, 400: Detail, ...errors },
        },
      },
      (req) => service.patch(principalOf(req), req.params.deployment_id, req.body),
    );
    app.delete(
      '/v2/deployments/:deployment_id',
      { schema: { tags, params: DeploymentIdParams, response: { 204: z.null(), ...errors } } },
      async (req, reply) => {
        await service.delete(principalOf(req), req.params.deployment_id);
        return reply.code(204).send(null);
      },
    );
    app.get(
      '/v2/deployments/:deployment_id/revisions',
      {
        schema: {
          tags,
          params: DeploymentIdParams,
          querystring: RevisionListQuery,
          response: { 200: page(Revision), ...errors },
        },
      },
      (req) => service.listRevisions(principalOf(req), req.params.deployment_id, req.query),
    );
    app.get(
      '/v2/deployments/:deployment_id/revisions/:revision_id',
      { schema: { tags, params: RevisionIdParams, response: { 200: Revision, ...errors } } },
      (req) =>
        service.getRevision(principalOf(req), req.params.deployment_id, req.params.revision_id),
    );
    app.post(
      '/v2/deployments/:deployment_id/revisions/:revision_id/redeploy',
      {
        schema: {
          tags,
          params: RevisionIdParams,
          response: { 200: Deployment, 400: Detail, ...errors },
        },
      },
      (req) => service.redeploy(principalOf(req), req.params.deployment_id, req.params.revision_id),
    );
  };
}
