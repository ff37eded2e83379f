/** NATS header carrying the caller's request id, so a request can be followed across services. */
export const REQUEST_ID_HEADER = 'Arbiter-Request-Id';
