// Loaded on its own (`async` in index.html), so it runs as soon as it and
// api.js have arrived, before the rest of the modules: takes the API key
// from the address and starts the two requests an activity view needs
// first, which would otherwise wait for every module to load.

import { loadToken, prefetch } from './api.js';

loadToken();
if (location.hash === '' || location.hash.startsWith('#/activity')) {
  prefetch(['/api/0/settings', '/api/0/buckets/']);
}
