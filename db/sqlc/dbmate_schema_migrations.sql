-- The ledger of dbmate (and of some other migration tools) in the same
-- schema. Docket recorded its versions here before it kept its own ledger;
-- docket.Migrate copies Docket's versions from it once. sqlc only needs its
-- shape to type that query.
create table schema_migrations (
    version varchar(128) not null constraint schema_migrations_pkey primary key
);
