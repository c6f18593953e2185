// Package dbgen is the facade's typed repository: sqlc's accessors for every
// query in db/queries and db/queries/app, over the tables of db/schema. Every
// file here but this one is written by `make generate`; CI fails when they
// drift.
//
// The facade (docket) calls only this package, never gen: gen is the public
// subset of the same queries, generated from db/queries/app alone, that apps
// may call in their own transactions. An accessor generated from
// db/queries, and not from db/queries/app, exists here only, because its
// safety depends on arguments the facade validates, on how the facade reads
// its rows or on the order of a protocol of several statements. Both
// packages are generated from one sqlc.yaml, so a query of db/queries/app
// sends the same statement from either.
package dbgen
