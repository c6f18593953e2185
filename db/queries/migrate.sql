-- name: LedgerExists :one
-- Whether this schema already keeps Docket's ledger (the migrator then
-- never adopts versions from another tool's table).
select (to_regclass('docket_schema_migrations') is not null)::boolean as ledger_exists;

-- name: LegacyLedgerHoldsDocket :one
-- A schema migrated by an earlier Docket release recorded its versions in
-- dbmate's schema_migrations next to a docket_runs table.
select (to_regclass('schema_migrations') is not null
        and to_regclass('docket_runs') is not null)::boolean as legacy_ledger;

-- name: LegacyLedgerVersions :many
-- Docket's own versions, and only those, in dbmate's ledger: the migrator
-- copies them into its own ledger once and leaves the rows there to the
-- tool that owns the table.
select m.version::text as version
  from /*schema*/schema_migrations m
 where m.version::text = any(sqlc.arg(versions)::text[])
 order by 1;

-- name: LedgerVersions :many
-- The applied Docket migrations, oldest first.
select version from /*schema*/docket_schema_migrations order by version;

-- name: RecordMigration :exec
insert into /*schema*/docket_schema_migrations (version) values (sqlc.arg(version));

-- name: ForgetMigration :execrows
delete from /*schema*/docket_schema_migrations where version = sqlc.arg(version);

-- name: LockMigrations :exec
-- Serializes migrators of one schema until their transaction ends, so two
-- deployments starting together create the schema and apply each migration
-- once. Keyed by name: the schema may not exist yet.
select pg_advisory_xact_lock(hashtextextended('docket.migrate.' || sqlc.arg(schema_name)::text, 0));
