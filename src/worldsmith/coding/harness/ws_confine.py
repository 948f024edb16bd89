"""The `unshare` backend's narrowing of the file system (run inside `unshare --user --map-root-user --mount`):
the box's two folders are bound onto themselves, then every other mount is remounted read-only, then the
command runs (its exit status passed on; a signal's death as 128 + the signal).
`python ws_confine.py REPO TMP -- CMD...`. Standard library and util-linux's `mount` only."""

import os
import subprocess
import sys

KEEP_WRITABLE = ("/proc", "/sys", "/dev")  # kernel file systems: read-only remounts there are refused or break things
LOCKED = {"nosuid", "nodev", "noexec", "relatime", "noatime", "nodiratime", "strictatime"}


def mounts():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            yield fields[4].replace("\\040", " "), fields[5].split(",")


def main() -> None:
    args = sys.argv[1:]
    at = args.index("--")
    boxes, cmd = [os.path.realpath(p) for p in args[:at]], args[at + 1 :]
    for b in boxes:
        subprocess.run(["mount", "--bind", b, b], check=True)
    for point, options in sorted({(p, tuple(o)) for p, o in mounts()}, key=lambda m: len(m[0])):
        if point in boxes or any(point == k or point.startswith(k + "/") for k in KEEP_WRITABLE):
            continue
        kept = [o for o in options if o in LOCKED]
        subprocess.run(["mount", "-o", ",".join(["remount", "bind", "ro", *kept]), point], capture_output=True)
    os.chdir(os.getcwd())  # the working directory again by its path: the writable bind, not the folder under it
    pid = os.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    _, status = os.waitpid(pid, 0)
    # a command killed by a signal (the CPU limit's SIGXCPU) exits 128 + the signal, as a shell reports it:
    # unshare --kill-child fails to pass a signal death on ("sigprocmask unblock failed")
    os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
