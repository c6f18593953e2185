
-- Schema V6: the trace context of the span that inserted a run, so the span
-- of the handler that later works the run can link back to it across
-- processes and hours. It is the W3C trace-context carrier (traceparent and,
-- when present, tracestate) as a JSON object of strings; NULL when the
-- inserting context carried no valid span. It is written once by the insert
-- and never read by a claim, so it adds nothing to any index or claim plan.
alter table docket_runs
    add column trace_context jsonb
        constraint docket_runs_trace_context_check
            check (trace_context is null or jsonb_typeof(trace_context) = 'object');

