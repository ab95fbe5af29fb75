-- The 20 longest episodes by number of actions, with their task.
-- make sql Q=sql/longest_episodes.sql
with actions as (  -- counted per episode first: grouping by the task text too is slow
    select episode_id, count(*) filter (where kind like '%_action') as actions
    from events
    group by episode_id
)
select
    ep.episode_id,
    ep.source,
    a.actions,
    ep.num_events as events,
    left(replace(ep.task, chr(10), ' '), 80) as task
from actions a
join episodes ep using (episode_id)
order by a.actions desc, ep.episode_id
limit 20;
