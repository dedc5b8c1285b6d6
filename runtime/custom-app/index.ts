// Custom routes and middleware (`http.app`): the project's app mounted in front of the API.
export { CustomAppLoadError, loadCustomApp, type CustomApp } from './load.js';
export { frontServer, type FrontSettings, type Gate } from './front.js';
