"""The repos stage: repositories as worlds and their BugFixer tasks, made by execution in the sandbox.
Its declaration: `worldsmith.repos.stage.STAGE`."""
