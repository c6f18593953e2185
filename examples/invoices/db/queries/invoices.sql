-- name: CreateInvoice :one
insert into invoices (id, customer, amount_cents, run_id)
values (sqlc.arg(id), sqlc.arg(customer), sqlc.arg(amount_cents), sqlc.arg(run_id))
returning *;

-- name: InvoicesWithRunStatus :many
-- The app's own query over Docket's table: each invoice with the status of
-- the run that sends it (NULL when it has none). Reads only, so it may run
-- on any connection or transaction. Docket's table is named behind the
-- /*schema*/ marker, which docket.Client.SchemaDB replaces with the schema
-- of Config.Schema; the app's own table resolves through its search_path.
select i.id, i.customer, i.amount_cents, r.status as run_status, r.step as run_step
  from invoices i
  left join /*schema*/docket_runs r on r.run_id = i.run_id
 where r.scope_key = sqlc.arg(tenant)::text or r.scope_key is null
 order by i.id;
