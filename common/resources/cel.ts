// CEL rules the API server evaluates itself, so `kubectl apply` cannot bypass them.
export interface CelRule {
  rule: string;
  message: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired';
}

/** Metadata for a field that may be set once and never changed. */
export function immutable(message: string) {
  return {
    'x-kubernetes-validations': [
      { rule: 'self == oldSelf', message, reason: 'FieldValueForbidden' },
    ] satisfies CelRule[],
  };
}
