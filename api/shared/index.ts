export { Pagination, Detail, ValidationErrorBody, page, paginate, UPDATED_AT } from './schemas.js';
