export { KubeResources, KubeApiError, type CustomResource, type ObjectMeta } from './client.js';
