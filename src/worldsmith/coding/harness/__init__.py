"""Scripts that run inside the sandbox (the folder is bound read-only and put on PYTHONPATH):
`ws_pytest` (a pytest plugin reporting every test's outcome) and `ws_tools` (the agent's file tools).
They import only the standard library (and pytest), never worldsmith."""
