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

-- name: DocketCatalog :many
-- The shape of Docket's objects in the current schema, one entry per object
-- with its full definition: relations named docket_* (tables, sequences,
-- composite types), the columns, constraints, indexes and user triggers of
-- those relations, the functions named docket_* (with a hash of their
-- source, and their settings apart) and other types named docket_*.
-- Docket's ledger is left out, and so is every object of the application's
-- own. The migrator compares it with what each embedded migration creates,
-- to tell which version a schema applied by another tool has. Definitions
-- name the schema where PostgreSQL qualifies names; the caller replaces it.
with ns as (
    select n.oid from pg_catalog.pg_namespace n where n.nspname = current_schema()
), rel as (
    select c.oid, c.relname, c.relkind
      from pg_catalog.pg_class c
     where c.relnamespace = (select oid from ns)
       and c.relname like 'docket\_%'
       and c.relname not in ('docket_schema_migrations', 'docket_schema_migrations_pkey')
)
select ('relation ' || r.relname)::text as key, ('kind=' || r.relkind::text)::text as definition,
       null::text[] as settings
  from rel r
 where r.relkind <> 'i'
union all
select ('column ' || r.relname || '.' || a.attname)::text,
       (format_type(a.atttypid, a.atttypmod)
        || ' notnull=' || a.attnotnull::text || ' generated=' || a.attgenerated::text || ' identity=' || a.attidentity::text
        || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''))::text,
       null::text[]
  from rel r
  join pg_catalog.pg_attribute a on a.attrelid = r.oid
  left join pg_catalog.pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
 where r.relkind in ('r', 'p', 'c') and a.attnum > 0 and not a.attisdropped
union all
select ('constraint ' || r.relname || '.' || k.conname)::text, pg_get_constraintdef(k.oid)::text, null::text[]
  from rel r
  join pg_catalog.pg_constraint k on k.conrelid = r.oid
union all
select ('index ' || i.relname)::text, pg_get_indexdef(x.indexrelid)::text, null::text[]
  from rel r
  join pg_catalog.pg_index x on x.indrelid = r.oid
  join pg_catalog.pg_class i on i.oid = x.indexrelid
union all
select ('function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')')::text,
       ('returns ' || pg_get_function_result(p.oid) || ' language=' || l.lanname || ' definer=' || p.prosecdef::text
        || ' src=' || md5(p.prosrc))::text,
       coalesce(p.proconfig, '{}')::text[]
  from pg_catalog.pg_proc p
  join pg_catalog.pg_language l on l.oid = p.prolang
 where p.pronamespace = (select oid from ns)
   and p.proname like 'docket\_%'
union all
select ('trigger ' || r.relname || '.' || t.tgname)::text, pg_get_triggerdef(t.oid)::text, null::text[]
  from rel r
  join pg_catalog.pg_trigger t on t.tgrelid = r.oid
 where not t.tgisinternal
union all
select ('type ' || t.typname)::text, ('type=' || t.typtype::text || ' ' || format_type(t.oid, null))::text, null::text[]
  from pg_catalog.pg_type t
 where t.typnamespace = (select oid from ns)
   and t.typname like 'docket\_%'
   and t.typtype in ('d', 'e', 'r', 'm')
order by 1, 2;
