// Package testseam is how package dockettest reaches the parts of package
// docket that applications must not call directly. Package docket sets the
// hooks in its init, with exactly the documented types, so importing
// dockettest (which imports docket) always finds them set.
package testseam

// Work is func(ctx context.Context, client *docket.Client, scope
// docket.Scope, runID string, cfg docket.WorkerConfig) (docket.Run, error):
// claim exactly that run through the client's engine, run it in the calling
// goroutine as the job of a Worker of one slot with cfg's Handler or
// Handlers and its Retry (no other field of cfg is read), commit its
// verdict as that Worker does, and return the run as committed.
var Work any

// Schema is func(client *docket.Client) string: the client's Config.Schema.
var Schema any
