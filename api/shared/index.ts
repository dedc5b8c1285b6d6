export {
  Pagination,
  Detail,
  NamespaceName,
  ValidationErrorBody,
  page,
  paginate,
  UPDATED_AT,
  CREATED_AT,
  createdAt,
} from './schemas.js';
