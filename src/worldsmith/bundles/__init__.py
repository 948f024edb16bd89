"""The bundles stage: a tool graph and the tool bundles sampled from it.
Its declaration: `worldsmith.bundles.stage.STAGE`."""
