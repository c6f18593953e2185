// Package maintenance holds the Worker's periodic services: the retention
// cleaner, which deletes finished runs once they are old enough, and the
// schedule taker, which turns due schedule ticks into runs. Each is a
// startstop.Service that reaches the store only through the functions its
// config declares, reads time only through an injected clock and reports
// through a logger and hooks, so it runs here without a database and the
// facade keeps every query, event and metric.
package maintenance
