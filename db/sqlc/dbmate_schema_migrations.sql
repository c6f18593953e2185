-- dbmate creates this table itself before the first migration; sqlc only
-- needs its shape to type the startup schema-version query.
create table schema_migrations (
    version varchar(128) not null constraint schema_migrations_pkey primary key
);
