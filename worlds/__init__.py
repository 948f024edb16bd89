"""The domain packs (docs/packs.md). A package only so that pytest imports worlds/conftest.py as
`worlds.conftest`: a second top-level `conftest` module would shadow tests/conftest.py, which tests import."""
