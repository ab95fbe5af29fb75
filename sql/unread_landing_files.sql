-- Landing files nothing reads, with why and since when.
-- make sql Q=sql/unread_landing_files.sql
select
    path,
    reason,
    size,
    first_seen,
    left(detail, 100) as detail
from unread_landing_files
order by first_seen, path;
