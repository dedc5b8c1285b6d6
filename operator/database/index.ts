// Per-deployment PostgreSQL databases and roles.
export {
  DatabaseProvisioner,
  databaseName,
  newDatabasePassword,
  type DatabaseServerSettings,
} from './provisioner.js';
