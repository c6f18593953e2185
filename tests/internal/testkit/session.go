package testkit

// SessionSetting is the session's synchronous_commit on the test pools: a
// value that is neither the test server's ("off") nor the built-in default,
// so a leak or a reset would both show.
const SessionSetting = "local"
