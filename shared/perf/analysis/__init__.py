"""analysis.run and report.export: ranking and grading against thresholds, reports and their SVG charts."""
