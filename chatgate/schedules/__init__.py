"""Scheduled and proactive messages: jobs (cron, interval, one-shot) whose due runs become journal
entries that walk the message path like inbound messages and deliver to a fixed target."""
