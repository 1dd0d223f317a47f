"""Tasks (issue #14): a user's tasks, their date ranges in the user's time zone, two-step bulk delete."""
