-- Page snapshots: how many distinct pages each source stored and how often pages repeat.
-- make sql Q=sql/pages_per_source.sql
with views as (
    select ep.source, ev.html_sha
    from events ev
    join episodes ep using (episode_id)
    where ev.kind = 'web_observation'
),
pages as (  -- each source's distinct pages, each counted once however often it was shown
    select distinct v.source, v.html_sha, d.raw_bytes
    from views v
    join (select distinct html_sha, raw_bytes from dom_snapshots) d using (html_sha)
)
select
    v.source,
    count(v.html_sha) as page_views,
    count(distinct v.html_sha) as distinct_pages,
    round(any_value(p.mb), 2) as distinct_page_mb
from views v
left join (select source, sum(raw_bytes) / 1e6 as mb from pages group by source) p using (source)
group by v.source
order by page_views desc, v.source;
