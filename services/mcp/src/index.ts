export { McpConfig } from './config.js';
export { startMcp, type RunningMcp } from './start.js';
export { buildMcpHandler, MCP_PATH, type McpAppDeps } from './app.js';
