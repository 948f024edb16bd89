"""The report stage: one HTML page per run with the yield funnel and plots.
Its declaration: `worldsmith.report.stage.STAGE`."""
