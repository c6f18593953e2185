// Package testseam is how package dockettest reaches the parts of package
// docket that applications must not call directly. Package docket sets the
// hooks in its init, with exactly the documented types, so importing
// dockettest (which imports docket) always finds them set.
package testseam

// Work is func(ctx context.Context, client *docket.Client, scope
// docket.Scope, runID string, handler docket.Handler) (docket.Run, error):
// claim exactly that run through the client's engine, run handler on it in
// the calling goroutine as a Worker's job, commit its verdict as the Worker
// does, and return the run as committed.
var Work any

// Schema is func(client *docket.Client) string: the client's Config.Schema.
var Schema any
