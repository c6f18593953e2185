-- Docket's own version ledger: one row per applied Docket migration, in the
-- schema the migrations installed into. docket.Migrate creates it (it is not
-- a migration, so that it can record the first one); it lives apart from any
-- schema_migrations table of the application's own migration tool.
create table if not exists docket_schema_migrations (
    version text not null constraint docket_schema_migrations_pkey primary key,
    applied_at timestamptz not null default now(),
    constraint docket_schema_migrations_version_check check (version ~ '^[0-9]{14}$')
);
