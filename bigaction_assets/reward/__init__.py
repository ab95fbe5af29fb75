"""Reward data: human judgements of agent steps and proactive proposals, turned into training
sets (ProactiveAgent's rules, preference pairs, judge conversations). Pure: no Dagster."""
