// Bulk exports executed as Kubernetes Jobs: the api publishes BulkExport resources.
export { BulkExportPublisher, type PublisherSettings } from './publisher.js';
