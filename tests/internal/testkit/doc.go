// Package testkit holds the helpers the integration test packages under
// tests/ share: pools and clients on databases cloned by internal/pgtest,
// fixtures for claims, runs, schedules and migrations, worker event
// recorders, telemetry collectors and table snapshots. A helper that only
// one test package uses stays in that package.
//
// Every helper takes a testing.TB and fails the test itself on error, so
// call sites stay one line.
package testkit
