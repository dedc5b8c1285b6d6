// Run-completion webhooks: URL policy and SSRF guard, the durable outbox and its dispatcher,
// Standard Webhooks signing, and the debug listing of deliveries.
export { createWebhookModule, type WebhookModule, type WebhookModuleOptions } from './module.js';
export { WebhookUrlValidator } from './validator.js';
export { webhookRoutes } from './routes.js';
export { WebhookDeliveries } from './deliveries.js';
export { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './settings.js';
export { checkWebhookUrl, urlPolicyFrom, type UrlPolicy, type UrlRefusal } from './url-policy.js';
export { SsrfGuard, type Resolver } from './guard.js';
