"""The world model the stages share: schemas, seeding, execution, bindings, grounding and the
tool runner (docs/architecture.md). Imports nothing, so a module can import one part alone."""
