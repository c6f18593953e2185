// Package notifier keeps a LISTEN session on one PostgreSQL notification
// channel and turns its notifications into wake-ups: a value on each of its
// wake channels, unless one is already pending. It reconnects with backoff
// after any error until its context ends. The connection comes from an
// injected function, so the package holds no pool and runs no query of its
// own but LISTEN.
package notifier
