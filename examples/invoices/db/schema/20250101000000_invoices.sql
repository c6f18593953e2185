-- The app's own table: one invoice, sent by one Docket run.
create table invoices (
    id bigint not null constraint invoices_pkey primary key,
    customer text not null,
    amount_cents bigint not null constraint invoices_amount_check check (amount_cents >= 0),
    run_id text constraint invoices_run_id_key unique
);
