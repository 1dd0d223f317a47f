"""Tasks (issue #14, in progress): so far the date ranges the task tools filter by, in the user's time zone."""
