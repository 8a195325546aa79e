/** Public surface of the search service: the service factory and its configuration reader. */
export { bearerSettingsFromEnv, createBearerTokens } from './auth/bearer.js';
export { authenticatorFor, storedAuthenticatorFor } from './auth/index.js';
export { DEFAULT_ALLOWED_HOSTS, readSearchConfig, type SearchConfig } from './config.js';
export { parseSearch, SHAPES } from './filters.js';
export { bucketFor } from './search.js';
export { createSearchService, type SearchService, type ServiceOptions } from './service.js';
export type { Authenticator, Viewer } from './viewer.js';
export { parseVisibility, type VisibilityPolicy } from './visibility.js';
