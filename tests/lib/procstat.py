"""procstat -- /proc/PID/stat as the suites read it: the fields after the command (which may
hold spaces and parentheses, so they start after its last ')'), a process's children, and
whether it still runs."""
import os


def fields(pid):
    """proc(5)'s fields 3 on (state first, then ppid, ...); OSError when pid is gone."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def children(pid):
    """PIDs whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if int(fields(d)[1]) == pid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def running(pid):
    """pid exists and is neither a zombie nor dead."""
    try:
        return fields(pid)[0] not in "ZX"
    except (OSError, IndexError):
        return False
