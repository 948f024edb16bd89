"""The tools stage: crawled snapshot + evolved tools, validated and de-duplicated.
Its declaration: `worldsmith.tools.stage.STAGE`."""
